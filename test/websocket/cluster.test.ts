// WebSocket URLs in a cluster: each server announces its own in the route INFO
// (ws_connect_urls), and a WebSocket client's INFO connect_urls lists the WebSocket
// URLs of the cluster, never the client ports, as the reference gossips them.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { RunningServer } from '../../src/index.js';
import {
  closeAll,
  referenceMissing,
  referenceRoutes,
  routeUrl,
  startNode,
  startReference,
  waitFor,
  waitForAsync,
  waitMesh,
} from '../cluster/helpers.js';
import { freePort } from '../helpers/process.js';
import { tempDir } from '../auth/helpers.js';
import { RawWs } from './raw-ws.js';

const nodes: RunningServer[] = [];
after(async () => {
  await closeAll(nodes);
});

const ws = { host: '127.0.0.1', port: 0, noTls: true };

/** INFO lines received so far on a protocol-1 WebSocket client, as JSON. */
async function infoConnectUrls(c: RawWs, want: string): Promise<string[]> {
  const text = await c.waitText(want, 8000);
  const infos = [...text.matchAll(/INFO (\{.*?\}) \r\n/g)].map(
    (m) => JSON.parse(m[1]!) as { connect_urls?: string[] },
  );
  return infos.at(-1)?.connect_urls ?? [];
}

describe('WebSocket URLs in a cluster', () => {
  it("a WebSocket client learns the other nodes' WebSocket URLs, not their client ports", async () => {
    const a = await startNode({}, { websocket: ws });
    nodes.push(a);
    const c = await RawWs.open(a.websocket!.port);
    await c.waitText('\r\n');
    c.sendText('CONNECT {"verbose":false,"protocol":1}\r\nPING\r\n');
    await c.waitText('PONG\r\n');
    const b = await startNode({ routes: [routeUrl(a)] }, { websocket: ws });
    nodes.push(b);
    await waitMesh([a, b]);
    const urls = await infoConnectUrls(c, `127.0.0.1:${b.websocket!.port}`);
    assert.deepEqual(urls, [`127.0.0.1:${a.websocket!.port}`, `127.0.0.1:${b.websocket!.port}`]);
    assert.ok(!urls.includes(`127.0.0.1:${b.port}`));
    c.close();
  });

  it(
    'gossips WebSocket URLs both ways with nats-server',
    { skip: referenceMissing() ?? false },
    async () => {
      const a = await startNode({}, { websocket: ws });
      nodes.push(a);
      const refWs = await freePort();
      const conf = join(tempDir(), 'ref-ws.conf');
      writeFileSync(conf, `websocket { host: 127.0.0.1, port: ${refWs}, no_tls: true }\n`);
      const ref = await startReference([routeUrl(a)], ['-c', conf]);
      try {
        // Each side's WebSocket URLs travel in its route INFO: wait for the route.
        await waitForAsync(
          'the route at the reference',
          async () => (await referenceRoutes(ref)) === 1,
        );
        await waitFor('the route at wirebus', () => a.cluster.routes.size === 1);
        // Ours learns the reference's: the route is up, so the first INFO has it.
        const c = await RawWs.open(a.websocket!.port);
        const seen = await c.waitText('\r\n');
        assert.match(seen, new RegExp(`"connect_urls":\\[[^\\]]*"127\\.0\\.0\\.1:${refWs}"`));
        assert.ok(!seen.includes(`:${ref.port}"`), 'no client port of the reference');
        // The reference's WebSocket clients learn ours (from our route INFO's ws_connect_urls).
        const r = await RawWs.open(refWs);
        const info = await r.waitText('\r\n');
        assert.match(
          info,
          new RegExp(`"connect_urls":\\[[^\\]]*"127\\.0\\.0\\.1:${a.websocket!.port}"`),
        );
        c.close();
        r.close();
      } finally {
        await ref.stop();
      }
    },
  );
});
