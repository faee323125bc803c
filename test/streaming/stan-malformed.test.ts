// Garbage on every request subject: an error reply or a drop, never a crash; the
// server keeps serving a real client afterwards.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CloseResponse,
  ConnectResponse,
  PubAck,
  SubscriptionResponse,
} from '../../src/streaming/protocol/index.js';
import { natsConnect, request } from './raw.js';
import { publish, subscribe, withStan } from './stan.js';

// Not protobuf: field 1 with wire type 7 (invalid), and a length past the end.
const BAD = [
  Buffer.from([0x0f]),
  Buffer.from([0x0a, 0x7f, 0x41]),
  Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
];

describe('streaming malformed requests', () => {
  it('gets the reference error replies', async () => {
    await withStan({}, async ({ url, connect }) => {
      const sc = await connect('me');
      const r = await subscribe(sc, 'foo', sc.subscriptionOptions().setManualAckMode(true));
      const nc = await natsConnect(url);
      try {
        for (const bad of BAD) {
          const c = await request(nc, '_STAN.discover.test-cluster', bad);
          assert.equal(ConnectResponse.decode(c!).error, 'stan: invalid connection request');
          const p = await request(nc, '_STAN.pub.test-cluster.foo', bad);
          assert.equal(PubAck.decode(p!).error, 'stan: invalid publish request');
          const s = await request(nc, '_STAN.sub.test-cluster', bad);
          assert.equal(SubscriptionResponse.decode(s!).error, 'stan: invalid subscription request');
          const u = await request(nc, '_STAN.unsub.test-cluster', bad);
          assert.equal(SubscriptionResponse.decode(u!).error, 'stan: invalid unsubscribe request');
          const sc2 = await request(nc, '_STAN.subclose.test-cluster', bad);
          assert.equal(
            SubscriptionResponse.decode(sc2!).error,
            'stan: invalid unsubscribe request',
          );
          const cl = await request(nc, '_STAN.close.test-cluster', bad);
          assert.equal(CloseResponse.decode(cl!).error, 'stan: invalid close request');
          // Pings and acks: dropped.
          assert.equal(await request(nc, '_STAN.discover.test-cluster.pings', bad, 100), null);
          nc.publish(r.sub.ackInbox!, bad);
        }
        await nc.flush();
        await publish(sc, 'foo', 'still alive');
        await r.waitFor(1);
      } finally {
        await nc.close();
      }
    });
  });

  it('random bytes on every subject never stop the server', async () => {
    await withStan({}, async ({ url, connect }) => {
      const sc = await connect('me');
      const r = await subscribe(sc, 'foo', sc.subscriptionOptions());
      const nc = await natsConnect(url);
      const subjects = [
        '_STAN.discover.test-cluster',
        '_STAN.discover.test-cluster.pings',
        '_STAN.pub.test-cluster.foo',
        '_STAN.sub.test-cluster',
        '_STAN.unsub.test-cluster',
        '_STAN.subclose.test-cluster',
        '_STAN.close.test-cluster',
        r.sub.ackInbox!,
      ];
      try {
        fc.assert(
          fc.property(
            fc.uint8Array({ maxLength: 64 }),
            fc.constantFrom(...subjects),
            (bytes, subject) => {
              nc.publish(subject, bytes, { reply: '_INBOX.ignored' });
            },
          ),
          { numRuns: 400, seed: 42 },
        );
        await nc.flush();
        await publish(sc, 'foo', 'still alive');
        await r.waitFor(1);
      } finally {
        await nc.close();
      }
    });
  });
});
