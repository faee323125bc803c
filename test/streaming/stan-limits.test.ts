// Store limits as the streaming server applies them: max_msgs / max_bytes evict
// the oldest (first_seq moves), max_age expires, max_subs refuses, max_inactivity
// deletes idle channels, per-channel limits with wildcards.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  publish,
  publishMany,
  sleep,
  subscribe,
  subscribeError,
  withStan,
  eventually,
} from './stan.js';

describe('streaming store limits', () => {
  it('max_msgs: the oldest go, first_seq moves, a First subscriber starts at it', async () => {
    await withStan({ limits: { maxMsgs: 5 } }, async ({ connect, streaming }) => {
      const sc = await connect('me');
      await publishMany(sc, 'foo', 10);
      const msgs = streaming.channels.get('foo')!.store.msgs;
      assert.deepEqual([msgs.count, msgs.firstSequence, msgs.lastSequence], [5, 6, 10]);
      const r = await subscribe(sc, 'foo', sc.subscriptionOptions().setDeliverAllAvailable());
      await r.waitFor(5);
      assert.deepEqual(r.seqs(), [6, 7, 8, 9, 10]);
    });
  });

  it('a slow durable loses messages to the limits and jumps to the first available', async () => {
    await withStan({ limits: { maxMsgs: 3 } }, async ({ connect }) => {
      const sc = await connect('me');
      const r = await subscribe(
        sc,
        'foo',
        sc.subscriptionOptions().setDurableName('d').setMaxInFlight(1).setManualAckMode(true),
      );
      await publish(sc, 'foo', 'first');
      await r.waitFor(1);
      await publishMany(sc, 'foo', 5);
      r.msgs[0]!.ack();
      await r.waitFor(2);
      assert.deepEqual(r.seqs(), [1, 4]);
    });
  });

  it('max_bytes keeps the newest message even when it alone is larger', async () => {
    await withStan({ limits: { maxBytes: 100 } }, async ({ connect, streaming }) => {
      const sc = await connect('me');
      await publish(sc, 'foo', 'a');
      await publish(sc, 'foo', Buffer.alloc(300));
      const msgs = streaming.channels.get('foo')!.store.msgs;
      assert.deepEqual([msgs.count, msgs.firstSequence], [1, 2]);
    });
  });

  it('max_age: messages expire, sequences go on', async () => {
    await withStan({ limits: { maxAge: 300 } }, async ({ connect, streaming }) => {
      const sc = await connect('me');
      await publishMany(sc, 'foo', 3);
      const msgs = streaming.channels.get('foo')!.store.msgs;
      await eventually(() => msgs.count === 0, 'messages expired', 3000);
      assert.deepEqual([msgs.firstSequence, msgs.lastSequence], [4, 3]);
      await publish(sc, 'foo', 'next');
      assert.equal(msgs.lastSequence, 4);
    });
  });

  it('max_subs: "too many subscriptions per channel", offline durables count', async () => {
    await withStan({ limits: { maxSubscriptions: 2 } }, async ({ connect }) => {
      const sc = await connect('me');
      const r = await subscribe(sc, 'foo', sc.subscriptionOptions().setDurableName('d'));
      r.sub.close();
      await sleep(50);
      await subscribe(sc, 'foo', sc.subscriptionOptions());
      assert.equal(
        await subscribeError(sc, 'foo', sc.subscriptionOptions()),
        'too many subscriptions per channel',
      );
    });
  });

  it('max_inactivity deletes an idle channel without active subscriptions only', async () => {
    await withStan({ limits: { maxInactivity: 300 } }, async ({ connect, streaming }) => {
      const sc = await connect('me');
      await publish(sc, 'tmp', 'x');
      await subscribe(sc, 'kept', sc.subscriptionOptions());
      await publish(sc, 'kept', 'x');
      await eventually(() => !streaming.channels.has('tmp'), 'tmp deleted', 3000);
      await sleep(400);
      assert.ok(streaming.channels.has('kept'));
      // A deleted channel comes back on next use, from sequence 1.
      await publish(sc, 'tmp', 'again');
      assert.equal(streaming.channels.get('tmp')!.store.msgs.lastSequence, 1);
    });
  });

  it('per-channel limits with wildcards', async () => {
    await withStan(
      { limits: { maxMsgs: 1000, perChannel: { 'foo.*': { maxMsgs: 3 } } } },
      async ({ connect, streaming }) => {
        const sc = await connect('me');
        await publishMany(sc, 'foo.a', 5);
        await publishMany(sc, 'bar', 5);
        assert.equal(streaming.channels.get('foo.a')!.store.msgs.count, 3);
        assert.equal(streaming.channels.get('bar')!.store.msgs.count, 5);
      },
    );
  });

  it('invalid limits stop the server from starting', async () => {
    await assert.rejects(
      withStan({ limits: { maxMsgs: -1 } }, () => Promise.resolve()),
      /max messages limit cannot be negative \(-1\)/,
    );
  });
});
