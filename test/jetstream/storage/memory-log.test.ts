// The memory store's log (src/jetstream/storage/memory-log.ts): per-message fields in
// typed columns by sequence that shed their dead front, and message bytes in slabs whose
// survivors move out once removals leave a slab mostly dead, without changing a byte any
// holder sees.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemLog } from '../../../src/jetstream/storage/memory-log.js';

const EMPTY = Buffer.alloc(0);

function payload(seq: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (seq * 31 + i) & 0xff;
  return b;
}

test('MemLog: a FIFO of 100,000 messages, holes, a skipped range and a refill', () => {
  const log = new MemLog();
  for (let seq = 1; seq <= 100_000; seq++) {
    log.append(seq, seq % 3, seq * 1e6, EMPTY, payload(seq, 8));
    // Keep the last 1,000 (max_msgs), as a stream with limits removes its first.
    if (seq > 1000) assert.equal(log.remove(seq - 1000, true), true);
  }
  assert.equal(log.size, 1000);
  assert.equal(log.has(99_000), false);
  assert.equal(log.subjectOf(99_000), -1);
  const m = log.load(99_001, 'a.b', undefined);
  assert.deepEqual(
    { subject: m.subject, seq: m.seq, ts: m.ts, hdr: m.hdr.length },
    { subject: 'a.b', seq: 99_001, ts: 99_001 * 1e6, hdr: 0 },
  );
  assert.equal(m.data.equals(payload(99_001, 8)), true);
  assert.equal(log.subjectOf(99_001), 99_001 % 3);
  assert.equal(log.remove(99_001, true), true);
  assert.equal(log.remove(99_001, true), false);
  assert.equal(log.has(99_500), true);
  assert.equal(log.tsOf(99_500), 99_500 * 1e6);
  assert.equal(log.bytesOf(99_500), 8);
  // Sequences skipped (interest retention without interest) leave holes.
  log.append(100_010, 7, 0, EMPTY, payload(1, 8));
  assert.equal(log.has(100_005), false);
  assert.equal(log.subjectOf(100_010), 7);
  assert.equal(log.size, 1000);
  assert.throws(() => log.append(100_009, 7, 0, EMPTY, EMPTY), RangeError);
  // The last ones removed (a truncate): their sequences may be stored again.
  log.remove(100_010, false);
  log.remove(100_000, false);
  log.append(100_000, 5, 0, EMPTY, payload(5, 8));
  assert.equal(log.load(100_000, 'x', undefined).data.equals(payload(5, 8)), true);
  log.append(100_010, 7, 0, EMPTY, payload(1, 8));
  assert.equal(log.size, 1000);
  for (let seq = 99_002; seq <= 100_000; seq++) log.remove(seq, seq === 99_002);
  assert.equal(log.size, 1);
  assert.equal(log.load(100_010, 's', undefined).data.equals(payload(1, 8)), true);
  log.remove(100_010, true);
  assert.equal(log.size, 0);
  // Empty again: the next message starts afresh, even at a lower sequence (a truncate).
  log.append(50, 1, 0, EMPTY, EMPTY);
  assert.equal(log.has(50), true);
  assert.equal(log.size, 1);
});

test('MemLog: a view loaded into a reused StoredMsg, headers apart from data', () => {
  const log = new MemLog();
  const hdr = Buffer.from('NATS/1.0\r\nk: v\r\n\r\n');
  log.append(1, 0, 1.5e18, hdr, Buffer.from('one'));
  log.append(2, 1, 1.6e18, EMPTY, Buffer.from('two'));
  const into = log.load(1, 'a', undefined);
  assert.equal(into.hdr.toString(), hdr.toString());
  assert.equal(into.data.toString(), 'one');
  assert.equal(log.load(2, 'b', into), into);
  assert.deepEqual(
    [into.subject, into.seq, into.ts, into.hdr.length, into.data.toString()],
    ['b', 2, 1.6e18, 0, 'two'],
  );
  // A secure delete zeroes the bytes in place.
  const before = log.load(1, 'a', undefined).data;
  log.erase(1);
  assert.deepEqual([...before], [0, 0, 0]);
});

test('MemLog: survivors of mostly dead slabs move, bytes and earlier views intact', () => {
  const log = new MemLog();
  const hdr = Buffer.from('NATS/1.0\r\nk: v\r\n\r\n');
  const live = new Set<number>();
  const views: [number, Buffer][] = [];
  const size = (seq: number) => 100 + (seq % 13) * 100;
  // 20,000 messages of 100-1,300 bytes; 1 in 50 lives on (KV keys rarely written).
  for (let seq = 1; seq <= 20_000; seq++) {
    log.append(seq, 0, seq, seq % 3 === 0 ? hdr : EMPTY, payload(seq, size(seq)));
    live.add(seq);
    if (seq % 7 === 0) views.push([seq, log.load(seq, 'k', undefined).data]);
    const old = seq - 10;
    if (old > 0 && old % 50 !== 0) {
      assert.equal(log.remove(old, false), true);
      live.delete(old);
    }
  }
  for (const seq of live) {
    const m = log.load(seq, 'k', undefined);
    assert.equal(m.data.equals(payload(seq, size(seq))), true, `data of ${seq}`);
    assert.equal(m.hdr.equals(seq % 3 === 0 ? hdr : EMPTY), true, `header of ${seq}`);
  }
  // Views taken before moves still read what they read then.
  for (const [seq, v] of views) assert.equal(v.equals(payload(seq, size(seq))), true);
  // The survivors were compacted: they share few slabs, not one each.
  const buffers = new Set([...live].map((seq) => log.load(seq, 'k', undefined).data.buffer));
  assert.ok(buffers.size < 20, `${live.size} survivors in ${buffers.size} slabs`);
});

test('MemLog: a large message gets a buffer of its own', () => {
  const log = new MemLog();
  const big = payload(3, 100_000);
  log.append(1, 0, 1, EMPTY, big);
  const data = log.load(1, 'b', undefined).data;
  assert.equal(data.buffer.byteLength, 100_000);
  assert.equal(data.equals(big), true);
  big.fill(0);
  assert.notEqual(log.load(1, 'b', undefined).data[1], 0, 'a copy, not the caller buffer');
  log.append(2, 0, 2, EMPTY, payload(2, 10));
  assert.equal(log.remove(1, true), true);
  assert.equal(log.load(2, 'b', undefined).data.equals(payload(2, 10)), true);
});

test('MemLog: a small stream starts with a small slab, slabs grow to 64 KiB', () => {
  const log = new MemLog();
  log.append(1, 0, 1, EMPTY, payload(1, 100));
  const first = log.load(1, 'k', undefined).data;
  assert.equal(first.buffer.byteLength, 4096, 'an idle or small stream holds 4 KiB');
  for (let seq = 2; seq <= 2000; seq++) log.append(seq, 0, seq, EMPTY, payload(seq, 100));
  assert.equal(log.load(2000, 'k', undefined).data.buffer.byteLength, 64 * 1024);
  assert.equal(log.load(1, 'k', undefined).data.equals(payload(1, 100)), true);
  assert.equal(log.load(2000, 'k', undefined).data.equals(payload(2000, 100)), true);
  // A message larger than the next slab size still fits in one.
  const fresh = new MemLog();
  fresh.append(1, 0, 1, EMPTY, payload(1, 6000));
  assert.equal(fresh.load(1, 'k', undefined).data.equals(payload(1, 6000)), true);
});
