// The Leader lease on a real JetStream key-value bucket (one `nats-server -js`):
// exactly one Leader; a Leader cut off from JetStream steps down before anyone else
// is elected (polled every 5 ms: never two Leaders); a Leader that stops releases
// the lease and another node takes it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { skipWithoutNatsServer } from '../helpers/jetstream-cluster.js';
import { freePort } from '../helpers/process.js';
import { Lease } from '../../src/streaming/cluster/lease.js';
import { eventually } from './stan.js';

const skip = skipWithoutNatsServer();
const TIMING = { renewInterval: 100, leaseTimeout: 600, electionTimeout: 900 };

interface Node {
  readonly name: string;
  readonly nc: NatsConnection;
  readonly lease: Lease;
  readonly events: string[];
}

const dir = mkdtempSync(join(tmpdir(), 'wirebus-lease-'));
let server: ChildProcess | undefined;
const nodes: Node[] = [];
after(async () => {
  for (const n of nodes) {
    await n.lease.stop().catch(() => undefined);
    await n.nc.close().catch(() => undefined);
  }
  server?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Every event of every node, in the order they happened. */
const timeline: string[] = [];

async function node(url: string, name: string): Promise<Node> {
  const nc = await connect({ servers: url, reconnect: false });
  const kv = await nc.jetstream().views.kv('STAN_lease-test_lease', { history: 1, timeout: 300 });
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
    lost: (reason) => {
      note(`lost (${reason})`);
    },
    info: () => undefined,
  });
  const n = { name, nc, lease, events };
  nodes.push(n);
  return n;
}

describe('the Leader lease', { skip }, () => {
  it('one Leader; a cut-off Leader steps down before another is elected', async () => {
    const port = await freePort();
    server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
      stdio: 'ignore',
    });
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
    let maxLeaders = 0;
    const poll = setInterval(() => {
      const leaders = all.filter((n) => n.lease.role === 'Leader').length;
      maxLeaders = Math.max(maxLeaders, leaders);
    }, 5);
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
      // The old Leader had stepped down before the new one was elected.
      const lostAt = timeline.findIndex((e) => e.startsWith(`${first.name}:lost`));
      const electedAt = timeline.lastIndexOf(`${second.name}:elected`);
      assert.ok(lostAt >= 0 && lostAt < electedAt, timeline.join('\n'));
      assert.match(first.events.at(-1)!, /could not renew the lease/);

      // A Leader that stops releases the lease; the third node takes it.
      await second.lease.stop();
      const third = all.find((n) => n !== first && n !== second)!;
      await eventually(() => third.lease.role === 'Leader', 'the third node Leader', 10_000);
    } finally {
      clearInterval(poll);
    }
    assert.equal(maxLeaders, 1);
  });
});
