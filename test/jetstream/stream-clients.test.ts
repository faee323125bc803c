// The stream rules through the official clients, as applications meet them: nats.js v3
// (@nats-io/jetstream) and nats v2's jetstream(). Publish expectations and dedupe come
// back as the clients' own errors and PubAck fields, republished messages reach plain
// subscribers, roll-ups, deny and seal hold, limits refuse with the reference's codes, and
// the retention policies keep what they should. (The exact bytes of every answer are
// checked against the reference in streams.test.ts.)

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect as connectV3, headers as headersV3 } from '@nats-io/transport-node';
import {
  AckPolicy as AckPolicyV3,
  DiscardPolicy,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import { AckPolicy, connect, headers, NatsError, StringCodec } from 'nats';
import { withServer } from '../helpers/server.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The API error code (err_code) a v3 call failed with. */
async function v3Code(p: Promise<unknown>): Promise<number> {
  try {
    await p;
  } catch (err) {
    if (err instanceof JetStreamApiError) return err.code;
    throw err;
  }
  throw new Error('expected a JetStream API error');
}

type V3 = Awaited<ReturnType<typeof connectV3>>;

/** A v3 connection with its JetStream contexts to a fresh embedded JetStream. */
async function withV3(
  body: (
    nc: V3,
    jsm: Awaited<ReturnType<typeof jetstreamManager>>,
    js: ReturnType<typeof jetstream>,
  ) => Promise<void>,
): Promise<void> {
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connectV3({ servers: `127.0.0.1:${s.port}` });
    try {
      await body(nc, await jetstreamManager(nc), jetstream(nc));
    } finally {
      await nc.close();
    }
  });
}

test('v3: expectations, dedupe, republish, rollups, deny, seal and limits', async () => {
  await withV3(async (nc, jsm, js) => {
    await jsm.streams.add({
      name: 'ORDERS',
      subjects: ['orders.*'],
      storage: StorageType.Memory,
      allow_rollup_hdrs: true,
      republish: { src: 'orders.*', dest: 'seen.$1' },
    });
    const seen = nc.subscribe('seen.>', { max: 1 });

    const first = await js.publish('orders.a', enc.encode('one'), { msgID: 'm1' });
    assert.deepEqual([first.stream, first.seq, first.duplicate], ['ORDERS', 1, false]);
    const again = await js.publish('orders.a', enc.encode('one'), { msgID: 'm1' });
    assert.deepEqual([again.seq, again.duplicate], [1, true]);

    for await (const m of seen) {
      assert.equal(m.subject, 'seen.a');
      assert.equal(dec.decode(m.data), 'one');
      assert.deepEqual(
        ['Nats-Stream', 'Nats-Subject', 'Nats-Sequence', 'Nats-Last-Sequence'].map((k) =>
          m.headers?.get(k),
        ),
        ['ORDERS', 'orders.a', '1', '0'],
      );
    }

    // Each expectation refused with its code, then met.
    assert.equal(
      await v3Code(js.publish('orders.b', enc.encode('x'), { expect: { streamName: 'NO' } })),
      10060,
    );
    assert.equal(
      await v3Code(js.publish('orders.b', enc.encode('x'), { expect: { lastSequence: 9 } })),
      10071,
    );
    assert.equal(
      await v3Code(js.publish('orders.a', enc.encode('x'), { expect: { lastSubjectSequence: 0 } })),
      10071,
    );
    assert.equal(
      await v3Code(js.publish('orders.b', enc.encode('x'), { expect: { lastMsgID: 'zz' } })),
      10070,
    );
    const met = await js.publish('orders.b', enc.encode('two'), {
      expect: { streamName: 'ORDERS', lastSequence: 1, lastSubjectSequence: 0, lastMsgID: 'm1' },
    });
    assert.equal(met.seq, 2);

    // A roll-up of the subject keeps only the new message on it.
    await js.publish('orders.a', enc.encode('three'));
    const h = headersV3();
    h.set('Nats-Rollup', 'sub');
    await js.publish('orders.a', enc.encode('rolled'), { headers: h });
    const info = await jsm.streams.info('ORDERS', { subjects_filter: '>' });
    assert.deepEqual(info.state.subjects, { 'orders.a': 1, 'orders.b': 1 });

    // Deny delete and purge, then seal: what each refuses.
    const cfg = info.config;
    const denied = await jsm.streams.update('ORDERS', {
      ...cfg,
      allow_rollup_hdrs: false,
      deny_delete: true,
      deny_purge: true,
    });
    assert.equal(await v3Code(jsm.streams.deleteMessage('ORDERS', 1)), 10057);
    assert.equal(await v3Code(jsm.streams.purge('ORDERS')), 10110);
    // The client's update type leaves sealed out; the server takes it.
    const seal: Partial<typeof cfg> = { ...denied.config, sealed: true };
    const unseal: Partial<typeof cfg> = { ...denied.config, sealed: false };
    const sealed = await jsm.streams.update('ORDERS', seal);
    assert.deepEqual(
      [sealed.config.sealed, sealed.config.deny_delete, sealed.config.allow_rollup_hdrs],
      [true, true, false],
    );
    assert.equal(await v3Code(js.publish('orders.c', enc.encode('late'))), 10109);
    assert.equal(await v3Code(jsm.streams.update('ORDERS', unseal)), 10052);

    // Limits: discard new refuses past max_msgs, max_msg_size refuses large messages.
    await jsm.streams.add({
      name: 'LIMITED',
      subjects: ['lim'],
      storage: StorageType.Memory,
      max_msgs: 1,
      max_msg_size: 8,
      discard: DiscardPolicy.New,
    });
    await js.publish('lim', enc.encode('ok'));
    assert.equal(await v3Code(js.publish('lim', enc.encode('full'))), 10077);
    assert.equal(await v3Code(js.publish('lim', enc.encode('far too large'))), 10054);
  });
});

