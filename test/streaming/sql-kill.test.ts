// A lone bin/wirebus on the SQL store killed with kill -9 while a client publishes
// with acks and a durable consumes, then started again on the same database: every
// acknowledged message is there, and the durable resumes where it was (what was
// delivered in its last moments may come again; the rest does not).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { skipWithoutPostgres, testPostgres } from '../helpers/postgres.js';
import { freePort, startWirebus, type WirebusProcess } from '../helpers/process.js';
import { connect, eventually, getJson, kill, sleep, subscribe, type Stan } from './stan.js';

const skip = await skipWithoutPostgres();

const procs: WirebusProcess[] = [];
after(async () => {
  for (const p of procs) await p.stop();
});

async function server(port: number, httpPort: number, source: string): Promise<WirebusProcess> {
  const args = ['-m', String(httpPort), '-st', 'SQL', '--sql_driver', 'postgres'];
  const proc = await startWirebus(
    port,
    [...args, '--sql_source', source],
    'Streaming Server is ready',
  );
  procs.push(proc);
  return proc;
}

// node-nats-streaming calls pending publish callbacks without an error when its
// connection closes: only a callback before the disconnect is a PubAck.
const disconnected = new WeakSet<Stan>();

function publishAcked(sc: Stan, payload: string): Promise<boolean> {
  return new Promise((resolve) => {
    sc.publish('orders', payload, (err) => {
      resolve((err === undefined || err === null) && !disconnected.has(sc));
    });
  });
}

describe('a lone SQL-backed server killed with kill -9', { skip }, () => {
  it('comes back with every acknowledged message and the durable position', async () => {
    const pg = await testPostgres();
    if (typeof pg === 'string') throw new Error(pg);
    const source = await pg.createDatabase();
    const port = await freePort();
    const httpPort = await freePort();
    const first = await server(port, httpPort, source);
    const url = `nats://127.0.0.1:${port}`;
    const opts = { ackTimeout: 2000 };
    const pub = await connect(url, 'test-cluster', 'pub', opts);
    (pub as unknown as NodeJS.EventEmitter).on('disconnect', () => disconnected.add(pub));
    const consumer = await connect(url, 'test-cluster', 'consumer', opts);
    const seen = new Map<string, number>();
    const durableOpts = consumer
      .subscriptionOptions()
      .setDurableName('dur')
      .setManualAckMode(true)
      .setMaxInFlight(50)
      .setDeliverAllAvailable();
    await subscribe(consumer, 'orders', durableOpts, undefined, (m) => {
      const p = String(m.getData());
      seen.set(p, (seen.get(p) ?? 0) + 1);
      m.ack();
    });
    const acked: string[] = [];
    for (let i = 1; i <= 200; i++) {
      if (await publishAcked(pub, `order-${i}`)) acked.push(`order-${i}`);
    }
    await eventually(() => seen.size >= 200, 'the first 200 consumed');
    await sleep(500);
    // 10 in flight at once from here on, killed in the middle.
    let next = 200;
    const run = { killed: false };
    const worker = async (): Promise<void> => {
      // Publishing to a dead server only times out: stop once it is killed.
      while (next < 400 && !run.killed) {
        const p = `order-${++next}`;
        if (await publishAcked(pub, p)) acked.push(p);
        // (Another worker may have killed it meanwhile: a second SIGKILL does nothing.)
        if (acked.length >= 300) {
          run.killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 10 }, worker));
    assert.equal(run.killed, true);
    kill(pub);
    kill(consumer);

    await server(port, httpPort, source);
    const channel = await getJson(
      `http://127.0.0.1:${httpPort}/streaming/channelsz?channel=orders`,
    );
    const total = Number(channel.msgs);
    const reader = await connect(url, 'test-cluster', 'reader');
    const all = await subscribe(
      reader,
      'orders',
      reader.subscriptionOptions().setDeliverAllAvailable(),
    );
    await all.waitFor(total);
    const stored = new Set(all.msgs.map((m) => String(m.getData())));
    assert.ok(acked.length >= 300);
    for (const p of acked) assert.ok(stored.has(p), `${p} was acknowledged but is missing`);

    // The durable (offline since its client is gone) resumes: the first 200 never again.
    const again = await connect(url, 'test-cluster', 'consumer2');
    const resumed = new Set<string>();
    await subscribe(
      again,
      'orders',
      again.subscriptionOptions().setDurableName('dur').setManualAckMode(true).setMaxInFlight(500),
      undefined,
      (m) => {
        resumed.add(String(m.getData()));
        m.ack();
      },
    );
    await sleep(1000);
    for (let i = 1; i <= 200; i++) assert.ok(!resumed.has(`order-${i}`), `order-${i} came again`);
    kill(reader);
    kill(again);
  });
});
