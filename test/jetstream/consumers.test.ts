// Push consumers (deliver subject, heartbeats, flow control, headers_only), the pull
// status messages, and the retention policies that consumers drive (work queue and
// interest), through the nats v2 client and raw requests.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AckPolicy, createInbox, DeliverPolicy, RetentionPolicy, type Msg } from 'nats';
import { consumerConfig as config, take, withClient } from './client.js';

const enc = new TextEncoder();

const dec = new TextDecoder();

test('push consumer: messages under their subjects, then an idle heartbeat', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'P', subjects: ['p.*'], storage: 'memory' as never });
    const js = nc.jetstream();
    await js.publish('p.1', enc.encode('a'));
    await js.publish('p.2', enc.encode('b'));
    const deliver = createInbox();
    const got = await take(nc, deliver, 3, async () => {
      await jsm.consumers.add(
        'P',
        config({
          durable_name: 'push',
          deliver_subject: deliver,
          ack_policy: AckPolicy.None,
          idle_heartbeat: 200_000_000,
          flow_control: true,
        }),
      );
    });
    assert.deepEqual(
      got.slice(0, 2).map((m) => `${m.subject}=${dec.decode(m.data)}`),
      ['p.1=a', 'p.2=b'],
    );
    assert.match(got[0]!.reply ?? '', /^\$JS\.ACK\.P\.push\.1\.1\.1\.\d+\.1$/);
    const hb = got[2]!;
    const h = hb.headers!;
    assert.deepEqual(
      [h.code, h.description, h.get('Nats-Last-Consumer'), h.get('Nats-Last-Stream')],
      [100, 'Idle Heartbeat', '2', '2'],
    );
  });
});

test('headers_only delivers the headers and Nats-Msg-Size, not the data', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'H', subjects: ['h'], storage: 'memory' as never });
    await nc.jetstream().publish('h', enc.encode('12345'));
    const deliver = createInbox();
    const [m] = await take(nc, deliver, 1, async () => {
      await jsm.consumers.add('H', config({ deliver_subject: deliver, headers_only: true }));
    });
    assert.equal(m!.data.length, 0);
    assert.equal(m!.headers?.get('Nats-Msg-Size'), '5');
  });
});

test('pull status messages: 404, 408 with pending counts, 409 for max waiting and push', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'Q', subjects: ['q'], storage: 'memory' as never });
    await jsm.consumers.add('Q', {
      durable_name: 'pull',
      ack_policy: AckPolicy.Explicit,
      max_waiting: 1,
    });
    await jsm.consumers.add('Q', config({ durable_name: 'push', deliver_subject: 'nowhere' }));
    const next = async (consumer: string, body: unknown): Promise<Msg> =>
      nc.request(`$JS.API.CONSUMER.MSG.NEXT.Q.${consumer}`, enc.encode(JSON.stringify(body)), {
        timeout: 3000,
        noMux: true,
      });
    const status = (m: Msg): string => `${m.headers?.code} ${m.headers?.description}`;
    assert.equal(status(await next('pull', { batch: 1, no_wait: true })), '404 No Messages');
    const timeout = await next('pull', { batch: 3, expires: 200_000_000 });
    assert.equal(status(timeout), '408 Request Timeout');
    const th = timeout.headers!;
    assert.deepEqual([th.get('Nats-Pending-Messages'), th.get('Nats-Pending-Bytes')], ['3', '0']);
    assert.equal(status(await next('push', {})), '409 Consumer is push based');
    // One request waits; the second passes max_waiting.
    const inbox = createInbox();
    nc.subscribe(inbox, { max: 1 });
    nc.publish(
      '$JS.API.CONSUMER.MSG.NEXT.Q.pull',
      enc.encode(JSON.stringify({ batch: 1, expires: 2e9 })),
      { reply: inbox },
    );
    await nc.flush();
    assert.equal(status(await next('pull', { batch: 1, expires: 1e9 })), '409 Exceeded MaxWaiting');
    const info = await jsm.consumers.info('Q', 'pull');
    assert.equal(info.num_waiting, 1);
  });
});

test('work queue retention: an acked message leaves the stream', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({
      name: 'W',
      subjects: ['w'],
      retention: RetentionPolicy.Workqueue,
      storage: 'memory' as never,
    });
    const js = nc.jetstream();
    await js.publish('w', enc.encode('job'));
    await jsm.consumers.add('W', { durable_name: 'worker', ack_policy: AckPolicy.Explicit });
    await assert.rejects(
      jsm.consumers.add('W', { durable_name: 'second', ack_policy: AckPolicy.Explicit }),
      /multiple non-filtered consumers not allowed on workqueue stream/,
    );
    const m = await (await js.consumers.get('W', 'worker')).next({ expires: 2000 });
    assert.equal(dec.decode(m!.data), 'job');
    assert.equal(await m!.ackAck(), true);
    assert.equal((await jsm.streams.info('W')).state.messages, 0);
  });
});

test('interest retention: kept until every consumer acked, dropped without consumers', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({
      name: 'I',
      subjects: ['i'],
      retention: RetentionPolicy.Interest,
      storage: 'memory' as never,
    });
    const js = nc.jetstream();
    const none = await js.publish('i', enc.encode('lost'));
    assert.equal(none.seq, 1);
    assert.equal((await jsm.streams.info('I')).state.messages, 0);
    for (const d of ['a', 'b'])
      await jsm.consumers.add('I', {
        durable_name: d,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
      });
    await js.publish('i', enc.encode('kept'));
    const a = await (await js.consumers.get('I', 'a')).next({ expires: 2000 });
    await a!.ackAck();
    assert.equal((await jsm.streams.info('I')).state.messages, 1);
    const b = await (await js.consumers.get('I', 'b')).next({ expires: 2000 });
    await b!.ackAck();
    assert.equal((await jsm.streams.info('I')).state.messages, 0);
  });
});

test('push consumer with explicit acks and a filter: acks move the ack floor', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'J', subjects: ['j.>'], storage: 'memory' as never });
    const js = nc.jetstream();
    for (let i = 0; i < 20; i++) await js.publish(`j.${i % 3}`, enc.encode(String(i)));
    const deliver = createInbox();
    const got = await take(nc, deliver, 7, async () => {
      await jsm.consumers.add(
        'J',
        config({
          durable_name: 'jd',
          deliver_subject: deliver,
          ack_policy: AckPolicy.Explicit,
          filter_subject: 'j.1',
        }),
      );
    });
    assert.deepEqual(
      got.map((m) => dec.decode(m.data)),
      ['1', '4', '7', '10', '13', '16', '19'],
    );
    for (const m of got.slice(0, 3)) await nc.request(m.reply!, enc.encode('+ACK'));
    // As nats-server 2.9.10: the stream floor goes up to just below the next pending (11).
    const info = await jsm.consumers.info('J', 'jd');
    assert.deepEqual(
      [info.num_ack_pending, info.ack_floor.consumer_seq, info.ack_floor.stream_seq],
      [4, 3, 10],
    );
  });
});
