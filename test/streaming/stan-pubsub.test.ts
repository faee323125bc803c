// Publish, PubAck, channel creation and names, subscription validation and start
// positions, with node-nats-streaming (and raw requests for exact error texts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  PubAck,
  PubMsg,
  SubscriptionRequest,
  SubscriptionResponse,
} from '../../src/streaming/protocol/index.js';
import { natsConnect, request } from './raw.js';
import {
  StartPosition,
  publish,
  publishMany,
  sleep,
  subscribe,
  subscribeError,
  withStan,
} from './stan.js';

describe('streaming publish', () => {
  it('acks with the guid once stored; sequences from 1; channel stats', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const sc = await connect('pub');
      const guids = await Promise.all([1, 2, 3].map((i) => publish(sc, 'foo', `m${i}`)));
      assert.equal(new Set(guids).size, 3);
      const ch = streaming.channels.get('foo')!;
      assert.equal(ch.store.msgs.count, 3);
      assert.equal(ch.store.msgs.firstSequence, 1);
      assert.equal(ch.store.msgs.lastSequence, 3);
      assert.equal(streaming.inMsgs, 3);
    });
  });

  it('refuses invalid channel names, unknown clients, and different cases', async () => {
    await withStan({}, async ({ url, connect, streaming }) => {
      const sc = await connect('me');
      await publish(sc, 'foo', 'x');
      const nc = await natsConnect(url);
      try {
        const pub = async (subject: string, clientID = 'me', guid = 'g'): Promise<string> => {
          const r = await request(
            nc,
            '_STAN.pub.test-cluster.x',
            PubMsg.encode({ clientID, guid, subject, data: Buffer.from('d') }).finish(),
          );
          return PubAck.decode(r!).error;
        };
        for (const bad of ['foo.*', 'foo..bar', '', 'foo.>', '.foo', 'foo.', 'a/b']) {
          assert.equal(await pub(bad), 'stan: invalid publish request', bad);
        }
        assert.equal(await pub('foo', 'nobody'), 'stan: invalid publish request');
        assert.equal(await pub('foo', 'me', ''), 'stan: invalid publish request');
        assert.match(await pub('Foo'), /different cases not allowed/);
        assert.equal(
          await pub('Foo'),
          'rejecting channel "Foo" because channel "foo" alreay exists (different cases not allowed)',
        );
        assert.equal(await pub('bar'), '');
        assert.deepEqual([...streaming.channels.keys()].sort(), ['bar', 'foo']);
      } finally {
        await nc.close();
      }
    });
  });

  it('max_channels: the third channel is refused with "too many channels"', async () => {
    await withStan({ limits: { maxChannels: 2 } }, async ({ connect }) => {
      const sc = await connect('me');
      await publish(sc, 'a', 'x');
      await publish(sc, 'b', 'x');
      await assert.rejects(publish(sc, 'c', 'x'), /too many channels/);
    });
  });
});

