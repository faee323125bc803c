// A backlog read back with a MaxInflight window of more bytes than the core lets a
// connection have pending (max_pending): delivery waits for the subscriber's
// connection to drain instead of queuing the window and getting it cut off as a
// slow consumer. The reference (nats-streaming-server 0.25.3 on its nats-server,
// whose own default max_pending is 64 MB) delivers stanbench's catch-up of 200,000
// x 1 KiB with MaxInflight 16,384 whole; wirebus, at the 10 MB default of
// description.md, cut the subscriber off after some 40,000: past the first window
// each ack let one more message out without a look at the connection's backlog.
// Here max_pending is small and the reader stops reading for a moment after acking
// a whole window, so that a small backlog shows it every time.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { channelz } from '../../src/streaming/monitor.js';
import {
  StartPosition,
  sleep,
  socketOf,
  subscribe,
  withStan,
  withTimeout,
  type Stan,
  type StanMessage,
} from './stan.js';

const PAYLOAD = Buffer.alloc(1024, 0x61);
/** MaxInflight: 6 MB of messages in flight, against 256 KiB of max_pending. */
const WINDOW = 6000;
const N = 2 * WINDOW;

/** Publishes `n` messages of PAYLOAD with at most `window` awaiting their PubAck. */
async function publishBacklog(sc: Stan, subject: string, n: number, window: number): Promise<void> {
  let sent = 0;
  let acked = 0;
  await new Promise<void>((resolve, reject) => {
    const more = (): void => {
      while (sent < n && sent - acked < window) {
        sent++;
        sc.publish(subject, PAYLOAD, (err) => {
          if (err !== undefined && err !== null) {
            reject(err);
            return;
          }
          acked++;
          if (acked === n) resolve();
          else more();
        });
      }
    };
    more();
  });
}

describe('streaming delivery of a backlog larger than max_pending', () => {
  it('acks of a whole window while the reader pauses: the rest waits for it, nothing is cut off', async () => {
    await withStan(
      {},
      async ({ connect, streaming }) => {
        const pub = await connect('publisher');
        await publishBacklog(pub, 'backlog', N, 1000);
        const sc = await connect('reader');
        const held: StanMessage[] = [];
        let next = 1;
        let outOfOrder = 0;
        let done!: () => void;
        const all = new Promise<void>((resolve) => (done = resolve));
        let firstWindow!: () => void;
        const windowIn = new Promise<void>((resolve) => (firstWindow = resolve));
        const r = await subscribe(
          sc,
          'backlog',
          sc
            .subscriptionOptions()
            .setStartAt(StartPosition.FIRST)
            .setDurableName('d')
            .setMaxInFlight(WINDOW)
            .setAckWait(60_000)
            .setManualAckMode(true),
          undefined,
          (m) => {
            if (m.getSequence() !== next) outOfOrder++;
            next = m.getSequence() + 1;
            if (m.getSequence() <= WINDOW) {
              held.push(m);
              if (held.length === WINDOW) firstWindow();
            } else {
              m.ack();
            }
            if (m.getSequence() === N) done();
          },
        );
        await withTimeout(windowIn, 'the first window', 20_000);
        // Each of these acks lets one more message out, 6 MB in all, while the
        // reader reads nothing.
        socketOf(sc).pause();
        for (const m of held) m.ack();
        await sleep(300);
        socketOf(sc).resume();
        await withTimeout(all, `${N} messages`, 20_000).catch((err: unknown) => {
          throw new Error(`${String(err)}; got ${r.msgs.length}, error ${String(r.error)}`);
        });
        assert.equal(outOfOrder, 0);
        assert.equal(r.msgs.length, N);
        assert.equal(r.msgs.filter((m) => m.isRedelivered()).length, 0);
        assert.equal(r.error, null);
        assert.equal(sc.isClosed(), false);
        const sub = channelz(streaming.channels.get('backlog')!, true).subscriptions![0]!;
        assert.equal(sub.last_sent, N);
      },
      { maxPending: 256 * 1024, maxPayload: 64 * 1024 },
    );
  });
});
