// Servers come and go: clients that sent `protocol: 1` hear of it by async INFO, a
// restarted server rejoins the mesh, a real client reconnects to another server
// when its own stops, and lame duck mode points clients at the other servers.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect, Events, type NatsConnection } from 'nats';
import { freePort } from '../helpers/process.js';
import { RawClient } from '../helpers/raw.js';
import {
  closeAll,
  routeUrl,
  sleep,
  startNode,
  waitFor,
  waitMesh,
  waitRouteInterest,
  expectCrossing,
  type Node,
} from './helpers.js';

const PROTO1 = 'CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\nPING\r\n';

/** A raw protocol-1 client past its first PONG, which takes async INFO from now on. */
async function infoListener(n: Node): Promise<RawClient> {
  const raw = await RawClient.open(n.port);
  assert.equal(await raw.exchange(PROTO1), 'PONG\r\n');
  return raw;
}

/** Whether the text holds an INFO line. */
function hasInfo(text: string): boolean {
  return text.split('\r\n').some((l) => l.startsWith('INFO '));
}

/** The JSON of the last INFO line in the text (which must hold one). */
function lastInfo(text: string): Record<string, unknown> {
  const lines = text.split('\r\n').filter((l) => l.startsWith('INFO '));
  const last = lines[lines.length - 1];
  assert.ok(last !== undefined, `no INFO in ${JSON.stringify(text)}`);
  return JSON.parse(last.substring(5)) as Record<string, unknown>;
}

function clientUrl(n: Node): string {
  return `127.0.0.1:${n.port}`;
}

describe('servers joining and leaving', () => {
  it('tells protocol-1 clients the new connect_urls as servers join and leave', async () => {
    const a = await startNode();
    let b: Node | null = null;
    let c: Node | null = null;
    try {
      const first = await RawClient.open(a.port);
      // Alone, a clustered server names its cluster but has no URLs to give yet.
      assert.equal(first.infoJson().cluster, 'wbc');
      assert.equal(first.infoJson().connect_urls, undefined);
      first.close();
      const listener = await infoListener(a);
      const proto0 = await RawClient.open(a.port);
      proto0.send('CONNECT {"verbose":false,"pedantic":false}\r\nPING\r\n');

      b = await startNode({ routes: [routeUrl(a)] });
      await listener.waitFor((t) => t.includes('INFO '));
      let info = lastInfo(listener.take());
      assert.deepEqual(info.connect_urls, [clientUrl(a), clientUrl(b)]);
      assert.equal(info.cluster, 'wbc');
      assert.equal(typeof info.client_id, 'number');

      c = await startNode({ routes: [routeUrl(a)] });
      await waitMesh([a, b, c]);
      await listener.waitFor(hasInfo);
      info = lastInfo(listener.take());
      assert.deepEqual(info.connect_urls, [clientUrl(a), clientUrl(b), clientUrl(c)]);

      const bUrl = clientUrl(b);
      await b.close();
      b = null;
      await listener.waitFor(hasInfo);
      info = lastInfo(listener.take());
      assert.deepEqual(info.connect_urls, [clientUrl(a), clientUrl(c)]);
      assert.ok(!JSON.stringify(info.connect_urls).includes(bUrl));

      // A protocol-0 client never gets an async INFO.
      await sleep(100);
      assert.equal(proto0.take(), 'PONG\r\n');

      // A client that connected before a change and pings only now gets a fresh INFO.
      const late = await RawClient.open(a.port);
      await closeAll([c]);
      c = null;
      await waitFor('C gone', () => a.cluster.routes.size === 0);
      late.send(PROTO1);
      await late.waitFor((t) => t.includes('INFO '));
      assert.deepEqual(lastInfo(late.take()).connect_urls, [clientUrl(a)]);
      for (const r of [listener, proto0, late]) r.close();
    } finally {
      await closeAll([a, b, c]);
    }
  });

  it('hides the other servers with no_advertise', async () => {
    const a = await startNode({ noAdvertise: true });
    const b = await startNode({ routes: [routeUrl(a)] });
    try {
      await waitMesh([a, b]);
      const ra = await RawClient.open(a.port);
      const rb = await RawClient.open(b.port);
      // A tells its clients nothing of B, and B nothing of A (A sent no URLs).
      assert.equal(ra.infoJson().connect_urls, undefined);
      assert.equal(rb.infoJson().connect_urls, undefined);
      assert.equal(ra.infoJson().cluster, 'wbc');
      ra.close();
      rb.close();
    } finally {
      await closeAll([a, b]);
    }
  });

  it('rejoins a server that stopped and came back on its route port', async () => {
    const port = await freePort();
    let a: Node | null = await startNode({ port });
    const b = await startNode({ routes: [`nats-route://127.0.0.1:${port}`] });
    const c = await startNode({ routes: [`nats-route://127.0.0.1:${port}`] });
    try {
      await waitMesh([a, b, c]);
      await a.close();
      a = null;
      await waitFor(
        'B and C alone',
        () => b.cluster.routes.size === 1 && c.cluster.routes.size === 1,
      );
      a = await startNode({ port });
      // B and C dial their configured route again (every second, as the reference).
      await waitMesh([a, b, c], 0, 6000);
      await expectCrossing(a, c, 'back', 'again');
    } finally {
      await closeAll([a, b, c]);
    }
  });

  it('rejoins a restarted server that knows only a seed', async () => {
    const a = await startNode();
    const b = await startNode({ routes: [routeUrl(a)] });
    let c: Node | null = await startNode({ routes: [routeUrl(a)] });
    try {
      await waitMesh([a, b, c]);
      await c.close();
      await waitFor('C gone', () => a.cluster.routes.size === 1 && b.cluster.routes.size === 1);
      c = await startNode({ routes: [routeUrl(a)] });
      await waitMesh([a, b, c]);
      await expectCrossing(c, b, 'hello', 'from the new C');
    } finally {
      await closeAll([a, b, c]);
    }
  });
});

