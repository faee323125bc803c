// MaxInflight, AckWait and redelivery, manual acks, durables (close keeps them
// offline, unsubscribe deletes them, resume redelivers unacked messages first).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { channelz } from '../../src/streaming/monitor.js';
import {
  closeStan,
  publish,
  publishMany,
  sleep,
  subscribe,
  unsubscribe,
  withStan,
} from './stan.js';

describe('streaming acks and redelivery', () => {
  it('MaxInflight stalls the subscription until an ack', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const sc = await connect('me');
      const r = await subscribe(
        sc,
        'foo',
        sc.subscriptionOptions().setMaxInFlight(2).setManualAckMode(true),
      );
      await publishMany(sc, 'foo', 5);
      await r.waitFor(2);
      await sleep(100);
      assert.deepEqual(r.seqs(), [1, 2]);
      const sub = channelz(streaming.channels.get('foo')!, true).subscriptions![0]!;
      assert.equal(sub.pending_count, 2);
      assert.equal(sub.is_stalled, true);
      assert.equal(sub.last_sent, 2);
      r.msgs[0]!.ack();
      await r.waitFor(3);
      await sleep(50);
      assert.deepEqual(r.seqs(), [1, 2, 3]);
    });
  });

  it('redelivers after AckWait with the flag and a growing count; an ack stops it', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const sc = await connect('me');
      const r = await subscribe(
        sc,
        'foo',
        sc.subscriptionOptions().setAckWait(1000).setManualAckMode(true),
      );
      const t0 = Date.now();
      await publish(sc, 'foo', 'x');
      await r.waitFor(3, 4000);
      const [first, second, third] = r.msgs;
      assert.equal(first!.isRedelivered(), false);
      assert.equal(second!.isRedelivered(), true);
      assert.equal(second!.getRedeliveryCount(), 1);
      assert.equal(third!.getRedeliveryCount(), 2);
      assert.ok(Date.now() - t0 >= 1900, 'two AckWaits passed');
      assert.equal(streaming.outMsgs, 3);
      third!.ack();
      await sleep(1300);
      assert.equal(r.msgs.length, 3);
      assert.equal(
        channelz(streaming.channels.get('foo')!, true).subscriptions![0]!.pending_count,
        0,
      );
    });
  });

  it('messages sent at different times: only the unacked ones come again, in order, once per AckWait', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const sc = await connect('me');
      const r = await subscribe(
        sc,
        'foo',
        sc.subscriptionOptions().setAckWait(1000).setManualAckMode(true),
      );
      // Three bursts some milliseconds apart: their AckWaits end at different times.
      for (let burst = 0; burst < 3; burst++) {
        await publishMany(sc, 'foo', 5);
        await sleep(30);
      }
      await r.waitFor(15);
      for (const m of r.msgs) if (m.getSequence() % 2 === 0) m.ack();
      const odd = [1, 3, 5, 7, 9, 11, 13, 15];
      await r.waitFor(15 + odd.length, 4000);
      const again = r.msgs.slice(15);
      assert.deepEqual(
        again.map((m) => m.getSequence()),
        odd,
      );
      for (const m of again) {
        assert.equal(m.isRedelivered(), true);
        assert.equal(m.getRedeliveryCount(), 1);
        m.ack();
      }
      await sleep(1300);
      assert.equal(r.msgs.length, 15 + odd.length);
      assert.equal(streaming.channels.get('foo')!.plain[0]!.pending.size, 0);
    });
  });

  it('redelivery is forced while stalled: the same message keeps coming, nothing new', async () => {
    await withStan({}, async ({ connect }) => {
      const sc = await connect('me');
      const r = await subscribe(
        sc,
        'foo',
        sc.subscriptionOptions().setMaxInFlight(1).setAckWait(1000).setManualAckMode(true),
      );
      await publishMany(sc, 'foo', 3);
      await r.waitFor(2, 3000);
      assert.deepEqual(r.seqs(), [1, 1]);
      assert.equal(r.msgs[1]!.isRedelivered(), true);
      r.msgs[1]!.ack();
      await r.waitFor(3);
      assert.equal(r.seqs()[2], 2);
    });
  });

  it('auto ack: nothing is redelivered', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const sc = await connect('me');
      const r = await subscribe(sc, 'foo', sc.subscriptionOptions().setAckWait(1000));
      await publishMany(sc, 'foo', 3);
      await r.waitFor(3);
      await sleep(1200);
      assert.deepEqual(r.seqs(), [1, 2, 3]);
      assert.equal(streaming.channels.get('foo')!.plain[0]!.pending.size, 0);
    });
  });
});

