// A subscription's pending set and expirations (pending.ts) against the model it
// replaced: a Map from sequence to expiration, each message with its own time.
// Generated runs of first deliveries (rising sequences, a clock that moves by 0-3 ms),
// acks, redeliveries, takeovers and recovered messages; after every step both must
// agree on what is pending, what has expired and when the next one does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Pending } from '../../src/streaming/pending.js';

type Op =
  | { kind: 'send'; count: number; tick: number }
  | { kind: 'ack'; pick: number }
  | { kind: 'expire'; tick: number }
  | { kind: 'adopt'; seq: number; delay: number }
  | { kind: 'restore'; seq: number };

const ACK_WAIT = 30;

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('send' as const),
    count: fc.integer({ min: 1, max: 40 }),
    tick: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record({ kind: fc.constant('ack' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('expire' as const), tick: fc.integer({ min: 0, max: 40 }) }),
  fc.record({
    kind: fc.constant('adopt' as const),
    seq: fc.integer({ min: 1, max: 400 }),
    delay: fc.integer({ min: 0, max: 50 }),
  }),
  fc.record({ kind: fc.constant('restore' as const), seq: fc.integer({ min: 1, max: 400 }) }),
);

/** The former model: a Map, every expiration its own. */
function modelExpired(model: Map<number, number>, now: number): { seqs: number[]; next: number } {
  const seqs: number[] = [];
  let next = 0;
  for (const [seq, expiry] of model) {
    if (expiry <= now) seqs.push(seq);
    else if (next === 0 || expiry < next) next = expiry;
  }
  return { seqs: seqs.sort((a, b) => a - b), next };
}

test('marks and own times agree with a Map of expirations', () => {
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 120 }), (ops) => {
      const p = new Pending();
      const model = new Map<number, number>();
      let now = 1000;
      let lastSent = 0;
      for (const o of ops) {
        switch (o.kind) {
          case 'send':
            now += o.tick;
            for (let i = 0; i < o.count; i++) {
              const seq = ++lastSent;
              p.sent(seq, now + ACK_WAIT);
              model.set(seq, now + ACK_WAIT);
            }
            break;
          case 'ack': {
            const seqs = [...model.keys()];
            const seq = seqs.length > 0 ? seqs[o.pick % seqs.length]! : lastSent + 1;
            assert.equal(p.delete(seq), model.delete(seq));
            break;
          }
          case 'expire': {
            now += o.tick;
            const got = p.expired(now);
            assert.deepEqual(got, modelExpired(model, now));
            // Redelivered: each due again one AckWait from now.
            for (const seq of got.seqs) {
              p.setOwn(seq, now + ACK_WAIT, true);
              model.set(seq, now + ACK_WAIT);
            }
            break;
          }
          case 'adopt':
            if (o.seq > lastSent) break;
            p.setOwn(o.seq, now + o.delay, false);
            model.set(o.seq, now + o.delay);
            break;
          case 'restore':
            if (o.seq > lastSent) break;
            p.setOwn(o.seq, 0, false);
            model.set(o.seq, 0);
            break;
        }
        assert.equal(p.size, model.size);
        assert.deepEqual(
          [...p],
          [...model.keys()].sort((a, b) => a - b),
        );
      }
      assert.deepEqual(p.expired(now), modelExpired(model, now));
      assert.deepEqual(p.expired(now + 10 * ACK_WAIT), modelExpired(model, now + 10 * ACK_WAIT));
    }),
    { numRuns: 400 },
  );
});

test('a catch-up of 100,000: every message due one AckWait after its send, none before', () => {
  const wait = 30_000;
  const p = new Pending();
  let now = 0;
  for (let seq = 1; seq <= 100_000; seq++) {
    if (seq % 500 === 0) now++;
    p.sent(seq, now + wait);
    // Acked 16,384 later, as a MaxInflight window slides.
    if (seq > 16_384) assert.equal(p.delete(seq - 16_384), true);
  }
  assert.equal(p.size, 16_384);
  const oldest = 100_000 - 16_384 + 1;
  assert.deepEqual(p.expired(now), { seqs: [], next: Math.floor(oldest / 500) + wait });
  // One millisecond after the oldest one's AckWait: the messages of its millisecond.
  const due = p.expired(Math.floor(oldest / 500) + wait);
  assert.deepEqual(
    due.seqs,
    Array.from({ length: 500 - (oldest % 500) }, (_, i) => oldest + i),
  );
  assert.equal(due.next, Math.floor(oldest / 500) + 1 + wait);
  for (let seq = oldest; seq <= 100_000; seq++) p.delete(seq);
  assert.equal(p.size, 0);
  assert.deepEqual(p.expired(now + 2 * wait), { seqs: [], next: 0 });
});
