// nats.js v2 (`nats`) against the embedded JetStream: streams, acked publishing with
// dedupe, pull (fetch, consume) and ordered consumers, and the client-side key-value and
// object stores, with nothing but `startServer({ jetstream: true })`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AckPolicy, connect, StringCodec } from 'nats';
import { withServer } from '../helpers/server.js';
import { withClient } from './client.js';

const sc = StringCodec();

test('INFO says jetstream: true only when it is on', async () => {
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    assert.equal(nc.info?.jetstream, true);
    await nc.close();
  });
  await withServer({}, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    assert.equal(nc.info?.jetstream, undefined);
    await nc.close();
  });
});

test('publish with acks and dedupe, then pull: fetch, consume, ack floor', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'ORD', subjects: ['ord.>'] });
    const js = nc.jetstream();
    for (let i = 0; i < 5; i++) {
      const ack = await js.publish(`ord.${i}`, sc.encode(`m${i}`), { msgID: `id${i}` });
      assert.deepEqual([ack.stream, ack.seq, ack.duplicate], ['ORD', i + 1, false]);
    }
    const dup = await js.publish('ord.0', sc.encode('again'), { msgID: 'id0' });
    assert.deepEqual([dup.seq, dup.duplicate], [1, true]);
    await assert.rejects(
      js.publish('ord.9', sc.encode('x'), { expect: { lastSequence: 1 } }),
      /wrong last sequence: 5/,
    );
    assert.equal((await jsm.streams.info('ORD')).state.messages, 5);

    await jsm.consumers.add('ORD', { durable_name: 'c1', ack_policy: AckPolicy.Explicit });
    const c = await js.consumers.get('ORD', 'c1');
    const fetched: string[] = [];
    for await (const m of await c.fetch({ max_messages: 3, expires: 2000 })) {
      fetched.push(`${m.subject}=${sc.decode(m.data)}@${m.seq}`);
      m.ack();
    }
    assert.deepEqual(fetched, ['ord.0=m0@1', 'ord.1=m1@2', 'ord.2=m2@3']);
    const consumed: number[] = [];
    const it = await c.consume({ max_messages: 10 });
    for await (const m of it) {
      consumed.push(m.seq);
      await m.ackAck();
      if (consumed.length === 2) break;
    }
    assert.deepEqual(consumed, [4, 5]);
    const info = await jsm.consumers.info('ORD', 'c1');
    assert.deepEqual(
      [
        info.delivered.stream_seq,
        info.ack_floor.stream_seq,
        info.num_ack_pending,
        info.num_pending,
      ],
      [5, 5, 0, 0],
    );
  });
});

test('an unacked message comes back after ack_wait; -NAK redelivers at once', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'R', subjects: ['r'], storage: 'memory' as never });
    const js = nc.jetstream();
    await js.publish('r', sc.encode('once'));
    await jsm.consumers.add('R', {
      durable_name: 'w',
      ack_policy: AckPolicy.Explicit,
      ack_wait: 300_000_000,
    });
    const c = await js.consumers.get('R', 'w');
    const first = await c.next({ expires: 2000 });
    assert.equal(first?.info.deliveryCount, 1);
    const second = await c.next({ expires: 3000 });
    assert.equal(second?.info.deliveryCount, 2);
    second.nak();
    const third = await c.next({ expires: 2000 });
    assert.equal(third?.info.deliveryCount, 3);
    third.ack();
    const info = await jsm.consumers.info('R', 'w');
    assert.equal(info.num_redelivered, 0);
    assert.equal((await c.next({ expires: 1000 })) ?? null, null);
  });
});

test('ordered consumer, key-value and object store through the client views', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'E', subjects: ['e.*'] });
    const js = nc.jetstream();
    await js.publish('e.1', sc.encode('one'));
    const oc = await js.consumers.get('E');
    assert.equal(sc.decode((await oc.next())!.data), 'one');

    const kv = await js.views.kv('cfg', { history: 5 });
    await kv.put('a', sc.encode('1'));
    await kv.put('a', sc.encode('2'));
    assert.equal(sc.decode((await kv.get('a'))!.value), '2');
    await kv.create('b', sc.encode('x'));
    await assert.rejects(kv.create('b', sc.encode('y')));
    const rev = (await kv.get('b'))!.revision;
    await kv.update('b', sc.encode('z'), rev);
    const keys: string[] = [];
    for await (const k of await kv.keys()) keys.push(k);
    assert.deepEqual(keys.sort(), ['a', 'b']);
    const history: string[] = [];
    for await (const e of await kv.history({ key: 'a' })) history.push(sc.decode(e.value));
    assert.deepEqual(history, ['1', '2']);
    await kv.delete('a');
    assert.equal((await kv.get('a'))?.operation, 'DEL');

    const os = await js.views.os('files');
    const blob = new Uint8Array(300_000).map((_, i) => i % 251);
    await os.putBlob({ name: 'f1' }, blob);
    assert.deepEqual(await os.getBlob('f1'), blob);
    const names: string[] = [];
    for (const i of await os.list()) names.push(i.name);
    assert.deepEqual(names, ['f1']);
  });
});
