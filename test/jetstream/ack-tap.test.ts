// Acks taken from the publisher's bytes (src/jetstream/ack-tap.ts, src/server/publish-tap.ts):
// they acknowledge exactly as routed acks do and leave the subject cache alone; a client
// listening under `$JS.ACK` (or on a wildcard above it) still sees every ack, and acks
// still count; acks nobody takes answer AckSync with no-responders, as routing does.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AckPolicy,
  connect,
  createInbox,
  Empty,
  type JsMsg,
  type Msg,
  type NatsConnection,
} from 'nats';
import { withServer } from '../helpers/server.js';
import { consumerConfig } from './client.js';
import type { RunningServer } from '../../src/index.js';

const enc = new TextEncoder();

async function withJs(body: (nc: NatsConnection, s: RunningServer) => Promise<void>) {
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      await body(nc, s);
    } finally {
      await nc.close();
    }
  });
}

/** A stream A on `a` with `n` messages and a pull consumer `c` with explicit acks. */
async function setUp(nc: NatsConnection, n: number): Promise<void> {
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: 'A', subjects: ['a'] });
  const js = nc.jetstream();
  for (let i = 0; i < n; i++) await js.publish('a', enc.encode(String(i)));
  await jsm.consumers.add('A', { durable_name: 'c', ack_policy: AckPolicy.Explicit });
}

async function fetchAll(nc: NatsConnection, n: number): Promise<JsMsg[]> {
  const c = await nc.jetstream().consumers.get('A', 'c');
  const out: JsMsg[] = [];
  for await (const m of await c.fetch({ max_messages: n, expires: 2000 })) out.push(m);
  return out;
}

async function ackState(nc: NatsConnection): Promise<[number, number]> {
  const info = await (await nc.jetstreamManager()).consumers.info('A', 'c');
  return [info.num_ack_pending, info.ack_floor.stream_seq];
}

test('tapped acks move the ack floor and leave the subject cache alone', async () => {
  await withJs(async (nc, s) => {
    await setUp(nc, 50);
    const msgs = await fetchAll(nc, 50);
    assert.equal(msgs.length, 50);
    const sublist = s.server.globalAccount.sublist;
    const cached = sublist.stats().numCache;
    const outBefore = s.server.outMsgs;
    // Out of order first: the floor stays below the first unacknowledged one.
    msgs[1]!.ack();
    msgs[2]!.ack();
    await nc.flush();
    assert.deepEqual(await ackState(nc), [48, 0]);
    for (const m of msgs) m.ack();
    await nc.flush();
    assert.deepEqual(await ackState(nc), [0, 50]);
    // Every ack counted as a delivery (to the consumer's subscription), none cached.
    assert.ok(s.server.outMsgs - outBefore >= 52);
    assert.ok(sublist.stats().numCache <= cached + 4, `cache ${sublist.stats().numCache}`);
  });
});

test('AckSync through the tap is answered once the ack is done', async () => {
  await withJs(async (nc) => {
    await setUp(nc, 2);
    const [m1, m2] = await fetchAll(nc, 2);
    assert.equal(await m1!.ackAck(), true);
    assert.deepEqual(await ackState(nc), [1, 1]);
    // -NAK and +TERM with a reply, read from the body's bytes.
    m2!.term();
    await nc.flush();
    assert.deepEqual(await ackState(nc), [0, 2]);
  });
});

test('a listener under $JS.ACK sees every ack and the consumer still takes them', async () => {
  for (const watch of ['$JS.ACK.>', '$JS.*.A.c.>', '>']) {
    await withJs(async (nc) => {
      await setUp(nc, 5);
      const watcher = await connect({ servers: nc.getServer() });
      try {
        const seen: string[] = [];
        const sub = watcher.subscribe(watch, {
          callback: (_e, m) => {
            if (m.subject.startsWith('$JS.ACK.')) seen.push(m.subject);
          },
        });
        await watcher.flush();
        const msgs = await fetchAll(nc, 5);
        for (const m of msgs) m.ack();
        await nc.flush();
        assert.deepEqual(await ackState(nc), [0, 5], watch);
        await watcher.flush();
        // `$JS.ACK.A.c.<dc>.<sseq>...`: the stream sequences of the acked messages.
        assert.deepEqual(
          seen.map((subject) => Number(subject.split('.')[5])),
          msgs.map((m) => m.info.streamSequence),
          watch,
        );
        sub.unsubscribe();
        await watcher.flush();
        // Gone again: the tap takes acks once more (the floor keeps moving).
        await nc.jetstream().publish('a', enc.encode('late'));
        const [late] = await fetchAll(nc, 1);
        late!.ack();
        await nc.flush();
        assert.deepEqual(await ackState(nc), [0, 6], watch);
        assert.equal(seen.length, 5, watch);
      } finally {
        await watcher.close();
      }
    });
  }
});

test('acks for no consumer get no-responders, as routing gives them', async () => {
  await withJs(async (nc) => {
    await setUp(nc, 1);
    for (const subject of [
      '$JS.ACK.A.gone.1.1.1.0.0', // no such consumer
      '$JS.ACK.B.c.1.1.1.0.0', // no such stream
      '$JS.ACK.A.c', // nothing after the consumer
      '$JS.ACK.A.c.1..1.0.0', // an empty token
      '$JS.ACK.A.c.1.1.1.0.', // a trailing dot
    ]) {
      await assert.rejects(
        nc.request(subject, Empty, { timeout: 2000 }),
        (err: Error & { code?: string }) => err.code === '503',
        subject,
      );
    }
    // None of them acknowledged anything.
    assert.deepEqual(await ackState(nc), [0, 0]);
  });
});

test('a stream on $JS.ACK.> stores the acks while the consumer takes them', async () => {
  await withJs(async (nc) => {
    await setUp(nc, 3);
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'ACKS', subjects: ['$JS.ACK.>'] });
    const msgs = await fetchAll(nc, 3);
    for (const m of msgs) m.ack();
    await nc.flush();
    assert.deepEqual(await ackState(nc), [0, 3]);
    assert.equal((await jsm.streams.info('ACKS')).state.messages, 3);
  });
});

test('at max_ack_pending an ack lets the next message go; a -NAK redelivers', async () => {
  await withJs(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'A', subjects: ['a'] });
    const js = nc.jetstream();
    for (let i = 0; i < 4; i++) await js.publish('a', enc.encode(String(i)));
    const inbox = createInbox();
    const got: Msg[] = [];
    let wake: () => void = () => {};
    nc.subscribe(inbox, {
      callback: (_e, m) => {
        got.push(m);
        wake();
      },
    });
    const until = (n: number): Promise<void> =>
      new Promise((resolve) => {
        wake = () => {
          if (got.length >= n) resolve();
        };
        wake();
      });
    await jsm.consumers.add(
      'A',
      consumerConfig({
        durable_name: 'c',
        deliver_subject: inbox,
        ack_policy: AckPolicy.Explicit,
        max_ack_pending: 2,
      }),
    );
    await until(2);
    await nc.flush();
    const held = await jsm.consumers.info('A', 'c');
    assert.deepEqual([held.num_ack_pending, held.num_pending, got.length], [2, 2, 2]);
    got[0]!.respond(Empty);
    await until(3);
    assert.equal(new TextDecoder().decode(got[2]!.data), '2');
    // A -NAK puts the message back at once (pending stays at the limit).
    got[1]!.respond(enc.encode('-NAK'));
    await until(4);
    assert.equal(new TextDecoder().decode(got[3]!.data), '1');
  });
});