describe('streaming subscribe', () => {
  it('refuses bad requests with the reference texts, in its order', async () => {
    await withStan({}, async ({ url, connect }) => {
      await connect('me');
      const nc = await natsConnect(url);
      try {
        const sub = async (over: Record<string, unknown>): Promise<string> => {
          const r = await request(
            nc,
            '_STAN.sub.test-cluster',
            SubscriptionRequest.encode({
              clientID: 'me',
              subject: 'foo',
              inbox: '_INBOX.x',
              maxInFlight: 10,
              ackWaitInSecs: 30,
              ...over,
            }).finish(),
          );
          return SubscriptionResponse.decode(r!).error;
        };
        assert.equal(await sub({ clientID: '' }), 'stan: clientID missing');
        assert.equal(
          await sub({ ackWaitInSecs: 0 }),
          'stan: invalid ack wait time, should be >= 1s',
        );
        assert.equal(await sub({ maxInFlight: 0 }), 'stan: invalid MaxInflight, should be >= 1');
        assert.equal(await sub({ startPosition: 7 }), 'stan: invalid start position');
        assert.equal(await sub({ subject: 'foo.>' }), 'stan: invalid subject');
        assert.equal(await sub({ subject: 'foo.*' }), 'stan: invalid subject');
        assert.equal(await sub({ clientID: 'ghost' }), 'stan: unknown clientID');
        assert.equal(
          await sub({ qGroup: 'g', durableName: 'a:b' }),
          "stan: durable name of a durable queue subscriber can't contain the character ':'",
        );
        // Order: ack wait is checked before max inflight, both before the client.
        assert.equal(
          await sub({ clientID: 'ghost', ackWaitInSecs: 0, maxInFlight: 0 }),
          'stan: invalid ack wait time, should be >= 1s',
        );
        assert.equal(await sub({}), '');
      } finally {
        await nc.close();
      }
    });
  });

  it('subscribing creates the channel', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const sc = await connect('me');
      await subscribe(sc, 'bar', sc.subscriptionOptions());
      const ch = streaming.channels.get('bar')!;
      assert.equal(ch.store.msgs.count, 0);
      assert.equal(ch.store.msgs.firstSequence, 0);
      assert.equal(ch.store.msgs.lastSequence, 0);
    });
  });

  it('duplicate durable registration', async () => {
    await withStan({}, async ({ connect }) => {
      const sc = await connect('me');
      await subscribe(sc, 'foo', sc.subscriptionOptions().setDurableName('dur'));
      assert.equal(
        await subscribeError(sc, 'foo', sc.subscriptionOptions().setDurableName('dur')),
        'stan: duplicate durable registration',
      );
    });
  });

  it('start positions over messages 1..10', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const sc = await connect('me');
      await publishMany(sc, 'foo', 8);
      await sleep(30);
      const mark = Date.now();
      await sleep(30);
      await publishMany(sc, 'foo', 2, 'late');
      type Options = ReturnType<typeof sc.subscriptionOptions>;
      const o = (): Options => sc.subscriptionOptions();
      // Options are made when their subscription is: the time delta counts back from
      // the moment it subscribes, however long the subscriptions before it took.
      const cases: [string, () => Options, number[]][] = [
        ['new only', () => o(), []],
        ['last received', () => o().setStartWithLastReceived(), [10]],
        ['first', () => o().setDeliverAllAvailable(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
        ['sequence 5', () => o().setStartAtSequence(5), [5, 6, 7, 8, 9, 10]],
        ['sequence 50', () => o().setStartAtSequence(50), []],
        [
          'sequence 0',
          () => o().setStartAt(StartPosition.SEQUENCE_START),
          [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        ],
        ['time delta', () => o().setStartAtTimeDelta(Date.now() - mark), [9, 10]],
      ];
      const subs = [];
      for (const [name, opts, want] of cases) {
        const r = await subscribe(sc, 'foo', opts());
        if (want.length > 0) await r.waitFor(want.length);
        subs.push({ name, r, want });
      }
      await sleep(50);
      for (const { name, r, want } of subs) assert.deepEqual(r.seqs(), want, name);
      await publish(sc, 'foo', 'eleven');
      for (const { name, r, want } of subs) {
        await r.waitFor(want.length + 1);
        assert.equal(r.seqs().at(-1), 11, name);
      }
      assert.equal(streaming.outMsgs, 10 + 1 + 6 + 10 + 2 + 7);
    });
  });

  it('delivers data, subject, timestamps; a publish reaches every subscriber once', async () => {
    await withStan({}, async ({ connect }) => {
      const a = await connect('a');
      const b = await connect('b');
      const ra = await subscribe(a, 'foo', a.subscriptionOptions());
      const rb = await subscribe(b, 'foo', b.subscriptionOptions());
      const before = Date.now();
      await publish(a, 'foo', Buffer.from([0, 1, 2, 255]));
      await ra.waitFor(1);
      await rb.waitFor(1);
      const m = ra.msgs[0]!;
      assert.deepEqual([...m.getRawData()], [0, 1, 2, 255]);
      assert.equal(m.getSubject(), 'foo');
      assert.equal(m.isRedelivered(), false);
      assert.ok(Math.abs(m.getTimestamp().getTime() - before) < 2000);
    });
  });

  it('stores its own copy of each payload: a burst read in few socket reads replays intact', async () => {
    // The publish handler reads PubMsgs straight from the connection's read buffer
    // (Subscription.borrows): anything it kept by reference would be overwritten by
    // the next read. 2,000 publishes of distinct 300-byte payloads sent at once fill
    // many reads; a late subscriber then gets every stored message back.
    await withStan({}, async ({ connect }) => {
      const pub = await connect('pub');
      const payload = (i: number): Buffer => Buffer.alloc(300, `${i}:`.padStart(6, '0'));
      const acks: Promise<string>[] = [];
      for (let i = 1; i <= 2000; i++) acks.push(publish(pub, 'burst', payload(i)));
      await Promise.all(acks);
      const sub = await connect('sub');
      const r = await subscribe(sub, 'burst', sub.subscriptionOptions().setDeliverAllAvailable());
      await r.waitFor(2000);
      r.msgs.forEach((m, i) => {
        assert.equal(m.getSequence(), i + 1);
        assert.ok(m.getRawData().equals(payload(i + 1)), `payload of message ${i + 1}`);
      });
    });
  });
});
