// Store suite: messages, sequences, timestamps and the message limits.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MAX_SEQUENCE } from '../../src/streaming/protocol/index.js';
import type { MsgStore, StoredMsg } from '../../src/streaming/store/index.js';
import { assertSameMsg, assertStoreError, msg, nanosFromNow, sleep } from './store-fixtures.js';
import type { SuiteContext } from './store-suite.js';

function fill(msgs: MsgStore, channel: string, from: number, to: number): StoredMsg[] {
  const out: StoredMsg[] = [];
  for (let seq = from; seq <= to; seq++) {
    const m = msg(channel, seq);
    assert.equal(msgs.store(m), true);
    out.push(m);
  }
  return out;
}

export function messageTests({ withStore, options }: SuiteContext): void {
  const overhead = options.msgOverhead ?? 0;
  const counted = (stored: StoredMsg[]): number =>
    stored.reduce((n, m) => n + m.encoded.length + overhead, 0);
  describe('messages', () => {
    it(
      'starts with nothing stored: first and last are 0',
      withStore({}, async (store) => {
        const { msgs } = store.createChannel('foo');
        assert.equal(msgs.firstSequence, 0);
        assert.equal(msgs.lastSequence, 0);
        assert.equal(msgs.count, 0);
        assert.equal(msgs.bytes, 0);
        assert.equal(await msgs.lookup(1), undefined);
        assert.equal(await msgs.sequenceFromTimestamp(nanosFromNow(0)), 0);
      }),
    );

    it(
      'stores messages and finds each by sequence, bytes for bytes',
      withStore({}, async (store) => {
        const { msgs } = store.createChannel('foo');
        const stored = fill(msgs, 'foo', 1, 10);
        assert.equal(msgs.firstSequence, 1);
        assert.equal(msgs.lastSequence, 10);
        assert.equal(msgs.count, 10);
        assert.equal(msgs.bytes, counted(stored));
        for (const m of stored) assertSameMsg(await msgs.lookup(m.sequence), m);
        assert.equal(await msgs.lookup(0), undefined);
        assert.equal(await msgs.lookup(11), undefined);
      }),
    );

    it(
      'ignores a sequence it already has (a replay) and refuses a gap',
      withStore({}, async (store) => {
        const { msgs } = store.createChannel('foo');
        const [first] = fill(msgs, 'foo', 1, 3);
        assert.equal(msgs.store(msg('foo', 2)), false);
        assertSameMsg(await msgs.lookup(1), first!);
        assert.equal(msgs.count, 3);
        assertStoreError(() => msgs.store(msg('foo', 5)), 'INVALID_SEQUENCE');
        assertStoreError(() => msgs.store(msg('foo', MAX_SEQUENCE + 1)), 'INVALID_SEQUENCE');
        assert.equal(msgs.lastSequence, 3);
      }),
    );

    it(
      'lets an empty channel start at any sequence, up to 2^53 - 1',
      withStore({}, async (store) => {
        const { msgs } = store.createChannel('foo');
        const m = msg('foo', MAX_SEQUENCE - 1);
        msgs.store(m);
        msgs.store(msg('foo', MAX_SEQUENCE));
        assert.equal(msgs.firstSequence, MAX_SEQUENCE - 1);
        assert.equal(msgs.lastSequence, MAX_SEQUENCE);
        assertSameMsg(await msgs.lookup(MAX_SEQUENCE - 1), m);
      }),
    );

    it(
      'keeps 64-bit timestamps exactly',
      withStore({}, async (store) => {
        const { msgs } = store.createChannel('foo');
        const stamps = ['-9223372036854775808', '-1', '1712000000123456789', '9223372036854775807'];
        stamps.forEach((text, i) => msgs.store(msg('foo', i + 1, Long.fromString(text))));
        for (let i = 0; i < stamps.length; i++) {
          assert.equal((await msgs.lookup(i + 1))!.timestamp.toString(), stamps[i]);
        }
      }),
    );

    it(
      'finds the first sequence at or after a timestamp',
      withStore({}, async (store) => {
        const { msgs } = store.createChannel('foo');
        const t = (n: number) => Long.fromString('1712000000000000000').add(n);
        [10, 20, 20, 30, 40].forEach((n, i) => msgs.store(msg('foo', i + 1, t(n))));
        assert.equal(await msgs.sequenceFromTimestamp(t(0)), 1);
        assert.equal(await msgs.sequenceFromTimestamp(t(10)), 1);
        assert.equal(await msgs.sequenceFromTimestamp(t(11)), 2);
        assert.equal(await msgs.sequenceFromTimestamp(t(20)), 2);
        assert.equal(await msgs.sequenceFromTimestamp(t(21)), 4);
        assert.equal(await msgs.sequenceFromTimestamp(t(40)), 5);
        assert.equal(await msgs.sequenceFromTimestamp(t(41)), 6);
      }),
    );

    it(
      'max_msgs: keeps the newest, moves first_seq (10 published, limit 5 -> 6..10)',
      withStore({ limits: { maxMsgs: 5 } }, async (store) => {
        const { msgs } = store.createChannel('foo');
        const stored = fill(msgs, 'foo', 1, 10);
        assert.equal(msgs.count, 5);
        assert.equal(msgs.firstSequence, 6);
        assert.equal(msgs.lastSequence, 10);
        assert.equal(await msgs.lookup(5), undefined);
        assertSameMsg(await msgs.lookup(6), stored[5]!);
        assert.equal(msgs.bytes, counted(stored.slice(5)));
      }),
    );

    it('max_bytes: drops the oldest, never the message just stored', async () => {
      const size = msg('foo', 1).encoded.length + overhead;
      // Room for 3 messages and a bit: the 4th drops the 1st.
      await withStore({ limits: { maxBytes: 3 * size + 5 } }, (store) => {
        const { msgs } = store.createChannel('foo');
        fill(msgs, 'foo', 1, 9);
        assert.equal(msgs.count, 3);
        assert.equal(msgs.firstSequence, 7);
        assert.ok(msgs.bytes <= 3 * size + 5);
      })();
      await withStore({ limits: { maxBytes: 50 } }, (store) => {
        const big = store.createChannel('big');
        big.msgs.store({ ...msg('big', 1), encoded: Buffer.alloc(80) });
        big.msgs.store({ ...msg('big', 2), encoded: Buffer.alloc(90) });
        assert.equal(big.msgs.count, 1);
        assert.equal(big.msgs.firstSequence, 2);
        assert.equal(big.msgs.bytes, 90 + overhead);
      })();
    });

    it('warns once when a limit first drops messages', async () => {
      const warnings: string[] = [];
      await withStore(
        { limits: { maxMsgs: 2 }, hooks: { warn: (w) => warnings.push(w) } },
        (store) => {
          fill(store.createChannel('foo').msgs, 'foo', 1, 6);
        },
      )();
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /^Reached limits for store "foo" \(msgs=2\/2 /);
    });

    it(
      'max_age: expires messages, leaving first = last + 1, and sequences go on',
      withStore({ limits: { maxAge: 100 } }, async (store) => {
        const { msgs } = store.createChannel('foo');
        fill(msgs, 'foo', 1, 3);
        await sleep(300);
        assert.equal(msgs.count, 0);
        assert.equal(msgs.bytes, 0);
        assert.equal(msgs.firstSequence, 4);
        assert.equal(msgs.lastSequence, 3);
        assert.equal(await msgs.sequenceFromTimestamp(nanosFromNow(-10_000)), 4);
        msgs.store(msg('foo', 4));
        assert.equal(msgs.firstSequence, 4);
        assert.equal(msgs.lastSequence, 4);
      }),
    );

    it(
      'max_age: keeps young messages while old ones expire',
      withStore({ limits: { maxAge: 2000 } }, async (store) => {
        const { msgs } = store.createChannel('foo');
        msgs.store(msg('foo', 1, nanosFromNow(-10_000)));
        msgs.store(msg('foo', 2, nanosFromNow(-10_000)));
        msgs.store(msg('foo', 3));
        await sleep(100);
        assert.equal(msgs.firstSequence, 3);
        assert.equal(msgs.count, 1);
      }),
    );

    it(
      'empty() forgets every message and sequence',
      withStore({}, (store) => {
        const { msgs } = store.createChannel('foo');
        fill(msgs, 'foo', 1, 3);
        msgs.empty();
        assert.equal(msgs.firstSequence, 0);
        assert.equal(msgs.lastSequence, 0);
        assert.equal(msgs.count, 0);
        assert.equal(msgs.bytes, 0);
        msgs.store(msg('foo', 1));
        assert.equal(msgs.lastSequence, 1);
      }),
    );
  });
}
