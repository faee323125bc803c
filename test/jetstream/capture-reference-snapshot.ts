// Records a snapshot taken by the reference as test/jetstream/fixtures/reference-snapshot.json:
// the restore request's config, the snapshot's bytes (base64), and what the reference
// answers about the stream, its messages and its consumer at that moment. Not a test: run
// it by hand after a build, with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference-snapshot.js

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, headers } from 'nats';
import { FIXTURES as fixtures } from './api-client.js';
import { request, snapshot } from './snapshot-scenario.js';

async function main(): Promise<void> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-capture-'));
  const ref = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, 800));
  const nc = await connect({ servers: `127.0.0.1:${port}` });
  const ask = async (subject: string, body: unknown): Promise<unknown> => {
    const m = await request(nc, subject, body);
    return m === null ? null : (JSON.parse(new TextDecoder().decode(m.data)) as unknown);
  };
  try {
    await ask('$JS.API.STREAM.CREATE.REF', { name: 'REF', subjects: ['ref.*'], storage: 'file' });
    const h = headers();
    h.set('X-Ref', 'yes');
    for (let i = 1; i <= 20; i++)
      await request(nc, `ref.${i % 4}`, `v${i}`, i % 5 === 0 ? h : undefined);
    await ask('$JS.API.STREAM.PURGE.REF', { seq: 4 });
    await ask('$JS.API.STREAM.MSG.DELETE.REF', { seq: 10 });
    await ask('$JS.API.STREAM.MSG.DELETE.REF', { seq: 11, no_erase: true });
    await ask('$JS.API.CONSUMER.DURABLE.CREATE.REF.c', {
      stream_name: 'REF',
      config: { durable_name: 'c', ack_policy: 'explicit' },
    });
    for (let i = 0; i < 4; i++) {
      const m = await request(nc, '$JS.API.CONSUMER.MSG.NEXT.REF.c', { batch: 1, no_wait: true });
      if (i !== 1 && m?.reply !== undefined) nc.publish(m.reply, new TextEncoder().encode('+ACK'));
    }
    await nc.flush();
    const snap = await snapshot(nc, 'REF', {});
    const messages: unknown[] = [];
    for (let seq = 1; seq <= 20; seq++)
      messages.push(await ask('$JS.API.STREAM.MSG.GET.REF', { seq }));
    const out = {
      recorded_from: 'nats-server 2.9.10 -js',
      config: snap.config,
      state: snap.state,
      snapshot: snap.bytes.toString('base64'),
      stream_info: await ask('$JS.API.STREAM.INFO.REF', null),
      consumer_info: await ask('$JS.API.CONSUMER.INFO.REF.c', null),
      messages,
    };
    writeFileSync(join(fixtures, 'reference-snapshot.json'), JSON.stringify(out, null, 2) + '\n');
    process.stdout.write(`recorded a snapshot of ${snap.bytes.length} bytes\n`);
  } finally {
    await nc.close();
    ref.kill();
  }
}

await main();
