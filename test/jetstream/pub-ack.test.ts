// PubAck bodies written without JSON (src/jetstream/pub-ack.ts): the same bytes as the
// reference's `{"stream":"S", "seq":N}` for every size of sequence, in a domain and for
// duplicates, and bodies handed out earlier stay as they were when later ones fill the
// arena.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PubAckWriter } from '../../src/jetstream/pub-ack.js';
import { putInt } from '../../src/server/outbound.js';

/** The body ack() wrote, as a view of its arena. */
function ack(w: PubAckWriter, seq: number): Buffer {
  const end = w.ack(seq);
  return w.arena.subarray(w.start, end);
}

test('decimal digits of every magnitude up to 2^53 - 1', () => {
  const b = Buffer.alloc(32);
  const values = [0, 1, 9, 10, 99, 100, 12345, 4294967295, 4294967296, Number.MAX_SAFE_INTEGER];
  for (let n = 1; n < Number.MAX_SAFE_INTEGER / 7; n = n * 7 + 3) values.push(n);
  for (const n of values) {
    b.fill(0x21);
    const end = putInt(b, 3, n);
    assert.equal(b.toString('latin1', 3, end), String(n));
    assert.equal(b[2], 0x21, 'nothing written before the position');
    assert.equal(b[end], 0x21, 'nothing written past the end');
  }
});

test('the reference wording: plain, in a domain, duplicate', () => {
  const w = new PubAckWriter('ORDERS', '');
  assert.equal(ack(w, 1).toString(), '{"stream":"ORDERS", "seq":1}');
  assert.equal(w.duplicate(42).toString(), '{"stream":"ORDERS", "seq":42,"duplicate": true}');
  const d = new PubAckWriter('ORDERS', 'hub');
  assert.equal(ack(d, 7).toString(), '{"stream":"ORDERS", "domain":"hub", "seq":7}');
  d.rename('ORDERS', '');
  assert.equal(ack(d, 8).toString(), '{"stream":"ORDERS", "seq":8}');
  // A name JSON escapes (the API accepts quotes and non-ASCII in names).
  const q = new PubAckWriter('a"é', '');
  assert.deepEqual(JSON.parse(ack(q, 3).toString()), { stream: 'a"é', seq: 3 });
});

test('earlier bodies are unchanged after many more fill new arenas', () => {
  const w = new PubAckWriter('S', '');
  const kept: Buffer[] = [];
  for (let seq = 1; seq <= 5000; seq++) kept.push(ack(w, seq * 1000003));
  kept.forEach((b, i) => {
    assert.equal(b.toString(), `{"stream":"S", "seq":${(i + 1) * 1000003}}`);
  });
});
