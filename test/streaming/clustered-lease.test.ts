// The Leader lease on a real JetStream key-value bucket (one `nats-server -js`):
// exactly one Leader; a Leader cut off from JetStream is suspended before anyone else
// is elected (polled every 5 ms: never two Leaders) and steps down after its limit; a
// Leader whose JetStream is away for a while and back is suspended, then resumes,
// nobody else elected; a Leader that stops releases the lease and another node takes
// it. On three nats-server nodes: two writers racing against the same revision, one
// wins (kv.update() lets both win there, lease.ts).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { JetStreamCluster, skipWithoutNatsServer } from '../helpers/jetstream-cluster.js';
import { freePort } from '../helpers/process.js';
import { Lease, leaseBucket, type LeaseBucket } from '../../src/streaming/cluster/lease.js';
import { eventually } from './stan.js';

const skip = skipWithoutNatsServer();
const BUCKET = 'STAN_lease-test_lease';
const TIMING = { renewInterval: 100, leaseTimeout: 600, electionTimeout: 900, suspendLimit: 5000 };

interface Node {
  readonly name: string;
  readonly nc: NatsConnection;
  readonly lease: Lease;
  readonly events: string[];
}

const dir = mkdtempSync(join(tmpdir(), 'wirebus-lease-'));
let server: ChildProcess | undefined;
/** `nats-server -js` on `port`, its store in `dir` (started again on the same ones). */
function startServer(port: number): ChildProcess {
  return spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
    stdio: 'ignore',
  });
}
const nodes: Node[] = [];
after(async () => {
  for (const n of nodes) {
    await n.lease.stop().catch(() => undefined);
    await n.nc.close().catch(() => undefined);
  }
  server?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Polls the nodes' roles every 5 ms: `most` is the most Leaders seen at once. */
function watchLeaders(all: readonly Node[]): { readonly most: number; stop(): void } {
  const w = {
    most: 0,
    poll: setInterval(() => {
      w.most = Math.max(w.most, all.filter((n) => n.lease.role === 'Leader').length);
    }, 5),
    stop: () => {
      clearInterval(w.poll);
    },
  };
  return w;
}

/** Every event of every node, in the order they happened. */
const timeline: string[] = [];

async function node(url: string, name: string, reconnect = false): Promise<Node> {
  const nc = await connect({
    servers: url,
    reconnect,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 50,
  });
  const kv = leaseBucket(
    await nc.jetstream().views.kv(BUCKET, { history: 1, timeout: 300 }),
    nc.jetstream(),
    BUCKET,
    300,
  );
  const events: string[] = [];
  const note = (e: string): void => {
    events.push(e);
    timeline.push(`${name}:${e}`);
  };
  const lease = new Lease(kv, name, `server-${name}`, TIMING, {
    elected: () => {
      note('elected');
      return Promise.resolve();
    },
    suspended: () => {
      note('suspended');
    },
    resumed: () => {
      note('resumed');
    },
    lost: (reason) => {
      note(`lost (${reason})`);
    },
    info: () => undefined,
  });
  const n = { name, nc, lease, events };
  nodes.push(n);
  return n;
}

let port = 0;

describe('the Leader lease', { skip }, () => {
  it('one Leader; a cut-off Leader steps down before another is elected', async () => {
    port = await freePort();
    server = startServer(port);
    const url = `nats://127.0.0.1:${port}`;
    await eventually(async () => {
      try {
        const nc = await connect({ servers: url });
        await (await nc.jetstreamManager()).getAccountInfo();
        await nc.close();
        return true;
      } catch {
        return false;
      }
    }, 'nats-server -js up');
    const all = [await node(url, 'a'), await node(url, 'b'), await node(url, 'c')];
    const leaders = watchLeaders(all);
    try {
      for (const n of all) n.lease.start();
      await eventually(() => all.some((n) => n.lease.role === 'Leader'), 'a Leader');
      const first = all.find((n) => n.lease.role === 'Leader')!;
      await eventually(
        () => all.filter((n) => n !== first && n.lease.role === 'Follower').length === 2,
        'two Followers',
      );

      // Cut off from JetStream (as a kill -9 or a partition): it cannot renew.
      await first.nc.close();
      await eventually(
        () => all.some((n) => n !== first && n.lease.role === 'Leader'),
        'another Leader',
        10_000,
      );
      const second = all.find((n) => n.lease.role === 'Leader')!;
      assert.notEqual(second, first);
      // The old Leader had stopped acting (suspended) before the new one was elected,
      // and steps down once its suspension lasted suspendLimit.
      const suspendedAt = timeline.indexOf(`${first.name}:suspended`);
      const electedAt = timeline.lastIndexOf(`${second.name}:elected`);
      assert.ok(suspendedAt >= 0 && suspendedAt < electedAt, timeline.join('\n'));
      await eventually(
        () => first.events.some((e) => e.startsWith('lost')),
        'the cut-off Leader steps down',
        10_000,
      );
      assert.match(first.events.at(-1)!, /could not renew the lease/);
      assert.ok(!first.events.includes('resumed'), first.events.join(', '));

      // A Leader that stops releases the lease; the third node takes it.
      await second.lease.stop();
      const third = all.find((n) => n !== first && n !== second)!;
      await eventually(() => third.lease.role === 'Leader', 'the third node Leader', 10_000);
    } finally {
      leaders.stop();
    }
    assert.equal(leaders.most, 1);
  });
  it('a Leader whose JetStream is away for longer than the lease is suspended, then resumes', async () => {
    const url = `nats://127.0.0.1:${port}`;
    const all = [
      await node(url, 'd', true),
      await node(url, 'e', true),
      await node(url, 'f', true),
    ];
    const leaders = watchLeaders(all);
    try {
      // The earlier test's nodes hold the bucket's key: take it over cleanly.
      for (const n of nodes.filter((x) => !all.includes(x))) await n.lease.stop();
      for (const n of all) n.lease.start();
      await eventually(() => all.some((n) => n.lease.role === 'Leader'), 'a Leader', 10_000);
      const leader = all.find((n) => n.lease.role === 'Leader')!;
      // JetStream gone for twice the lease, then back (as a bucket without a raft
      // leader while JetStream elects one): nobody can renew, read or take the lease.
      const exited = new Promise((r) => server!.once('exit', r));
      server!.kill('SIGKILL');
      await exited;
      await eventually(() => leader.events.includes('suspended'), 'the Leader suspended', 5000);
      assert.notEqual(leader.lease.role, 'Leader');
      await new Promise((r) => setTimeout(r, 2 * TIMING.leaseTimeout));
      server = startServer(port);
      await eventually(() => leader.events.includes('resumed'), 'the Leader resumed', 10_000).catch(
        (err: unknown) => {
          throw new Error(`${String(err)}\n${timeline.join('\n')}`);
        },
      );
      await eventually(() => leader.lease.role === 'Leader', 'the same Leader', 5000);
      // Nobody else was elected, and the Leader never stepped down.
      for (const n of all) if (n !== leader) assert.ok(!n.events.includes('elected'), n.name);
      assert.ok(!leader.events.some((e) => e.startsWith('lost')), leader.events.join(', '));
    } finally {
      leaders.stop();
    }
    assert.equal(leaders.most, 1);
  });
});

describe(
  'the lease compare-and-set on a replicated bucket (three nats-server nodes)',
  { skip },
  () => {
    it('of updates against the same revision sent at once, exactly one succeeds', async (t) => {
      const cluster = await JetStreamCluster.start(3);
      const ncs: NatsConnection[] = [];
      try {
        // Two nodes on two servers, as two streaming nodes taking an expired lease.
        for (const n of cluster.nodes.slice(0, 2)) ncs.push(await connect({ servers: n.url }));
        // One after the other: the first creates the bucket (which may take seconds on
        // a loaded machine), the second finds it.
        const buckets: LeaseBucket[] = [];
        for (const nc of ncs) {
          const kv = await nc.jetstream().views.kv(BUCKET, {
            history: 1,
            replicas: 3,
            timeout: 20_000,
            // As the lease's bucket (engine.ts): reads from the raft leader, never stale.
            allow_direct: false,
          });
          buckets.push(leaseBucket(kv, nc.jetstream(), BUCKET, 5000));
        }
        const value = (s: string): Uint8Array => Buffer.from(s);
        let revision = await buckets[0]!.create('leader', value('first'));
        let raced = 0;
        for (let round = 0; round < 40; round++) {
          const results = await Promise.allSettled(
            buckets.map((b, i) => b.update('leader', value(`${round}-${i}`), revision)),
          );
          const won = results.filter((r) => r.status === 'fulfilled');
          assert.equal(won.length, 1, `round ${round}: ${JSON.stringify(results)}`);
          for (const r of results) {
            if (r.status === 'rejected') assert.match(String(r.reason), /wrong last sequence/);
          }
          revision = (won[0] as PromiseFulfilledResult<number>).value;
          // What the key holds is the winner's value, at its revision.
          const entry = await buckets[1]!.get('leader');
          assert.equal(entry?.revision, revision);
          raced++;
        }
        t.diagnostic(`${raced} rounds, one winner each`);
      } finally {
        for (const nc of ncs) await nc.close();
        await cluster.stop();
      }
    });
  },
);