describe('streaming durables', () => {
  it('close keeps the durable offline; resume redelivers unacked first, then new ones', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const sc = await connect('me');
      const opts = (): ReturnType<typeof sc.subscriptionOptions> =>
        sc
          .subscriptionOptions()
          .setDurableName('dur')
          .setManualAckMode(true)
          .setDeliverAllAvailable();
      await publishMany(sc, 'foo', 3);
      const r1 = await subscribe(sc, 'foo', opts());
      await r1.waitFor(3);
      r1.msgs[0]!.ack();
      await sleep(50);
      await unsubscribe(r1.sub, true);
      const ch = streaming.channels.get('foo')!;
      const offline = channelz(ch, true).subscriptions![0]!;
      assert.equal(offline.is_offline, true);
      assert.equal(offline.client_id, 'me');
      assert.equal(offline.pending_count, 2);
      await publishMany(sc, 'foo', 2, 'new');
      // NewOnly on resume: the start position is ignored.
      const r2 = await subscribe(
        sc,
        'foo',
        sc.subscriptionOptions().setDurableName('dur').setManualAckMode(true),
      );
      await r2.waitFor(4);
      assert.deepEqual(r2.seqs(), [2, 3, 4, 5]);
      assert.deepEqual(
        r2.msgs.map((m) => m.isRedelivered()),
        [true, true, false, false],
      );
    });
  });

  it('survives the client closing its connection and reconnecting with the same id', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      let sc = await connect('me');
      const r1 = await subscribe(sc, 'foo', sc.subscriptionOptions().setDurableName('dur'));
      await publishMany(sc, 'foo', 3);
      await r1.waitFor(3);
      await sleep(50);
      await closeStan(sc);
      assert.equal(streaming.clients.size, 0);
      assert.equal(streaming.channels.get('foo')!.subsCount, 1);
      const other = await connect('other');
      await publishMany(other, 'foo', 3, 'while-offline');
      sc = await connect('me');
      const r2 = await subscribe(sc, 'foo', sc.subscriptionOptions().setDurableName('dur'));
      await r2.waitFor(3);
      assert.deepEqual(r2.seqs(), [4, 5, 6]);
    });
  });

  it('unsubscribe deletes the durable: a new one starts from its own position', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const sc = await connect('me');
      await publishMany(sc, 'foo', 2);
      const r1 = await subscribe(
        sc,
        'foo',
        sc.subscriptionOptions().setDurableName('dur').setDeliverAllAvailable(),
      );
      await r1.waitFor(2);
      await unsubscribe(r1.sub);
      assert.equal(streaming.channels.get('foo')!.subsCount, 0);
      const r2 = await subscribe(
        sc,
        'foo',
        sc.subscriptionOptions().setDurableName('dur').setDeliverAllAvailable(),
      );
      await r2.waitFor(2);
      assert.deepEqual(r2.seqs(), [1, 2]);
    });
  });

  it('same durable name on two clients: two independent durables', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const a = await connect('a');
      const b = await connect('b');
      await subscribe(a, 'foo', a.subscriptionOptions().setDurableName('dur'));
      await subscribe(b, 'foo', b.subscriptionOptions().setDurableName('dur'));
      assert.equal(streaming.channels.get('foo')!.subsCount, 2);
    });
  });

  it('replace_durable: a second registration replaces the online one', async () => {
    await withStan({ replaceDurable: true }, async ({ connect, streaming }) => {
      const sc = await connect('me');
      await subscribe(sc, 'foo', sc.subscriptionOptions().setDurableName('dur'));
      await subscribe(sc, 'foo', sc.subscriptionOptions().setDurableName('dur'));
      assert.equal(streaming.channels.get('foo')!.subsCount, 1);
    });
    // Without it: 'stan: duplicate durable registration' (stan-pubsub.test.ts).
  });

  it('a plain subscription close is an unsubscribe', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const sc = await connect('me');
      const r = await subscribe(sc, 'foo', sc.subscriptionOptions());
      await unsubscribe(r.sub, true);
      assert.equal(streaming.channels.get('foo')!.subsCount, 0);
    });
  });
});
