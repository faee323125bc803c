// One story of streaming use that leaves every kind of record the SQL store keeps,
// written by one server and checked on another: the fixtures written by the
// reference (sql-fixtures-capture.ts) and served by wirebus, and the databases written
// by wirebus and served by the reference (sql-reference.test.ts).
//
// Written: 20 messages on `orders`, 12 on `lim` (max_msgs 5: 8..12 stay); a durable
// `dur` that acked 1..7 and went offline with 8..12 pending; a durable queue group
// `qdur:workers` that acked 1..15 and went offline with 16..20 pending; a client `live`
// still connected with a plain subscription on `lim`, a client `pub`, a client `gone`
// that closed (no record left).
import assert from 'node:assert/strict';
import {
  closeStan,
  connect,
  getJson,
  kill,
  publish,
  sleep,
  subscribe,
  type Stan,
  type StanMessage,
} from './stan.js';

export const CLUSTER = 'test-cluster';
export const ORDERS = 20;
export const LIM = 12;
export const LIM_MAX_MSGS = 5;

/** The per-channel limit, as a streaming config file (the reference's -sc). */
export const STAN_CONFIG = `streaming { store_limits { channels { lim { max_msgs: ${LIM_MAX_MSGS} } } } }\n`;
/** ... and as wirebus's embedding options. */
export const LIMITS = { perChannel: { lim: { maxMsgs: LIM_MAX_MSGS } } };

/** Message i of a channel: text and every byte value, so encodings cannot hide. */
export function payload(channel: string, i: number): Buffer {
  const bytes = Buffer.alloc(i * 13);
  for (let k = 0; k < bytes.length; k++) bytes[k] = (i * 31 + k * 7) & 0xff;
  return Buffer.concat([Buffer.from(`${channel}-${i}:`), bytes]);
}

function manual(sc: Stan, inFlight: number) {
  return sc
    .subscriptionOptions()
    .setManualAckMode(true)
    .setMaxInFlight(inFlight)
    .setAckWait(60_000)
    .setDeliverAllAvailable();
}

/** Clients left connected by write(): killed (no close) once the server stopped. */
export interface Written {
  readonly live: Stan[];
}

/** Writes the story through the server at `url`. */
export async function writeScenario(url: string): Promise<Written> {
  const pub = await connect(url, CLUSTER, 'pub');
  for (let i = 1; i <= ORDERS; i++) await publish(pub, 'orders', payload('orders', i));
  for (let i = 1; i <= LIM; i++) await publish(pub, 'lim', payload('lim', i));

  const consumer = await connect(url, CLUSTER, 'consumer');
  const dur = await subscribe(
    consumer,
    'orders',
    manual(consumer, 5).setDurableName('dur'),
    undefined,
    (m) => {
      if (m.getSequence() <= 7) m.ack();
    },
  );
  await dur.waitFor(12);
  await sleep(200);
  await closeStan(consumer);

  const w1 = await connect(url, CLUSTER, 'w1');
  const q = await subscribe(w1, 'orders', manual(w1, 50).setDurableName('qdur'), 'workers', (m) => {
    if (m.getSequence() <= 15) m.ack();
  });
  await q.waitFor(ORDERS);
  await sleep(200);
  await closeStan(w1);

  const live = await connect(url, CLUSTER, 'live');
  const l = await subscribe(live, 'lim', manual(live, 50), undefined, (m) => {
    m.ack();
  });
  await l.waitFor(LIM_MAX_MSGS);

  const gone = await connect(url, CLUSTER, 'gone');
  await closeStan(gone);
  // The reference writes pending and acked sequences once a second.
  await sleep(1500);
  return { live: [pub, live] };
}

function bodies(msgs: readonly StanMessage[]): Map<number, Buffer> {
  return new Map(msgs.map((m) => [m.getSequence(), m.getRawData()]));
}

interface ChannelJson {
  first_seq: number;
  last_seq: number;
  msgs: number;
  subscriptions?: { client_id: string; last_sent: number; pending_count: number }[];
}

/** Checks that the server at `url` (monitoring at `http`) serves the story unchanged. */
export async function checkScenario(url: string, http: string): Promise<void> {
  const orders = (await getJson(
    `${http}/streaming/channelsz?channel=orders`,
  )) as unknown as ChannelJson;
  assert.deepEqual([orders.first_seq, orders.last_seq, orders.msgs], [1, ORDERS, ORDERS]);
  const lim = (await getJson(
    `${http}/streaming/channelsz?channel=lim&subs=1`,
  )) as unknown as ChannelJson;
  assert.deepEqual(
    [lim.first_seq, lim.last_seq, lim.msgs],
    [LIM - LIM_MAX_MSGS + 1, LIM, LIM_MAX_MSGS],
  );
  assert.deepEqual(
    (lim.subscriptions ?? []).map((s) => [s.client_id, s.last_sent, s.pending_count]),
    [['live', LIM, 0]],
  );
  const clients = (await getJson(`${http}/streaming/clientsz`)) as {
    clients: { id: string }[];
  };
  assert.deepEqual(clients.clients.map((c) => c.id).sort(), ['live', 'pub']);

  // Every message, byte for byte, by sequence.
  const reader = await connect(url, CLUSTER, 'reader');
  try {
    const all = await subscribe(
      reader,
      'orders',
      reader.subscriptionOptions().setDeliverAllAvailable(),
    );
    await all.waitFor(ORDERS);
    const got = bodies(all.msgs);
    for (let i = 1; i <= ORDERS; i++)
      assert.deepEqual(got.get(i), payload('orders', i), `orders ${i}`);
    const limAll = await subscribe(
      reader,
      'lim',
      reader.subscriptionOptions().setDeliverAllAvailable(),
    );
    await limAll.waitFor(LIM_MAX_MSGS);
    assert.deepEqual(limAll.seqs(), [8, 9, 10, 11, 12]);
    for (const m of limAll.msgs) assert.deepEqual(m.getRawData(), payload('lim', m.getSequence()));

    // The durable resumes at its acked position: 8..12 again (redelivered), then 13..20.
    const consumer = await connect(url, CLUSTER, 'consumer');
    const dur = await subscribe(consumer, 'orders', manual(consumer, 50).setDurableName('dur'));
    await dur.waitFor(13);
    await sleep(300);
    assert.deepEqual(
      [...new Set(dur.seqs())].sort((a, b) => a - b),
      range(8, ORDERS),
    );
    for (const m of dur.msgs) {
      if (m.getSequence() <= 12) assert.equal(m.isRedelivered(), true, `dur ${m.getSequence()}`);
    }
    // The durable queue group too: 16..20, never 1..15.
    const w1 = await connect(url, CLUSTER, 'w1');
    const q = await subscribe(w1, 'orders', manual(w1, 50).setDurableName('qdur'), 'workers');
    await q.waitFor(5);
    await sleep(300);
    assert.deepEqual(
      [...new Set(q.seqs())].sort((a, b) => a - b),
      range(16, ORDERS),
    );
    kill(consumer);
    kill(w1);
  } finally {
    kill(reader);
  }
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
