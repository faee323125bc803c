// Queue groups and durable queue groups.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { channelz } from '../../src/streaming/monitor.js';
import { closeStan, publishMany, sleep, subscribe, unsubscribe, withStan } from './stan.js';

describe('streaming queue groups', () => {
  it('each message goes to one member', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const a = await connect('a');
      const b = await connect('b');
      const ra = await subscribe(a, 'foo', a.subscriptionOptions(), 'g');
      const rb = await subscribe(b, 'foo', b.subscriptionOptions(), 'g');
      await publishMany(a, 'foo', 10);
      await sleep(100);
      const all = [...ra.seqs(), ...rb.seqs()].sort((x, y) => x - y);
      assert.deepEqual(all, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      assert.ok(ra.msgs.length > 0 && rb.msgs.length > 0, 'both members got messages');
      const subs = channelz(streaming.channels.get('foo')!, true).subscriptions!;
      assert.deepEqual(
        subs.map((s) => s.queue_name),
        ['g', 'g'],
      );
      assert.equal(streaming.outMsgs, 10);
    });
  });

  it('a member leaving hands its unacked messages to the others (redelivered)', async () => {
    await withStan({}, async ({ connect }) => {
      const a = await connect('a');
      const b = await connect('b');
      const ra = await subscribe(
        a,
        'foo',
        a.subscriptionOptions().setManualAckMode(true).setMaxInFlight(3),
        'g',
      );
      await publishMany(a, 'foo', 3);
      await ra.waitFor(3);
      const rb = await subscribe(b, 'foo', b.subscriptionOptions().setManualAckMode(true), 'g');
      const t0 = Date.now();
      await unsubscribe(ra.sub);
      await rb.waitFor(3, 2000);
      assert.ok(Date.now() - t0 < 1000);
      assert.deepEqual(rb.seqs(), [1, 2, 3]);
      assert.ok(rb.msgs.every((m) => m.isRedelivered()));
    });
  });

  it('a later member does not replay history; the group has one position', async () => {
    await withStan({}, async ({ connect }) => {
      const a = await connect('a');
      await publishMany(a, 'foo', 3);
      const ra = await subscribe(a, 'foo', a.subscriptionOptions().setDeliverAllAvailable(), 'g');
      await ra.waitFor(3);
      const b = await connect('b');
      const rb = await subscribe(b, 'foo', b.subscriptionOptions().setDeliverAllAvailable(), 'g');
      await sleep(100);
      assert.equal(rb.msgs.length, 0);
    });
  });

  it('the last member leaving removes a non-durable group', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const a = await connect('a');
      const ra = await subscribe(a, 'foo', a.subscriptionOptions(), 'g');
      await publishMany(a, 'foo', 2);
      await ra.waitFor(2);
      await unsubscribe(ra.sub, true);
      assert.equal(streaming.channels.get('foo')!.groups.size, 0);
      const rb = await subscribe(a, 'foo', a.subscriptionOptions().setDeliverAllAvailable(), 'g');
      await rb.waitFor(2);
    });
  });

  it('durable group: shadow kept on close, the next member takes over unacked and new messages', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      let a = await connect('a');
      const opts = (): ReturnType<typeof a.subscriptionOptions> =>
        a.subscriptionOptions().setDurableName('dur').setManualAckMode(true);
      const ra = await subscribe(a, 'foo', opts(), 'g');
      await publishMany(a, 'foo', 2);
      await ra.waitFor(2);
      ra.msgs[0]!.ack();
      await sleep(50);
      let subs = channelz(streaming.channels.get('foo')!, true).subscriptions!;
      assert.equal(subs[0]!.queue_name, 'dur:g');
      assert.equal(subs[0]!.is_durable, true);
      assert.equal(subs[0]!.durable_name, undefined);
      await closeStan(a);
      subs = channelz(streaming.channels.get('foo')!, true).subscriptions!;
      assert.equal(subs.length, 1);
      assert.equal(subs[0]!.is_offline, true);
      const p = await connect('p');
      await publishMany(p, 'foo', 2, 'later');
      a = await connect('a2');
      const rb = await subscribe(a, 'foo', opts(), 'g');
      await rb.waitFor(3);
      assert.deepEqual(rb.seqs(), [2, 3, 4]);
      assert.equal(rb.msgs[0]!.isRedelivered(), true);
    });
  });

  it('durable group: the last member unsubscribing destroys it', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const a = await connect('a');
      const ra = await subscribe(a, 'foo', a.subscriptionOptions().setDurableName('dur'), 'g');
      await unsubscribe(ra.sub);
      assert.equal(streaming.channels.get('foo')!.groups.size, 0);
      await publishMany(a, 'foo', 2);
      const rb = await subscribe(a, 'foo', a.subscriptionOptions().setDurableName('dur'), 'g');
      await sleep(100);
      assert.equal(rb.msgs.length, 0);
    });
  });

  it('a queue member redelivers to the group after AckWait', async () => {
    await withStan({}, async ({ connect }) => {
      const a = await connect('a');
      const ra = await subscribe(
        a,
        'foo',
        a.subscriptionOptions().setAckWait(1000).setManualAckMode(true),
        'g',
      );
      await publishMany(a, 'foo', 1);
      await ra.waitFor(2, 3000);
      assert.equal(ra.msgs[1]!.isRedelivered(), true);
      assert.equal(ra.msgs[1]!.getRedeliveryCount(), 1);
    });
  });
});
