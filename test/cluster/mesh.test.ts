// Three wirebus nodes on loopback, joined by one seed route each: the mesh forms by
// gossip, and messages, wildcards, queue groups, request/reply and headers cross it
// with the single-server semantics (each subscriber once, one queue member, order
// kept per publisher).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, headers, type Msg, type NatsConnection } from 'nats';
import {
  closeAll,
  hasRouteInterest,
  routeInterestCount,
  routeUrl,
  sleep,
  startNode,
  waitFor,
  waitMesh,
  waitRouteInterest,
  type Node,
} from './helpers.js';

describe('three wirebus nodes', () => {
  let a: Node;
  let b: Node;
  let c: Node;
  let na: NatsConnection;
  let nb: NatsConnection;
  let nc: NatsConnection;

  before(async () => {
    a = await startNode();
    // B and C know only A: they find each other by gossip.
    b = await startNode({ routes: [routeUrl(a)] });
    c = await startNode({ routes: [routeUrl(a)] });
    await waitMesh([a, b, c]);
    na = await connect({ servers: a.url });
    nb = await connect({ servers: b.url });
    nc = await connect({ servers: c.url });
  });

  after(async () => {
    await Promise.all([na.close(), nb.close(), nc.close()]);
    await closeAll([a, b, c]);
  });

  it('forms a full mesh from one seed route', () => {
    for (const n of [a, b, c]) {
      assert.equal(n.cluster.routes.size, 2);
      const others = [a, b, c].filter((o) => o !== n).map((o) => o.server.id);
      assert.deepEqual([...n.cluster.remotes.keys()].sort(), others.sort());
    }
    // B and C met through A's gossip: one of them dialled the other.
    const bc = [...b.cluster.routes.values()].find((r) => r.remoteId === c.server.id);
    assert.ok(bc !== undefined);
    assert.equal(bc.explicit, false);
  });

  it('delivers across nodes, wildcards included, once per subscription', async () => {
    const got: string[] = [];
    const record = (tag: string) => (_err: unknown, m: Msg) => {
      got.push(`${tag}:${m.subject}:${m.string()}`);
    };
    const subs = [
      nb.subscribe('orders.*', { callback: record('b*') }),
      nc.subscribe('orders.>', { callback: record('c>') }),
      nc.subscribe('orders.*', { callback: record('c*') }),
      na.subscribe('orders.new', { callback: record('a') }),
    ];
    await Promise.all([na.flush(), nb.flush(), nc.flush()]);
    await waitFor(
      'interest from B and C at A, from C at B',
      () => routeInterestCount(a, 'orders.new') === 2 && routeInterestCount(b, 'orders.x.y') === 1,
    );
    const toC = [...a.cluster.routes.values()].find((r) => r.remoteId === c.server.id)!;
    const before = toC.client.outMsgs;
    na.publish('orders.new', '1');
    nb.publish('orders.x.y', '2');
    await Promise.all([na.flush(), nb.flush()]);
    await waitFor('five deliveries', () => got.length >= 5);
    await sleep(100);
    assert.deepEqual(
      got.sort(),
      [
        'a:orders.new:1',
        'b*:orders.new:1',
        'c*:orders.new:1',
        'c>:orders.new:1',
        'c>:orders.x.y:2',
      ].sort(),
    );
    // Two of C's subscriptions matched, yet the message crossed to C once.
    assert.equal(toC.client.outMsgs - before, 1);
    for (const s of subs) s.unsubscribe();
  });

  it('gives each queue message to exactly one member cluster-wide', async () => {
    const counts = { a: 0, b: 0, c: 0 };
    const subs = [
      na.subscribe('jobs', { queue: 'workers', callback: () => counts.a++ }),
      nb.subscribe('jobs', { queue: 'workers', callback: () => counts.b++ }),
      nc.subscribe('jobs', { queue: 'workers', callback: () => counts.c++ }),
    ];
    await Promise.all([na.flush(), nb.flush(), nc.flush()]);
    await waitRouteInterest([a, b, c], 'jobs', 'workers');
    const n = 600;
    for (let i = 0; i < n; i++) (i % 2 === 0 ? na : nb).publish('jobs', String(i));
    await Promise.all([na.flush(), nb.flush()]);
    await waitFor('every job', () => counts.a + counts.b + counts.c >= n);
    await sleep(100);
    assert.equal(counts.a + counts.b + counts.c, n);
    // Spread by members over the cluster, as the reference (weights 1 each).
    for (const k of ['a', 'b', 'c'] as const) assert.ok(counts[k] > n / 10, JSON.stringify(counts));
    for (const s of subs) s.unsubscribe();
  });

  it('weighs a remote queue group by its member count', async () => {
    const counts = { a: 0, c: 0 };
    const subs = [na.subscribe('heavy', { queue: 'g', callback: () => counts.a++ })];
    for (let i = 0; i < 3; i++)
      subs.push(nc.subscribe('heavy', { queue: 'g', callback: () => counts.c++ }));
    await Promise.all([na.flush(), nc.flush()]);
    await waitFor('weight 3 at A', () => {
      const acc = a.server.accounts.get('$G')!;
      return acc.sublist
        .match('heavy')
        .qsubs.some((g) => g.some((s) => s.route !== null && s.weight === 3));
    });
    const n = 800;
    for (let i = 0; i < n; i++) na.publish('heavy', 'x');
    await na.flush();
    await waitFor('every message', () => counts.a + counts.c >= n);
    assert.equal(counts.a + counts.c, n);
    // One local member against three remote ones: about a quarter stays local.
    assert.ok(counts.a > n * 0.12 && counts.a < n * 0.4, JSON.stringify(counts));
    for (const s of subs) s.unsubscribe();
  });

  it('answers requests across nodes', async () => {
    const sub = nc.subscribe('svc.echo', {
      callback: (_err, m) => {
        m.respond(`echo:${m.string()}`);
      },
    });
    await nc.flush();
    await waitRouteInterest([a], 'svc.echo');
    const reply = await na.request('svc.echo', 'hi', { timeout: 2000 });
    assert.equal(reply.string(), 'echo:hi');
    sub.unsubscribe();
  });

  it('carries headers over routes', async () => {
    let seen: Msg | null = null;
    const sub = nc.subscribe('hdr.test', {
      callback: (_err, m) => {
        seen = m;
      },
    });
    await nc.flush();
    await waitRouteInterest([b], 'hdr.test');
    const h = headers();
    h.set('X-Trace', 'abc');
    nb.publish('hdr.test', 'body', { headers: h });
    await nb.flush();
    await waitFor('the message', () => seen !== null);
    const m = seen as unknown as Msg;
    assert.equal(m.headers?.get('X-Trace'), 'abc');
    assert.equal(m.string(), 'body');
    sub.unsubscribe();
  });

  it('carries large payloads whole', async () => {
    const got: Uint8Array[] = [];
    const sub = nc.subscribe('big', { callback: (_err, m) => got.push(m.data) });
    await nc.flush();
    await waitRouteInterest([a], 'big');
    const sizes = [0, 1, 16 * 1024 - 1, 16 * 1024, 100_000, 1024 * 1024];
    for (const size of sizes) {
      const data = new Uint8Array(size);
      for (let i = 0; i < size; i++) data[i] = (i * 7 + size) & 0xff;
      na.publish('big', data);
    }
    await na.flush();
    await waitFor('every payload', () => got.length >= sizes.length);
    assert.deepEqual(
      got.map((d) => d.length),
      sizes,
    );
    for (const d of got) {
      for (let i = 0; i < d.length; i += 997) assert.equal(d[i], (i * 7 + d.length) & 0xff);
    }
    sub.unsubscribe();
  });

  it('keeps order per publisher and subscriber', async () => {
    const got: number[] = [];
    const sub = nc.subscribe('seq', {
      callback: (_err, m) => {
        got.push(Number(m.string()));
      },
    });
    await nc.flush();
    await waitRouteInterest([a], 'seq');
    const n = 2000;
    for (let i = 0; i < n; i++) na.publish('seq', String(i));
    await na.flush();
    await waitFor('every message', () => got.length >= n);
    assert.deepEqual(
      got,
      Array.from({ length: n }, (_, i) => i),
    );
    sub.unsubscribe();
  });

  it('withdraws interest when the last subscriber leaves', async () => {
    const s1 = nc.subscribe('bye');
    const s2 = nc.subscribe('bye');
    await nc.flush();
    await waitRouteInterest([a, b], 'bye');
    s1.unsubscribe();
    await nc.flush();
    await sleep(100);
    assert.ok(hasRouteInterest(a, 'bye'), 'one subscriber is left');
    s2.unsubscribe();
    await nc.flush();
    await waitFor(
      'interest gone at A and B',
      () => !hasRouteInterest(a, 'bye') && !hasRouteInterest(b, 'bye'),
    );
  });
});
