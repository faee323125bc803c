// Stream templates on a file store survive a restart as nats-server's do: the template
// comes back with the streams it made on its list, and keeps making streams.

import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { freePort, startWirebus } from '../helpers/process.js';

async function ask(
  nc: NatsConnection,
  subject: string,
  body = '',
): Promise<Record<string, unknown>> {
  const m = await nc.request(subject, new TextEncoder().encode(body), { timeout: 2000 });
  return JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown>;
}

test('a file stream template and its streams come back after a restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-tmpl-'));
  const port = await freePort();
  let p = await startWirebus(port, ['-js', '-sd', dir]);
  try {
    let nc = await connect({ servers: p.url });
    const created = await ask(
      nc,
      '$JS.API.STREAM.TEMPLATE.CREATE.T',
      JSON.stringify({ name: 'T', max_streams: 3, config: { subjects: ['t.*'] } }),
    );
    assert.equal(created.error, undefined);
    assert.deepEqual(await ask(nc, 't.a', 'one'), { stream: 't_a', seq: 1 });
    await nc.close();
    await p.stop();
    p = await startWirebus(port, ['-js', '-sd', dir]);
    nc = await connect({ servers: p.url });
    const info = await ask(nc, '$JS.API.STREAM.TEMPLATE.INFO.T');
    assert.deepEqual(info.streams, ['t_a']);
    assert.equal((info.config as { max_streams: number }).max_streams, 3);
    assert.deepEqual(await ask(nc, 't.a', 'two'), { stream: 't_a', seq: 2 });
    assert.deepEqual(await ask(nc, 't.b', 'three'), { stream: 't_b', seq: 1 });
    const stream = await ask(nc, '$JS.API.STREAM.INFO.t_b');
    assert.equal((stream.config as { template_owner: string }).template_owner, 'T');
    assert.deepEqual(await ask(nc, '$JS.API.STREAM.TEMPLATE.DELETE.T'), {
      type: 'io.nats.jetstream.api.v1.stream_template_delete_response',
      success: true,
    });
    const names = await ask(nc, '$JS.API.STREAM.NAMES');
    assert.equal(names.total, 0);
    await nc.close();
  } finally {
    await p.stop();
  }
});