describe('a real client (nats v2) in a cluster', () => {
  it('reconnects to another server when its own stops', async () => {
    const a = await startNode();
    let b: Node | null = await startNode({ routes: [routeUrl(a)] });
    const c = await startNode({ routes: [routeUrl(a)] });
    let client: NatsConnection | null = null;
    let pub: NatsConnection | null = null;
    try {
      await waitMesh([a, b, c]);
      // Given only B, the client learns A and C from INFO.
      client = await connect({
        servers: b.url,
        reconnectTimeWait: 100,
        maxReconnectAttempts: 50,
      });
      const got: string[] = [];
      client.subscribe('failover', { callback: (_e, m) => got.push(m.string()) });
      await client.flush();
      const servers = client.info?.connect_urls ?? [];
      assert.deepEqual([...servers].sort(), [clientUrl(a), clientUrl(b), clientUrl(c)].sort());
      let reconnected = false;
      void (async () => {
        for await (const s of client.status()) {
          if (s.type === Events.Reconnect) reconnected = true;
        }
      })();
      const bUrl = clientUrl(b);
      await b.close();
      b = null;
      await waitFor('the reconnect', () => reconnected, 8000);
      assert.notEqual(client.getServer(), bUrl);
      pub = await connect({ servers: a.url });
      // The subscription moved with the client: its new server announces it.
      const target = [a, c].find((n) => clientUrl(n) === client?.getServer());
      if (target !== undefined && target !== a) await waitRouteInterest([a], 'failover');
      await waitFor(
        'delivery after the failover',
        () => {
          pub?.publish('failover', 'after');
          return got.length > 0;
        },
        5000,
      );
      assert.equal(got[0], 'after');
    } finally {
      await pub?.close();
      await client?.close();
      await closeAll([a, b, c]);
    }
  });
});

describe('lame duck mode in a cluster', () => {
  it('points clients at the other servers', async () => {
    const a = await startNode({}, { lameDuckDuration: 2000, lameDuckGracePeriod: 500 });
    const b = await startNode({ routes: [routeUrl(a)] });
    try {
      await waitMesh([a, b]);
      const la = await infoListener(a);
      const lb = await infoListener(b);
      const done = a.server.lameDuckShutdown();
      await la.waitFor((t) => t.includes('"ldm":true'));
      const info = lastInfo(la.take());
      assert.equal(info.ldm, true);
      assert.deepEqual(info.connect_urls, [clientUrl(b)]);
      // B hears it over the route and stops advertising A.
      await lb.waitFor(hasInfo);
      const bInfo = lastInfo(lb.take());
      assert.deepEqual(bInfo.connect_urls, [clientUrl(b)]);
      assert.equal(bInfo.ldm, undefined);
      await done;
      la.close();
      lb.close();
    } finally {
      await closeAll([a, b]);
    }
  });
});
