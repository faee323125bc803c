// The MEMORY store keeps messages as columns in a ring (memory-msgs.ts): what it gives
// back is what was stored, bytes and timestamps, while the ring wraps around under
// max_msgs, grows past its first capacity, shrinks once limits empty it, finds
// timestamps across the wrap, and starts over after a gap or empty().
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long } from '../../src/streaming/protocol/index.js';
import { MemoryStore } from '../../src/streaming/store/index.js';
import { makeStoredMsg, type StoredMsg } from '../../src/streaming/store/index.js';
import { assertSameMsg } from './store-fixtures.js';
import { isSmallInteger } from '../helpers/v8-natives.js';

/** Message `seq` with timestamp 10 * seq ns above 2^32 (both halves in use), `size` payload bytes. */
function m(seq: number, size = 8 + (seq % 5)): StoredMsg {
  const ts = Long.fromNumber(2 ** 32 + 10 * seq);
  return makeStoredMsg(seq, ts, 'ring', '', Buffer.alloc(size, seq & 0xff));
}

describe('MEMORY store ring', () => {
  it('wraps under max_msgs and gives back every message held, byte for byte', async () => {
    const store = new MemoryStore({ limits: { maxMsgs: 100 } });
    const msgs = store.createChannel('ring').msgs;
    const kept: StoredMsg[] = [];
    for (let seq = 1; seq <= 1000; seq++) {
      const x = m(seq);
      msgs.store(x);
      kept.push(x);
    }
    assert.equal(msgs.firstSequence, 901);
    assert.equal(msgs.lastSequence, 1000);
    assert.equal(msgs.count, 100);
    const bytes = kept.slice(900).reduce((n, x) => n + x.encoded.length, 0);
    assert.equal(msgs.bytes, bytes);
    assert.equal(await msgs.lookup(900), undefined);
    assert.equal(await msgs.lookup(1001), undefined);
    for (let seq = 901; seq <= 1000; seq++) assertSameMsg(await msgs.lookup(seq), kept[seq - 1]!);
    // Timestamps across the wrap: exact, between two, before all, after all.
    assert.equal(await msgs.sequenceFromTimestamp(Long.fromNumber(2 ** 32 + 10 * 950)), 950);
    assert.equal(await msgs.sequenceFromTimestamp(Long.fromNumber(2 ** 32 + 10 * 950 + 1)), 951);
    assert.equal(await msgs.sequenceFromTimestamp(Long.fromNumber(5)), 901);
    assert.equal(await msgs.sequenceFromTimestamp(Long.fromNumber(2 ** 33)), 1001);
    // A message's range in its buffer, as deliveries read it: the bytes, in small
    // integers (a heap number here turns the delivery path's offsets into doubles).
    for (let seq = 901; seq <= 1000; seq++) {
      const buf = msgs.bytesOf!(seq)!;
      const start = msgs.rangeStart!;
      const end = msgs.rangeEnd!;
      assert.ok(isSmallInteger(start) && isSmallInteger(end), `range of ${seq}`);
      assert.deepEqual(buf.subarray(start, end), kept[seq - 1]!.encoded);
    }
    await store.close();
  });

  it('grows without limits and shrinks once max_bytes leaves one large message', async () => {
    const store = new MemoryStore({ limits: { maxBytes: 300_000 } });
    const msgs = store.createChannel('ring').msgs;
    const kept: StoredMsg[] = [];
    for (let seq = 1; seq <= 5000; seq++) {
      const x = m(seq, 20);
      msgs.store(x);
      kept.push(x);
    }
    assert.equal(msgs.firstSequence, 1);
    for (const seq of [1, 64, 65, 2047, 4999, 5000]) {
      assertSameMsg(await msgs.lookup(seq), kept[seq - 1]!);
    }
    // One message over max_bytes alone pushes all the others out, one at a time.
    const big = m(5001, 300_000);
    msgs.store(big);
    assert.equal(msgs.count, 1);
    assert.equal(msgs.firstSequence, 5001);
    assertSameMsg(await msgs.lookup(5001), big);
    // The next one pushes the large one out in turn.
    const after = m(5002, 30);
    msgs.store(after);
    assert.equal(await msgs.lookup(5001), undefined);
    assertSameMsg(await msgs.lookup(5002), after);
    for (let seq = 5003; seq <= 5200; seq++) msgs.store(m(seq, 30));
    assert.equal(msgs.count, 199);
    assertSameMsg(await msgs.lookup(5100), m(5100, 30));
    await store.close();
  });

  it('starts over after a gap on an emptied channel, and after empty()', async () => {
    const store = new MemoryStore();
    const msgs = store.createChannel('ring').msgs;
    for (let seq = 1; seq <= 70; seq++) msgs.store(m(seq));
    msgs.empty();
    assert.equal(msgs.count, 0);
    assert.equal(msgs.lastSequence, 0);
    assert.equal(await msgs.lookup(5), undefined);
    const again = m(500);
    msgs.store(again);
    assert.equal(msgs.firstSequence, 500);
    assertSameMsg(await msgs.lookup(500), again);
    assert.equal(await msgs.sequenceFromTimestamp(Long.fromNumber(1)), 500);
    await store.close();
  });
});
