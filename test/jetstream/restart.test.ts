// File streams through the whole server: a restart keeps the messages and a durable
// consumer's position with its pending acks; kill -9 of bin/wirebus during acked
// publishing loses no acknowledged message (each there once, in order).

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AckPolicy, connect, type JetStreamManager, type NatsConnection, StorageType } from 'nats';
import { startServer } from '../../src/index.js';
import { freePort, startWirebus } from '../helpers/process.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function storeDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'wirebus-js-restart-'));
  dirs.push(d);
  return d;
}

async function embedded(
  dir: string,
): Promise<{ nc: NatsConnection; jsm: JetStreamManager; close(): Promise<void> }> {
  const server = await startServer({ host: '127.0.0.1', port: 0, jetstream: { storeDir: dir } });
  const nc = await connect({ servers: server.url, reconnect: false });
  const jsm = await nc.jetstreamManager();
  return {
    nc,
    jsm,
    close: async () => {
      await nc.close();
      await server.close();
    },
  };
}

describe('JetStream file streams across restarts', () => {
  it('keeps messages and a durable consumer mid-stream, pending acks included', async () => {
    const dir = storeDir();
    const first = await embedded(dir);
    await first.jsm.streams.add({
      name: 'ORDERS',
      subjects: ['orders.>'],
      storage: StorageType.File,
    });
    await first.jsm.consumers.add('ORDERS', {
      durable_name: 'worker',
      ack_policy: AckPolicy.Explicit,
      ack_wait: 1_000_000_000,
    });
    const js = first.nc.jetstream();
    for (let i = 1; i <= 100; i++)
      await js.publish(`orders.${i % 5}`, new TextEncoder().encode(`order ${i}`));
    const consumer = await js.consumers.get('ORDERS', 'worker');
    const batch = await consumer.fetch({ max_messages: 30, expires: 2000 });
    let n = 0;
    for await (const m of batch) {
      if (++n <= 20) m.ack();
      if (n === 30) break;
    }
    await first.nc.flush();
    const before = await first.jsm.consumers.info('ORDERS', 'worker');
    assert.equal(before.delivered.stream_seq, 30);
    assert.equal(before.ack_floor.stream_seq, 20);
    assert.equal(before.num_ack_pending, 10);
    await first.close();

    const second = await embedded(dir);
    try {
      const info = await second.jsm.streams.info('ORDERS');
      assert.equal(info.config.storage, StorageType.File);
      assert.equal(info.state.messages, 100);
      assert.equal(info.state.first_seq, 1);
      assert.equal(info.state.last_seq, 100);
      const m42 = await second.jsm.streams.getMessage('ORDERS', { seq: 42 });
      assert.equal(new TextDecoder().decode(m42.data), 'order 42');
      const ci = await second.jsm.consumers.info('ORDERS', 'worker');
      assert.equal(ci.delivered.stream_seq, 30);
      assert.equal(ci.ack_floor.stream_seq, 20);
      assert.equal(ci.num_ack_pending, 10);
      assert.equal(ci.num_pending, 70);
      // The ten unacked come again (ack_wait 1 s), then the rest in order.
      const c = await second.nc.jetstream().consumers.get('ORDERS', 'worker');
      const seqs: number[] = [];
      const rest = await c.fetch({ max_messages: 80, expires: 5000 });
      for await (const m of rest) {
        seqs.push(m.seq);
        m.ack();
        if (seqs.length === 80) break;
      }
      assert.deepEqual(
        [...seqs].sort((a, b) => a - b),
        Array.from({ length: 80 }, (_, i) => i + 21),
      );
    } finally {
      await second.close();
    }
  });

  it('a durable deleted with acks not yet written leaves no state behind: gone after a restart', async () => {
    const dir = storeDir();
    const first = await embedded(dir);
    await first.jsm.streams.add({ name: 'GONE', subjects: ['gone.>'], storage: StorageType.File });
    await first.jsm.consumers.add('GONE', { durable_name: 'old', ack_policy: AckPolicy.Explicit });
    const js = first.nc.jetstream();
    for (let i = 1; i <= 10; i++) await js.publish('gone.x', new TextEncoder().encode(`m${i}`));
    const consumer = await js.consumers.get('GONE', 'old');
    let n = 0;
    for await (const m of await consumer.fetch({ max_messages: 5, expires: 2000 })) {
      m.ack();
      if (++n === 5) break;
    }
    await first.nc.flush();
    // Deleted while its state is still waiting for the store's write timer.
    assert.equal(await first.jsm.consumers.delete('GONE', 'old'), true);
    const consumers = join(dir, 'jetstream', '$G', 'streams', 'GONE', 'obs');
    assert.deepEqual(existsSync(consumers) ? readdirSync(consumers) : [], []);
    await first.close();
    assert.deepEqual(existsSync(consumers) ? readdirSync(consumers) : [], []);

    const second = await embedded(dir);
    try {
      assert.deepEqual(await second.jsm.consumers.list('GONE').next(), []);
      assert.equal((await second.jsm.streams.info('GONE')).state.messages, 10);
    } finally {
      await second.close();
    }
  });

  it('kill -9 of bin/wirebus during acked publishing loses no acknowledged message', async () => {
    const dir = storeDir();
    const port = await freePort();
    const acked: number[] = [];
    let child = await startWirebus(port, ['-js', '-sd', dir]);
    try {
      const nc = await connect({ servers: child.url, reconnect: false });
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'EVENTS', subjects: ['events'], storage: StorageType.File });
      const js = nc.jetstream();
      let next = 1;
      let stop = false;
      const inflight = new Set<Promise<void>>();
      const publishing = (async () => {
        while (!stop) {
          const i = next++;
          const p = js
            .publish('events', new TextEncoder().encode(String(i)), { msgID: `e${i}` })
            .then(
              () => {
                acked.push(i);
              },
              () => undefined,
            );
          inflight.add(p);
          void p.finally(() => inflight.delete(p));
          // Back to the event loop now and then: once the server is gone every publish
          // fails at once, and a loop fed only by microtasks would starve the kill.
          if (inflight.size >= 256) await Promise.race(inflight);
          else if (i % 64 === 0) await new Promise((r) => setImmediate(r));
          if (nc.isClosed()) break;
        }
      })();
      await new Promise((r) => setTimeout(r, 800));
      child.child.kill('SIGKILL');
      await child.stop();
      stop = true;
      await publishing;
      await Promise.allSettled([...inflight]);
      await nc.close().catch(() => undefined);
    } finally {
      await child.stop();
    }
    assert.ok(acked.length > 100, `only ${acked.length} publishes were acknowledged`);

    child = await startWirebus(port, ['-js', '-sd', dir]);
    try {
      const nc = await connect({ servers: child.url, reconnect: false });
      const jsm = await nc.jetstreamManager();
      const info = await jsm.streams.info('EVENTS');
      const stored: number[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
        const m = await jsm.streams.getMessage('EVENTS', { seq });
        stored.push(Number(new TextDecoder().decode(m.data)));
      }
      // Every acknowledged message once, and the stored ones in publish order.
      const position = new Map(stored.map((v, i) => [v, i]));
      assert.equal(position.size, stored.length, 'a message stored twice');
      for (const a of acked) assert.ok(position.has(a), `acknowledged message ${a} is missing`);
      for (let i = 1; i < stored.length; i++)
        assert.ok(stored[i]! > stored[i - 1]!, 'out of order');
      await nc.close();
    } finally {
      await child.stop();
    }
  });
});

describe('JetStream file streams: the writer', () => {
  it('answers STREAM.DELETE after the first message went (an idle write round no longer stalls it)', async () => {
    // A write round started with nothing to do ended before it was recorded as running,
    // and no round ran again: the delete's flush waited for ever (most runs of this).
    const s = await embedded(storeDir());
    try {
      for (let i = 0; i < 4; i++) {
        const name = `W${i}`;
        await s.jsm.streams.add({ name, subjects: [`w${i}`], storage: StorageType.File });
        const js = s.nc.jetstream();
        for (let k = 0; k < 6; k++) await js.publish(`w${i}`, new TextEncoder().encode('x'));
        await s.jsm.streams.deleteMessage(name, 1, false);
        assert.equal(await s.jsm.streams.delete(name), true);
      }
    } finally {
      await s.close();
    }
  });
});
