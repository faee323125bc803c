// The memory store's log (src/jetstream/storage/memory-log.ts): messages by sequence in
// an array that sheds its dead front, and message bytes in slabs whose survivors move
// out once removals leave a slab mostly dead, without changing a byte any holder sees.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  MessageSlabs,
  SeqLog,
  loadInto,
  type MemMsg,
} from '../../../src/jetstream/storage/memory-log.js';

const view = (m: MemMsg | undefined) => loadInto(m!, undefined);

function payload(seq: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (seq * 31 + i) & 0xff;
  return b;
}

test('SeqLog: a FIFO of 100,000 messages, holes, a skipped range and a refill', () => {
  const slabs = new MessageSlabs();
  const log = new SeqLog();
  const empty = Buffer.alloc(0);
  for (let seq = 1; seq <= 100_000; seq++) {
    log.set(slabs.make('s', seq, seq, empty, payload(seq, 8)));
    // Keep the last 1,000 (max_msgs), as a stream with limits removes its first.
    if (seq > 1000) assert.equal(log.delete(seq - 1000), true);
  }
  assert.equal(log.size, 1000);
  assert.equal(log.get(99_000), undefined);
  assert.equal(log.get(99_001)?.seq, 99_001);
  assert.equal(log.delete(99_001), true);
  assert.equal(log.delete(99_001), false);
  assert.equal(log.has(99_500), true);
  // Sequences skipped (interest retention without interest) leave holes.
  log.set(slabs.make('s', 100_010, 0, empty, payload(1, 8)));
  assert.equal(log.get(100_005), undefined);
  assert.equal(log.get(100_010)?.seq, 100_010);
  assert.equal(log.size, 1000);
  for (let seq = 99_002; seq <= 100_000; seq++) log.delete(seq);
  assert.equal(log.size, 1);
  assert.equal(view(log.get(100_010)).data.equals(payload(1, 8)), true);
  log.delete(100_010);
  assert.equal(log.size, 0);
  // Empty again: the next message starts afresh.
  log.set(slabs.make('s', 200_000, 0, empty, empty));
  assert.equal(log.get(200_000)?.seq, 200_000);
  assert.equal(log.size, 1);
});

test('MessageSlabs: survivors of mostly dead slabs move, bytes and earlier views intact', () => {
  const slabs = new MessageSlabs();
  const hdr = Buffer.from('NATS/1.0\r\nk: v\r\n\r\n');
  const live = new Map<number, MemMsg>();
  const views: [number, Buffer][] = [];
  // 20,000 messages of 100-1,300 bytes; 1 in 50 lives on (KV keys rarely written).
  for (let seq = 1; seq <= 20_000; seq++) {
    const m = slabs.make(
      'k',
      seq,
      seq,
      seq % 3 === 0 ? hdr : Buffer.alloc(0),
      payload(seq, 100 + (seq % 13) * 100),
    );
    live.set(seq, m);
    if (seq % 7 === 0) views.push([seq, view(m).data]);
    const old = seq - 10;
    if (old > 0 && old % 50 !== 0) {
      slabs.release(live.get(old)!, false);
      live.delete(old);
    }
  }
  for (const [seq, m] of live) {
    assert.equal(view(m).data.equals(payload(seq, 100 + (seq % 13) * 100)), true, `data of ${seq}`);
    assert.equal(
      view(m).hdr.equals(seq % 3 === 0 ? hdr : Buffer.alloc(0)),
      true,
      `header of ${seq}`,
    );
  }
  // Views taken before moves still read what they read then.
  for (const [seq, v] of views) assert.equal(v.equals(payload(seq, 100 + (seq % 13) * 100)), true);
  // The survivors were compacted: they share few slabs, not one each.
  const buffers = new Set([...live.values()].map((m) => m.buf.buffer));
  assert.ok(buffers.size < 20, `${live.size} survivors in ${buffers.size} slabs`);
});

test('MessageSlabs: a large message gets a buffer of its own', () => {
  const slabs = new MessageSlabs();
  const big = payload(3, 100_000);
  const m = slabs.make('b', 1, 1, Buffer.alloc(0), big);
  assert.equal(m.slab, null);
  assert.equal(view(m).data.equals(big), true);
  big.fill(0);
  assert.notEqual(view(m).data[1], 0, 'a copy, not the caller buffer');
  slabs.release(m, false);
});

test('MessageSlabs: a small stream starts with a small slab, slabs grow to 64 KiB', () => {
  const slabs = new MessageSlabs();
  const empty = Buffer.alloc(0);
  const first = slabs.make('k', 1, 1, empty, payload(1, 100));
  assert.equal(first.buf.length, 4096, 'an idle or small stream holds 4 KiB, not a whole slab');
  let last = first;
  for (let seq = 2; seq <= 2000; seq++) last = slabs.make('k', seq, seq, empty, payload(seq, 100));
  assert.equal(last.buf.length, 64 * 1024);
  assert.equal(view(first).data.equals(payload(1, 100)), true);
  assert.equal(view(last).data.equals(payload(2000, 100)), true);
  // A message larger than the next slab size still fits in one.
  const fresh = new MessageSlabs();
  const m = fresh.make('k', 1, 1, empty, payload(1, 6000));
  assert.equal(view(m).data.equals(payload(1, 6000)), true);
});
