// Advisories on $JS.EVENT.ADVISORY.>: stream and consumer actions, and the API audit of
// each request, in the order and with the fields nats-server 2.9.10 sends them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AckPolicy, connect } from 'nats';
import { withServer } from '../helpers/server.js';

test('stream and consumer actions, and the API audit', async () => {
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    const seen: { subject: string; body: Record<string, unknown> }[] = [];
    const sub = nc.subscribe('$JS.EVENT.ADVISORY.>');
    const done = (async () => {
      for await (const m of sub)
        seen.push({
          subject: m.subject,
          body: JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown>,
        });
    })();
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'AD', subjects: ['ad'], storage: 'memory' as never });
    await jsm.consumers.add('AD', { durable_name: 'c' });
    await jsm.consumers.delete('AD', 'c');
    await jsm.streams.delete('AD');
    await nc.flush();
    sub.unsubscribe();
    await done;
    await nc.close();
    assert.deepEqual(
      seen.map((x) => `${x.subject} ${String(x.body.type)}`),
      [
        '$JS.EVENT.ADVISORY.API io.nats.jetstream.advisory.v1.api_audit',
        '$JS.EVENT.ADVISORY.STREAM.CREATED.AD io.nats.jetstream.advisory.v1.stream_action',
        '$JS.EVENT.ADVISORY.API io.nats.jetstream.advisory.v1.api_audit',
        '$JS.EVENT.ADVISORY.CONSUMER.CREATED.AD.c io.nats.jetstream.advisory.v1.consumer_action',
        '$JS.EVENT.ADVISORY.API io.nats.jetstream.advisory.v1.api_audit',
        '$JS.EVENT.ADVISORY.CONSUMER.DELETED.AD.c io.nats.jetstream.advisory.v1.consumer_action',
        '$JS.EVENT.ADVISORY.API io.nats.jetstream.advisory.v1.api_audit',
        '$JS.EVENT.ADVISORY.STREAM.DELETED.AD io.nats.jetstream.advisory.v1.stream_action',
        '$JS.EVENT.ADVISORY.API io.nats.jetstream.advisory.v1.api_audit',
      ],
    );
    const created = seen[1]!.body;
    assert.deepEqual(Object.keys(created), ['type', 'id', 'timestamp', 'stream', 'action']);
    assert.deepEqual([created.stream, created.action], ['AD', 'create']);
    const audit = seen[2]!.body;
    assert.deepEqual(Object.keys(audit), [
      'type',
      'id',
      'timestamp',
      'server',
      'client',
      'subject',
      'request',
      'response',
    ]);
    assert.equal(audit.subject, '$JS.API.STREAM.CREATE.AD');
    assert.match(String(audit.response), /"did_create":true/);
    const consumer = seen[3]!.body;
    assert.deepEqual([consumer.stream, consumer.consumer, consumer.action], ['AD', 'c', 'create']);
  });
});

test('nak and terminate advisories, with the domain every advisory ends with', async () => {
  await withServer({ jetstream: { domain: 'hub' } }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    const seen: { subject: string; body: Record<string, unknown> }[] = [];
    const sub = nc.subscribe('$JS.EVENT.ADVISORY.CONSUMER.*.NK.c', {
      callback: (_e, m) =>
        m.subject.includes('.MSG_') &&
        seen.push({
          subject: m.subject,
          body: JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown>,
        }),
    });
    const jsm = await nc.jetstreamManager({ domain: 'hub' });
    await jsm.streams.add({ name: 'NK', subjects: ['nk'], storage: 'memory' as never });
    await jsm.consumers.add('NK', { durable_name: 'c', ack_policy: AckPolicy.Explicit });
    const js = nc.jetstream({ domain: 'hub' });
    await js.publish('nk');
    await js.publish('nk');
    const c = await js.consumers.get('NK', 'c');
    const batch = await c.fetch({ max_messages: 2, expires: 1000 });
    const got = [];
    for await (const m of batch) got.push(m);
    got[0]!.nak();
    got[1]!.term();
    await nc.flush();
    await nc.request('$JS.hub.API.INFO');
    sub.unsubscribe();
    await nc.close();
    // As nats-server 2.9.10 -js with `jetstream { domain: hub }` sends them.
    const fields = ['type', 'id', 'timestamp', 'stream', 'consumer', 'consumer_seq'];
    assert.deepEqual(
      seen.map((x) => [x.subject, Object.keys(x.body)]),
      [
        [
          '$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.NK.c',
          [...fields, 'stream_seq', 'deliveries', 'domain'],
        ],
        [
          '$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.NK.c',
          [...fields, 'stream_seq', 'deliveries', 'domain'],
        ],
      ],
    );
    const [nak, term] = seen.map((x) => x.body);
    assert.deepEqual(
      [nak!.type, nak!.consumer_seq, nak!.stream_seq, nak!.deliveries, nak!.domain],
      ['io.nats.jetstream.advisory.v1.nak', 1, 1, 1, 'hub'],
    );
    assert.deepEqual(
      [term!.type, term!.consumer_seq, term!.stream_seq, term!.deliveries, term!.domain],
      ['io.nats.jetstream.advisory.v1.terminated', 2, 2, 1, 'hub'],
    );
  });
});
