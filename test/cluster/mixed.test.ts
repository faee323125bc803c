// A cluster of wirebus nodes and reference servers (nats-server 2.9.10): the mesh
// forms by gossip across both kinds, messages, queue groups, request/reply and
// headers flow both ways, and interest appears and disappears on both sides.
// Skipped, with the reason, only where nats-server cannot be installed.

import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { connect, headers, type Msg, type NatsConnection } from 'nats';
import { Server } from '../../src/server/server.js';
import { attachSecurity } from '../../src/auth/security.js';
import { attachCluster } from '../../src/cluster/attach.js';
import type { Cluster } from '../../src/cluster/cluster.js';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLUSTER,
  closeAll,
  hasRouteInterest,
  referenceMissing,
  referenceRoutes,
  referenceRouteSubs,
  routeUrl,
  sleep,
  startNode,
  startReference,
  waitFor,
  waitForAsync,
  waitMesh,
  type Node,
  type ReferenceServer,
} from './helpers.js';

const missing = referenceMissing();

describe('a mixed cluster of wirebus and nats-server', { skip: missing ?? false }, () => {
  let w1: Node;
  let w2: Node;
  let r1: ReferenceServer;
  let r2: ReferenceServer;
  let conns: NatsConnection[] = [];
  let byName: Record<'w1' | 'w2' | 'r1' | 'r2', NatsConnection>;

  before(async () => {
    w1 = await startNode();
    // Two reference servers seeded with the wirebus node, and a wirebus node seeded
    // with a reference server: every server must learn the others by gossip.
    r1 = await startReference([routeUrl(w1)]);
    r2 = await startReference([routeUrl(w1)]);
    w2 = await startNode({ routes: [r1.routeUrl] });
    await waitMesh([w1, w2], 2, 10_000);
    await waitForAsync(
      'the reference servers in the mesh',
      async () => (await referenceRoutes(r1)) === 3 && (await referenceRoutes(r2)) === 3,
      10_000,
    );
    const [c1, c2, c3, c4] = await Promise.all([
      connect({ servers: w1.url }),
      connect({ servers: w2.url }),
      connect({ servers: r1.url }),
      connect({ servers: r2.url }),
    ]);
    byName = { w1: c1, w2: c2, r1: c3, r2: c4 };
    conns = [c1, c2, c3, c4];
  });

  after(async () => {
    await Promise.all(conns.map((c) => c.close()));
    await closeAll([w1, w2]);
    await Promise.all([r1.stop(), r2.stop()]);
  });

  const flushAll = (): Promise<unknown> => Promise.all(conns.map((c) => c.flush()));

  /** Waits until every wirebus node and every reference server sees interest from n others. */
  async function interestEverywhere(subject: string, count: number): Promise<void> {
    await waitForAsync(
      `interest on ${subject}`,
      async () => {
        for (const w of [w1, w2]) {
          const acc = w.server.accounts.get('$G')!;
          const routes = new Set(
            acc.sublist
              .match(subject)
              .psubs.filter((s) => s.route !== null)
              .map((s) => s.route),
          );
          if (routes.size < count) return false;
        }
        for (const r of [r1, r2]) {
          const subs = await referenceRouteSubs(r);
          let n = 0;
          for (const list of subs.values()) if (list.includes(subject)) n++;
          if (n < count) return false;
        }
        return true;
      },
      8000,
    );
  }

  it('forms one full mesh of four servers', async () => {
    assert.equal(w1.cluster.routes.size, 3);
    assert.equal(w2.cluster.routes.size, 3);
    assert.equal(await referenceRoutes(r1), 3);
    assert.equal(await referenceRoutes(r2), 3);
  });

  it('gives clients of either kind every server in connect_urls', () => {
    const urls = [w1.port, w2.port, r1.port, r2.port].map((p) => `127.0.0.1:${p}`).sort();
    for (const c of conns) {
      assert.deepEqual([...(c.info?.connect_urls ?? [])].sort(), urls);
      assert.equal(c.info?.cluster, CLUSTER);
    }
  });

  it('delivers every message once to every subscriber, both ways', async () => {
    const got: string[] = [];
    const subs = Object.entries(byName).map(([name, c]) =>
      c.subscribe('mix.*', { callback: (_e, m) => got.push(`${name}<${m.string()}`) }),
    );
    await flushAll();
    await interestEverywhere('mix.*', 3);
    for (const [name, c] of Object.entries(byName)) c.publish(`mix.${name}`, name);
    await flushAll();
    await waitFor('16 deliveries', () => got.length >= 16);
    await sleep(200);
    const expected: string[] = [];
    for (const to of Object.keys(byName)) {
      for (const from of Object.keys(byName)) expected.push(`${to}<${from}`);
    }
    assert.deepEqual(got.sort(), expected.sort());
    for (const s of subs) s.unsubscribe();
  });

  it('gives each queue message to one member, from either kind of server', async () => {
    const counts: Record<string, number> = { w1: 0, w2: 0, r1: 0, r2: 0 };
    const subs = Object.entries(byName).map(([name, c]) =>
      c.subscribe('mix.jobs', {
        queue: 'workers',
        callback: () => {
          counts[name]!++;
        },
      }),
    );
    await flushAll();
    await waitFor('queue interest at the wirebus nodes', () =>
      [w1, w2].every((w) => {
        const g = w.server.accounts
          .get('$G')!
          .sublist.match('mix.jobs')
          .qsubs.find((q) => q[0]?.queue === 'workers');
        return g !== undefined && g.filter((s) => s.route !== null).length === 3;
      }),
    );
    await sleep(200);
    const n = 800;
    for (let i = 0; i < n; i++) (i % 2 === 0 ? byName.w1 : byName.r1).publish('mix.jobs', 'x');
    await flushAll();
    await waitFor('every job', () => Object.values(counts).reduce((x, y) => x + y) >= n, 8000);
    await sleep(200);
    assert.equal(
      Object.values(counts).reduce((x, y) => x + y),
      n,
    );
    for (const k of Object.keys(counts)) assert.ok(counts[k]! > n / 20, JSON.stringify(counts));
    for (const s of subs) s.unsubscribe();
  });

  it('takes the queue weight a reference server announces', async () => {
    const subs = [1, 2, 3].map(() => byName.r2.subscribe('mix.weighted', { queue: 'g' }));
    await byName.r2.flush();
    await waitFor('weight 3 from the reference', () => {
      const g = w1.server.accounts
        .get('$G')!
        .sublist.match('mix.weighted')
        .qsubs.find((q) => q[0]?.queue === 'g');
      return g?.some((s) => s.route !== null && s.weight === 3) === true;
    });
    for (const s of subs) s.unsubscribe();
  });

  it('shows interest appearing and disappearing on both sides', async () => {
    // A wirebus subscriber, as the reference sees it.
    const s1 = byName.w2.subscribe('mix.appear');
    await byName.w2.flush();
    await waitForAsync('the reference to see it', async () => {
      const subs = await referenceRouteSubs(r1);
      return subs.get(w2.server.id)?.includes('mix.appear') === true;
    });
    s1.unsubscribe();
    await byName.w2.flush();
    await waitForAsync('the reference to drop it', async () => {
      const subs = await referenceRouteSubs(r1);
      return subs.get(w2.server.id)?.includes('mix.appear') === false;
    });
    // A reference subscriber, as wirebus sees it.
    const s2 = byName.r1.subscribe('mix.appear2');
    await byName.r1.flush();
    await waitFor('wirebus to see it', () => hasRouteInterest(w1, 'mix.appear2'));
    s2.unsubscribe();
    await byName.r1.flush();
    await waitFor('wirebus to drop it', () => !hasRouteInterest(w1, 'mix.appear2'));
  });

  it('answers requests across kinds, both ways', async () => {
    const svc1 = byName.r2.subscribe('mix.svc.ref', {
      callback: (_e, m) => {
        m.respond(`ref:${m.string()}`);
      },
    });
    const svc2 = byName.w2.subscribe('mix.svc.wb', {
      callback: (_e, m) => {
        m.respond(`wb:${m.string()}`);
      },
    });
    await flushAll();
    await waitFor('the services', () => hasRouteInterest(w1, 'mix.svc.ref'));
    await waitForAsync('the reference to see the wirebus service', async () => {
      const subs = await referenceRouteSubs(r1);
      return subs.get(w2.server.id)?.includes('mix.svc.wb') === true;
    });
    const a = await byName.w1.request('mix.svc.ref', 'q1', { timeout: 3000 });
    assert.equal(a.string(), 'ref:q1');
    const b = await byName.r1.request('mix.svc.wb', 'q2', { timeout: 3000 });
    assert.equal(b.string(), 'wb:q2');
    svc1.unsubscribe();
    svc2.unsubscribe();
  });

  it('carries headers both ways', async () => {
    const seen: Msg[] = [];
    const subs = [
      byName.r2.subscribe('mix.hdr', { callback: (_e, m) => seen.push(m) }),
      byName.w2.subscribe('mix.hdr', { callback: (_e, m) => seen.push(m) }),
    ];
    await flushAll();
    await interestEverywhere('mix.hdr', 1);
    const h1 = headers();
    h1.set('X-From', 'wirebus');
    byName.w1.publish('mix.hdr', 'a', { headers: h1 });
    const h2 = headers();
    h2.set('X-From', 'reference');
    byName.r1.publish('mix.hdr', 'b', { headers: h2 });
    await flushAll();
    await waitFor('four messages', () => seen.length >= 4);
    const from = seen.map((m) => `${m.headers?.get('X-From') ?? '?'}:${m.string()}`).sort();
    assert.deepEqual(from, ['reference:b', 'reference:b', 'wirebus:a', 'wirebus:a']);
    for (const s of subs) s.unsubscribe();
  });
});