test('v3: workqueue and interest retention keep what their consumers have not acked', async () => {
  await withV3(async (_nc, jsm, js) => {
    await jsm.streams.add({
      name: 'JOBS',
      subjects: ['jobs.*'],
      retention: RetentionPolicy.Workqueue,
    });
    await jsm.consumers.add('JOBS', {
      durable_name: 'a',
      ack_policy: AckPolicyV3.Explicit,
      filter_subject: 'jobs.a',
    });
    // Workqueue consumers may not overlap, and must ack explicitly.
    assert.equal(
      await v3Code(
        jsm.consumers.add('JOBS', { durable_name: 'b', ack_policy: AckPolicyV3.Explicit }),
      ),
      10099,
    );
    assert.equal(
      await v3Code(
        jsm.consumers.add('JOBS', {
          durable_name: 'n',
          ack_policy: AckPolicyV3.None,
          filter_subject: 'jobs.n',
        }),
      ),
      10084,
    );
    await js.publish('jobs.a', enc.encode('work'));
    const c = await js.consumers.get('JOBS', 'a');
    const m = await c.next({ expires: 2000 });
    assert.equal(m === null ? '' : dec.decode(m.data), 'work');
    assert.equal(await m?.ackAck(), true);
    assert.equal((await jsm.streams.info('JOBS')).state.messages, 0);

    await jsm.streams.add({
      name: 'NEWS',
      subjects: ['news'],
      retention: RetentionPolicy.Interest,
      storage: StorageType.Memory,
    });
    // Nobody is interested yet: the sequence is used, nothing is kept.
    assert.equal((await js.publish('news', enc.encode('unheard'))).seq, 1);
    const st = (await jsm.streams.info('NEWS')).state;
    assert.deepEqual([st.messages, st.last_seq], [0, 1]);
  });
});

test('v2: expectations and dedupe as errors and PubAck fields, headers-only republish', async () => {
  const sc = StringCodec();
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({
        name: 'KV2',
        subjects: ['k2.>'],
        max_msgs_per_subject: 1,
        republish: { src: 'k2.>', dest: 'out2.>', headers_only: true },
      });
      const out = nc.subscribe('out2.>', { max: 1 });
      const js = nc.jetstream();
      const ack = await js.publish('k2.x.y', sc.encode('12345'), { msgID: 'a' });
      assert.deepEqual([ack.stream, ack.seq, ack.duplicate], ['KV2', 1, false]);
      assert.equal(
        (await js.publish('k2.x.y', sc.encode('12345'), { msgID: 'a' })).duplicate,
        true,
      );
      for await (const m of out) {
        assert.equal(m.subject, 'out2.x.y');
        assert.equal(m.data.length, 0);
        assert.equal(m.headers?.get('Nats-Msg-Size'), '5');
      }
      const h = headers();
      h.set('Nats-Expected-Last-Subject-Sequence', '1');
      const next = await js.publish('k2.x.y', sc.encode('6'), { headers: h });
      assert.equal(next.seq, 2);
      await assert.rejects(
        js.publish('k2.x.y', sc.encode('7'), { expect: { lastSubjectSequence: 1 } }),
        (err: unknown) =>
          err instanceof NatsError &&
          err.api_error?.err_code === 10071 &&
          err.message === 'wrong last sequence: 2',
      );
      // One message per subject kept, the newest.
      const info = await jsm.streams.info('KV2');
      assert.deepEqual([info.state.messages, info.state.first_seq], [1, 2]);
      await jsm.consumers.add('KV2', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
      assert.equal((await jsm.streams.info('KV2')).state.consumer_count, 1);
    } finally {
      await nc.close();
    }
  });
});
