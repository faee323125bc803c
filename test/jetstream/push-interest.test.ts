// When a push consumer counts as listened to, as nats-server 2.9.10 decides it (its
// sublist's registerNotification): only a subscription on exactly the deliver subject
// (with the deliver group as queue when there is one) binds it and takes its messages;
// a wildcard subscription that happens to match does not. The expectations are the
// reference's answers to the same steps (run side by side on 2026-11-25). Before, a
// `>` tap in the account made every nats.js v3 KV watch fail with "consumer is already
// bound": the client reads push_bound from the create response.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect as connectV3 } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { connect } from 'nats';
import { withServer } from '../helpers/server.js';
import { consumerConfig } from './client.js';

test('a push consumer is bound by a literal subscription only, as the reference', async () => {
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'S', subjects: ['s'] });
      const js = nc.jetstream();
      await js.publish('s');
      await js.publish('s');
      const wild: string[] = [];
      nc.subscribe('dlv.*', { callback: (_e, m) => wild.push(m.subject) });
      const plain: string[] = [];
      nc.subscribe('grp.x', { callback: (_e, m) => plain.push(m.subject) });
      await nc.flush();
      const c = await jsm.consumers.add(
        'S',
        consumerConfig({ durable_name: 'c', deliver_subject: 'dlv.x', ack_policy: 'none' }),
      );
      const g = await jsm.consumers.add(
        'S',
        consumerConfig({
          durable_name: 'g',
          deliver_subject: 'grp.x',
          deliver_group: 'q',
          ack_policy: 'none',
        }),
      );
      assert.deepEqual([c.push_bound, g.push_bound], [undefined, undefined]);
      await nc.flush();
      const [ci, gi] = [await jsm.consumers.info('S', 'c'), await jsm.consumers.info('S', 'g')];
      assert.deepEqual(
        [ci.push_bound, ci.delivered.stream_seq, gi.push_bound, gi.delivered.stream_seq],
        [undefined, 0, undefined, 0],
      );
      assert.deepEqual([wild.length, plain.length], [0, 0]);

      // Subscribed (not iterated: leaving a loop would unsubscribe) until both got two.
      const got: string[] = [];
      let done = (): void => undefined;
      const both = new Promise<void>((r) => (done = r));
      const count = (_e: unknown, m: { subject: string }): void => {
        got.push(m.subject);
        if (got.length === 4) done();
      };
      nc.subscribe('dlv.x', { callback: count });
      nc.subscribe('grp.x', { queue: 'q', callback: count });
      await both;
      assert.deepEqual(got, ['s', 's', 's', 's']);
      await nc.flush();
      assert.deepEqual([wild.length, plain.length], [2, 2]);
      const bound = [await jsm.consumers.info('S', 'c'), await jsm.consumers.info('S', 'g')];
      assert.deepEqual(
        bound.map((i) => [i.push_bound, i.delivered.stream_seq]),
        [
          [true, 2],
          [true, 2],
        ],
      );
    } finally {
      await nc.close();
    }
  });
});

test('a v3 KV watch works while a `>` subscription listens in the account', async () => {
  await withServer({ jetstream: true }, async (s) => {
    const tap = await connect({ servers: `127.0.0.1:${s.port}` });
    const nc = await connectV3({ servers: `127.0.0.1:${s.port}` });
    try {
      tap.subscribe('>');
      await tap.flush();
      const kv = await new Kvm(nc).create('TAPPED');
      await kv.put('k', new TextEncoder().encode('v1'));
      const w = await kv.watch();
      for await (const e of w) {
        assert.deepEqual([e.key, e.string()], ['k', 'v1']);
        break;
      }
      const keys: string[] = [];
      for await (const k of await kv.keys()) keys.push(k);
      assert.deepEqual(keys, ['k']);
    } finally {
      await nc.close();
      await tap.close();
    }
  });
});
