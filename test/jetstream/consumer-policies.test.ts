// Consumer settings beyond the basics: sample_freq ack metrics, replay original and
// rate_limit_bps (everything still arrives, in order), and a consumer without acks on an
// interest stream (its delivery is its ack).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AckPolicy, createInbox, RetentionPolicy, type Msg, type NatsConnection } from 'nats';
import { consumerConfig as config, take, withClient } from './client.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The first `n` messages of a new push consumer with `fields`. */
function pushed(
  nc: NatsConnection,
  stream: string,
  n: number,
  fields: Record<string, unknown>,
): Promise<Msg[]> {
  const deliver = createInbox();
  return take(nc, deliver, n, async () => {
    const jsm = await nc.jetstreamManager();
    await jsm.consumers.add(stream, config({ deliver_subject: deliver, ...fields }));
  });
}

test('sample_freq 100%: an ack metric for each ack', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'M', subjects: ['m'], storage: 'memory' as never });
    await nc.jetstream().publish('m', enc.encode('x'));
    const metrics = nc.subscribe('$JS.EVENT.METRIC.CONSUMER.ACK.M.sampled', { max: 1 });
    await jsm.consumers.add('M', {
      durable_name: 'sampled',
      ack_policy: AckPolicy.Explicit,
      sample_freq: '100%',
    });
    const m = await (await nc.jetstream().consumers.get('M', 'sampled')).next({ expires: 2000 });
    await m!.ackAck();
    for await (const e of metrics) {
      const body = JSON.parse(dec.decode(e.data)) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body), [
        'type',
        'id',
        'timestamp',
        'stream',
        'consumer',
        'consumer_seq',
        'stream_seq',
        'ack_time',
        'deliveries',
      ]);
      assert.deepEqual(
        [
          body.type,
          body.stream,
          body.consumer,
          body.consumer_seq,
          body.stream_seq,
          body.deliveries,
        ],
        ['io.nats.jetstream.metric.v1.consumer_ack', 'M', 'sampled', 1, 1, 1],
      );
    }
  });
});

test('replay original and rate_limit_bps deliver everything, in order', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'RP', subjects: ['rp'], storage: 'memory' as never });
    const js = nc.jetstream();
    for (let i = 0; i < 5; i++) await js.publish('rp', enc.encode(String(i)));
    const replayed = await pushed(nc, 'RP', 5, { replay_policy: 'original' });
    assert.deepEqual(
      replayed.map((m) => dec.decode(m.data)),
      ['0', '1', '2', '3', '4'],
    );
    const limited = await pushed(nc, 'RP', 5, { rate_limit_bps: 8000 });
    assert.deepEqual(
      limited.map((m) => dec.decode(m.data)),
      ['0', '1', '2', '3', '4'],
    );
  });
});

test('interest retention with a consumer without acks: delivered is done', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({
      name: 'IN',
      subjects: ['in'],
      retention: RetentionPolicy.Interest,
      storage: 'memory' as never,
    });
    const deliver = createInbox();
    const sub = nc.subscribe(deliver, { max: 2 });
    await jsm.consumers.add('IN', config({ deliver_subject: deliver, ack_policy: 'none' }));
    const js = nc.jetstream();
    await js.publish('in', enc.encode('a'));
    await js.publish('in', enc.encode('b'));
    const got: string[] = [];
    for await (const m of sub) got.push(dec.decode(m.data));
    assert.deepEqual(got, ['a', 'b']);
    assert.equal((await jsm.streams.info('IN')).state.messages, 0);
  });
});

// nats-server 2.9.10 -js answered these same steps alike: an empty reply each time, one ack
// pending until +OK.
test('an ack body nats-server does not know acknowledges nothing; AckSync still answers', async () => {
  await withClient(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'BODY', subjects: ['body'], storage: 'memory' as never });
    await nc.jetstream().publish('body', enc.encode('x'));
    await jsm.consumers.add('BODY', { durable_name: 'c', ack_policy: AckPolicy.Explicit });
    const m = await nc.request('$JS.API.CONSUMER.MSG.NEXT.BODY.c', enc.encode('{"batch":1}'), {
      timeout: 2000,
      noMux: true,
    });
    assert.ok(m.reply !== undefined && m.reply.startsWith('$JS.ACK.BODY.c.'));
    for (const body of ['junk', '+ACKNOWLEDGED', '+TERMS']) {
      const answer = await nc.request(m.reply, enc.encode(body), { timeout: 2000 });
      assert.equal(answer.data.length, 0, body);
      assert.equal((await jsm.consumers.info('BODY', 'c')).num_ack_pending, 1, body);
    }
    await nc.request(m.reply, enc.encode('+OK'), { timeout: 2000 });
    assert.equal((await jsm.consumers.info('BODY', 'c')).num_ack_pending, 0);
  });
});