describe('route credentials in a mixed cluster', { skip: missing ?? false }, () => {
  it('authenticates routes both ways', async () => {
    const auth = { user: 'ruser', password: 'pw' };
    const w = await startNode({ ...auth });
    let ref: ReferenceServer | null = null;
    let w2: Node | null = null;
    try {
      // The reference dials wirebus with credentials, then wirebus dials the reference.
      ref = await startReference([`nats-route://ruser:pw@127.0.0.1:${w.cluster.port}`], [], auth);
      await waitFor('the reference at wirebus', () => w.cluster.routes.size === 1, 8000);
      w2 = await startNode({
        ...auth,
        routes: [`nats-route://ruser:pw@127.0.0.1:${ref.clusterPort}`],
      });
      await waitMesh([w, w2], 1, 8000);
      assert.equal(await referenceRoutes(ref), 2);
      // Without them, no route.
      const bad = await startNode({
        routes: [`nats-route://ruser:nope@127.0.0.1:${ref.clusterPort}`],
      });
      await sleep(500);
      assert.equal(bad.cluster.routes.size, 0);
      await bad.close();
    } finally {
      await closeAll([w, w2]);
      await ref?.stop();
    }
  });
});

describe('accounts across a mixed cluster', { skip: missing ?? false }, () => {
  let dir = '';
  let ref: ReferenceServer;
  let wb: Server;
  let cluster: Cluster;

  before(async () => {
    wb = new Server({ host: '127.0.0.1', port: 0, quiet: true });
    attachSecurity(wb, {
      accounts: {
        A: {
          users: [{ user: 'a', password: 'a' }],
          exports: [
            { kind: 'stream', subject: 'feed.>' },
            { kind: 'stream', subject: 'alerts.>' },
            { kind: 'stream', subject: 'news.>' },
            { kind: 'service', subject: 'svc.>' },
          ],
        },
        B: {
          users: [{ user: 'b', password: 'b' }],
          imports: [
            { kind: 'stream', account: 'A', subject: 'feed.>', prefix: 'fromA' },
            { kind: 'stream', account: 'A', subject: 'alerts.fire', to: 'fire' },
            { kind: 'stream', account: 'A', subject: 'news.*', to: 'headlines.*' },
            { kind: 'service', account: 'A', subject: 'svc.time', to: 'time' },
          ],
        },
      },
    });
    cluster = attachCluster(wb, { name: CLUSTER, host: '127.0.0.1', port: 0 });
    await wb.start();
    await cluster.start();
    dir = mkdtempSync(join(tmpdir(), 'wbc-'));
    const conf = join(dir, 'ref.conf');
    writeFileSync(
      conf,
      `accounts {
        A: { users: [ {user: a, password: a} ],
             exports: [ {stream: "feed.>"}, {stream: "alerts.>"}, {stream: "news.>"}, {service: "svc.>"} ] }
        B: { users: [ {user: b, password: b} ],
             imports: [ {stream: {account: A, subject: "feed.>"}, prefix: fromA}
                        {stream: {account: A, subject: "alerts.fire"}, to: fire}
                        {stream: {account: A, subject: "news.*"}, to: "headlines.*"}
                        {service: {account: A, subject: "svc.time"}, to: time} ] }
      }
      cluster { routes: [ nats-route://127.0.0.1:${cluster.port} ] }\n`,
    );
    ref = await startReference([], ['-c', conf]);
    await waitFor('the route', () => cluster.routes.size === 1, 8000);
  });

  after(async () => {
    await wb.close();
    await ref.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  /** Users a and b on the reference, then on wirebus. */
  async function users(): Promise<
    [NatsConnection, NatsConnection, NatsConnection, NatsConnection]
  > {
    const wbUrl = `127.0.0.1:${wb.port}`;
    return Promise.all([
      connect({ servers: ref.url, user: 'a', pass: 'a' }),
      connect({ servers: ref.url, user: 'b', pass: 'b' }),
      connect({ servers: wbUrl, user: 'a', pass: 'a' }),
      connect({ servers: wbUrl, user: 'b', pass: 'b' }),
    ]);
  }

  it('keeps each account to itself on both kinds of server', async () => {
    const [refA, refB, wbA, wbB] = await users();
    try {
      const got: string[] = [];
      refA.subscribe('acct.x', { callback: (_e, m) => got.push(`refA:${m.string()}`) });
      refB.subscribe('acct.x', { callback: (_e, m) => got.push(`refB:${m.string()}`) });
      wbA.subscribe('acct.y', { callback: (_e, m) => got.push(`wbA:${m.string()}`) });
      wbB.subscribe('acct.y', { callback: (_e, m) => got.push(`wbB:${m.string()}`) });
      await Promise.all([refA.flush(), refB.flush(), wbA.flush(), wbB.flush()]);
      const accA = wb.accounts.get('A')!;
      const accB = wb.accounts.get('B')!;
      await waitFor(
        'interest per account',
        () =>
          accA.sublist.match('acct.x').psubs.some((s) => s.route !== null) &&
          accB.sublist.match('acct.x').psubs.some((s) => s.route !== null),
      );
      await waitForAsync('the reference to see wirebus interest', async () => {
        const subs = await referenceRouteSubs(ref);
        return (subs.get(wb.id)?.filter((s) => s === 'acct.y').length ?? 0) === 2;
      });
      wbA.publish('acct.x', 'from-wbA');
      refB.publish('acct.y', 'from-refB');
      await Promise.all([wbA.flush(), refB.flush()]);
      await waitFor('two deliveries', () => got.length >= 2);
      await sleep(200);
      assert.deepEqual(got.sort(), ['refA:from-wbA', 'wbB:from-refB']);
    } finally {
      await Promise.all([refA.close(), refB.close(), wbA.close(), wbB.close()]);
    }
  });

  it('carries service imports between the kinds, both ways', async () => {
    const [refA, refB, wbA, wbB] = await users();
    try {
      // A wirebus importer and a reference exporter: the request crosses in the
      // exporting account, with the importer's `_R_.` reply, and the response back.
      const svc1 = refA.subscribe('svc.time', { callback: (_e, m) => m.respond('ref-time') });
      await refA.flush();
      await waitFor('the reference service at wirebus', () =>
        wb.accounts
          .get('A')!
          .sublist.match('svc.time')
          .psubs.some((s) => s.route !== null),
      );
      const r1 = await wbB.request('time', '', { timeout: 3000 });
      assert.equal(r1.string(), 'ref-time');
      svc1.unsubscribe();
      await refA.flush();
      await waitFor('the reference service gone', () =>
        wb.accounts
          .get('A')!
          .sublist.match('svc.time')
          .psubs.every((s) => s.route === null),
      );
      // And the other way round.
      wbA.subscribe('svc.time', { callback: (_e, m) => m.respond('wb-time') });
      await wbA.flush();
      await waitForAsync('the wirebus service at the reference', async () => {
        const subs = await referenceRouteSubs(ref);
        return subs.get(wb.id)?.includes('svc.time') === true;
      });
      const r2 = await refB.request('time', '', { timeout: 3000 });
      assert.equal(r2.string(), 'wb-time');
    } finally {
      await Promise.all([refA.close(), refB.close(), wbA.close(), wbB.close()]);
    }
  });
  it('delivers imported streams once, whichever kind of server publishes or subscribes', async () => {
    const [refA, refB, wbA, wbB] = await users();
    const more = await Promise.all([
      connect({ servers: ref.url, user: 'b', pass: 'b' }),
      connect({ servers: `127.0.0.1:${wb.port}`, user: 'b', pass: 'b' }),
    ]);
    try {
      const got: string[] = [];
      const subjects = ['fromA.feed.>', 'fire', 'headlines.*', '>'];
      for (const [name, c] of [
        ['ref', refB],
        ['wb', wbB],
      ] as const) {
        for (const s of subjects) {
          c.subscribe(s, {
            callback: (_e, m) => got.push(`${name} ${s} ${m.subject} ${m.string()}`),
          });
        }
      }
      // One queue group of the importing account across both kinds of server.
      for (const [name, c] of [
        ['ref', more[0]],
        ['wb', more[1]],
      ] as const) {
        c.subscribe('fromA.feed.>', {
          queue: 'q',
          callback: (_e, m) => got.push(`q ${m.subject} ${m.string()} (${name})`),
        });
      }
      await Promise.all([refB, wbB, ...more].map((c) => c.flush()));
      // Interest crosses in the exporting account, for each import the subscribers use.
      const accA = wb.accounts.get('A')!;
      await waitFor('the reference subscribers at wirebus', () =>
        ['feed.x', 'alerts.fire', 'news.y'].every((s) =>
          accA.sublist.match(s).psubs.some((sub) => sub.route !== null),
        ),
      );
      await waitForAsync('the wirebus subscribers at the reference', async () => {
        const subs = (await referenceRouteSubs(ref)).get(wb.id) ?? [];
        return ['feed.>', 'alerts.fire', 'news.*'].every((s) => subs.includes(s));
      });
      const published: string[] = [];
      for (const [name, c] of [
        ['ref', refA],
        ['wb', wbA],
      ] as const) {
        for (const subject of ['feed.x', 'alerts.fire', 'news.y', 'alerts.other']) {
          c.publish(subject, name);
          published.push(`${subject} ${name}`);
        }
        await c.flush();
      }
      const expected: string[] = [];
      for (const from of ['ref', 'wb']) {
        for (const sub of ['ref', 'wb']) {
          expected.push(
            `${sub} fromA.feed.> fromA.feed.x ${from}`,
            `${sub} > fromA.feed.x ${from}`,
            `${sub} fire fire ${from}`,
            `${sub} > fire ${from}`,
            `${sub} headlines.* headlines.y ${from}`,
            `${sub} > headlines.y ${from}`,
          );
        }
      }
      await waitFor('every delivery', () => got.length >= expected.length + 2, 5000);
      await sleep(300);
      const queued = got.filter((g) => g.startsWith('q '));
      assert.deepEqual(
        queued.map((g) => g.replace(/ \((ref|wb)\)$/, '')).sort(),
        ['q fromA.feed.x ref', 'q fromA.feed.x wb'],
        'one member of the group each time',
      );
      assert.deepEqual(got.filter((g) => !g.startsWith('q ')).sort(), expected.sort());
    } finally {
      await Promise.all([refA, refB, wbA, wbB, ...more].map((c) => c.close()));
    }
  });
  it('announces stream import interest where the reference does', async () => {
    const [refB, wbB] = await Promise.all([
      connect({ servers: ref.url, user: 'b', pass: 'b' }),
      connect({ servers: `127.0.0.1:${wb.port}`, user: 'b', pass: 'b' }),
    ]);
    try {
      // Subscriptions on the import's subject, narrower, wider, overlapping it, and
      // covering several imports; the shadows' subjects come from each import.
      const subjects = [
        'fromA.feed.x',
        'fromA.feed.*',
        'fromA.>',
        'fromA.*.x',
        '*.feed.>',
        '*',
        'headlines.y',
        'headlines.>',
        'none.of.them',
      ];
      for (const c of [refB, wbB]) {
        for (const subject of subjects) c.subscribe(subject);
        c.subscribe('fromA.feed.x', { queue: 'q2' });
      }
      await Promise.all([refB.flush(), wbB.flush()]);
      // The reference's /routez leaves the account out of a route's subscriptions:
      // the two accounts' subjects here do not overlap.
      const fromRef = (): string[] => {
        const out: string[] = [];
        for (const name of ['A', 'B']) {
          wb.accounts.get(name)!.sublist.forEach((sub) => {
            if (sub.route === null || sub.subject.startsWith('_R_.')) return;
            out.push(`${sub.subject}${sub.queue === null ? '' : ' ' + sub.queue}`);
          });
        }
        return out.sort();
      };
      const fromWb = async (): Promise<string[]> => {
        const r = await ref.monitor('/routez?subs=detail');
        const routes = (r.routes ?? []) as Record<string, unknown>[];
        const route = routes.find((x) => x.remote_id === wb.id);
        const list = (route?.subscriptions_list_detail ?? []) as Record<string, string>[];
        return list
          .filter((d) => !d.subject!.startsWith('_R_.'))
          .map((d) => `${d.subject}${d.qgroup === undefined ? '' : ' ' + d.qgroup}`)
          .sort();
      };
      let last: string[] = [];
      await waitForAsync('the same interest both ways', async () => {
        last = await fromWb();
        return last.length > subjects.length && isDeepStrictEqual(last, fromRef());
      }).catch(() => undefined); // the assertion below shows the difference
      assert.deepEqual(last, fromRef());
      // The exporter's subjects, as the reference places them.
      const own = new Set([...subjects, 'fromA.feed.x q2']);
      assert.deepEqual(
        last.filter((l) => !own.has(l)),
        ['alerts.fire', 'feed.*', 'feed.>', 'feed.x', 'feed.x q2', 'news.*', 'news.y'],
      );
    } finally {
      await Promise.all([refB.close(), wbB.close()]);
    }
  });
});
