// A mixed fault-tolerance group on one FILE directory: wirebus and the reference
// nats-streaming-server as the two members of one ft_group (the migration with no
// downtime: add wirebus as the standby, stop the reference). The active one, of
// either kind, is killed with kill -9 while a client publishes with acks and a
// durable consumes; the other takes over with every acknowledged message and the
// durable's position. Both must never be active at once: the fcntl lock on
// .rootdir.lck is what they share. Needs the reference binary; skipped without it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startWirebus, type WirebusProcess } from '../helpers/process.js';
import { skipWithoutReference, startReference } from './stan-reference.js';
import {
  closeStan,
  connect,
  eventually,
  getJson,
  kill,
  sleep,
  subscribe,
  type Stan,
} from './stan.js';

const skip = skipWithoutReference();

interface Member {
  readonly kind: 'wirebus' | 'reference';
  readonly http: string;
  kill9(): void;
  stop(): Promise<void>;
}

const members: Member[] = [];
const cores: WirebusProcess[] = [];
after(async () => {
  for (const m of members) await m.stop();
  for (const c of cores) await c.stop();
});

async function member(kind: Member['kind'], natsUrl: string, dir: string): Promise<Member> {
  const mport = await freePort();
  const args = ['-m', String(mport), '-st', 'FILE', '--dir', dir, '--ft_group', 'grp'];
  const ready = 'Starting in standby mode';
  let m: Member;
  if (kind === 'wirebus') {
    const p = await startWirebus(await freePort(), [...args, '-ns', natsUrl], ready);
    m = {
      kind,
      http: `http://127.0.0.1:${mport}`,
      kill9: () => p.child.kill('SIGKILL'),
      stop: () => p.stop(),
    };
  } else {
    const p = await startReference(
      ['-a', '127.0.0.1', '-p', String(await freePort()), ...args, '-ns', natsUrl],
      ready,
    );
    m = {
      kind,
      http: `http://127.0.0.1:${mport}`,
      kill9: () => p.child.kill('SIGKILL'),
      stop: () => p.stop(),
    };
  }
  members.push(m);
  return m;
}

/** 200 or 204; 0 when the server does not answer (dead, or not serving yet). */
async function ftStatus(m: Member): Promise<number> {
  try {
    const res = await fetch(m.http + '/streaming/isFTActive', {
      signal: AbortSignal.timeout(1000),
    });
    return res.status;
  } catch {
    return 0;
  }
}

async function publishAcked(sc: Stan, payload: string): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      sc.publish('orders', payload, (err) => {
        resolve(err === undefined || err === null);
      });
    });
    if (ok) return;
    await sleep(100);
  }
}

async function mixedFailover(first: Member['kind'], second: Member['kind']): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-ft-mixed-'));
  try {
    const core = await startWirebus(await freePort());
    cores.push(core);
    const a = await member(first, core.url, dir);
    await eventually(async () => (await ftStatus(a)) === 200, `${first} active`, 15_000);
    const b = await member(second, core.url, dir);
    await sleep(1500);
    assert.equal(await ftStatus(b), 204, `the ${second} is a standby while the ${first} lives`);

    let bothActive = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const [sa, sb] = await Promise.all([ftStatus(a), ftStatus(b)]);
        if (sa === 200 && sb === 200) bothActive++;
        await sleep(25);
      }
    })();

    const opts = { ackTimeout: 1000, stanPingInterval: 1000, stanMaxPingOut: 100 };
    const pub = await connect(core.url, 'test-cluster', 'pub', opts);
    const consumer = await connect(core.url, 'test-cluster', 'consumer', opts);
    const received = new Map<string, number>();
    const dur = await subscribe(
      consumer,
      'orders',
      consumer
        .subscriptionOptions()
        .setDurableName('dur')
        .setManualAckMode(true)
        .setMaxInFlight(20)
        .setAckWait(1000)
        .setDeliverAllAvailable(),
      undefined,
      (msg) => {
        const payload = String(msg.getData());
        received.set(payload, (received.get(payload) ?? 0) + 1);
        msg.ack();
      },
    );

    // 100 consumed and acked well before the kill, then 150 more with the active
    // member killed after 150 acks in all.
    const acked = new Set<string>();
    let next = 0;
    let killedAt = 0;
    const worker = (upTo: number) => async (): Promise<void> => {
      while (next < upTo) {
        const payload = `order-${++next}`;
        await publishAcked(pub, payload);
        acked.add(payload);
        if (acked.size === 150 && killedAt === 0) {
          killedAt = Date.now();
          a.kill9();
        }
      }
    };
    await Promise.all(Array.from({ length: 5 }, worker(100)));
    await eventually(() => received.size >= 100, 'the first 100 consumed');
    await sleep(1000);
    await Promise.all(Array.from({ length: 5 }, worker(250)));
    assert.ok(killedAt > 0);
    await eventually(async () => (await ftStatus(b)) === 200, `${second} active`, 15_000);

    await eventually(
      () => [...acked].every((p) => received.has(p)),
      'the durable received every acknowledged message',
      20_000,
    );
    for (let i = 1; i <= 100; i++) {
      assert.equal(received.get(`order-${i}`), 1, `order-${i} was delivered again`);
    }
    const reader = await connect(core.url, 'test-cluster', 'reader', opts);
    const channel = await getJson(b.http + '/streaming/channelsz?channel=orders');
    const total = Number(channel.msgs);
    assert.ok(total >= 250, `${total} messages stored`);
    const all = await subscribe(
      reader,
      'orders',
      reader.subscriptionOptions().setDeliverAllAvailable(),
    );
    await all.waitFor(total, 10_000);
    const stored = new Set(all.msgs.map((msg) => String(msg.getData())));
    for (const p of acked) assert.ok(stored.has(p), `${p} was acknowledged but is missing`);

    polling = false;
    await poller;
    assert.equal(bothActive, 0, 'both members answered isFTActive 200 at once');
    dur.sub.removeAllListeners('message');
    await closeStan(reader);
    kill(pub);
    kill(consumer);
    await b.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('mixed fault-tolerance group on a shared FILE directory', () => {
  it(
    'wirebus active, reference standby: kill -9 of wirebus, the reference takes over',
    { skip },
    async () => {
      await mixedFailover('wirebus', 'reference');
    },
  );

  it(
    'reference active, wirebus standby: kill -9 of the reference, wirebus takes over',
    { skip },
    async () => {
      await mixedFailover('reference', 'wirebus');
    },
  );
});
