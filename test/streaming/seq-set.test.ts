// SeqSet (store/seq-set.ts), the FILE store's pending sets: after any sequence of
// adds, deletes and clears it holds what a Set holds, and iterates it in ascending
// order, whether values stay in a sliding window, straggle far behind it, jump far
// ahead, come out of order or sit near the largest sequence.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SeqSet } from '../../src/streaming/store/seq-set.js';

function same(s: SeqSet, want: Set<number>, what: string): void {
  assert.equal(s.size, want.size, `${what}: size`);
  assert.deepEqual(
    [...s],
    [...want].sort((a, b) => a - b),
    `${what}: values`,
  );
}

describe('SeqSet', () => {
  it('a window of 16,384 pending sliding over 200,000 sequences, acks in order', () => {
    const s = new SeqSet();
    const want = new Set<number>();
    for (let seq = 1; seq <= 200_000; seq++) {
      s.add(seq);
      want.add(seq);
      if (seq > 16_384) {
        assert.equal(s.delete(seq - 16_384), true);
        want.delete(seq - 16_384);
      }
      if (seq % 50_000 === 0) same(s, want, `at ${seq}`);
    }
    assert.equal(s.has(200_000 - 16_384), false);
    assert.equal(s.has(200_000 - 16_383), true);
    assert.equal(s.delete(1), false);
  });

  it('stragglers left unacked far behind the window stay members', () => {
    const s = new SeqSet();
    const want = new Set<number>();
    for (let seq = 1; seq <= 300_000; seq++) {
      s.add(seq);
      want.add(seq);
      // Every 10,000th message is never acked; the others are, 100 behind.
      const old = seq - 100;
      if (old > 0 && old % 10_000 !== 0) {
        s.delete(old);
        want.delete(old);
      }
    }
    same(s, want, 'end');
    for (const seq of [10_000, 150_000, 290_000]) assert.equal(s.has(seq), true);
    assert.equal(s.delete(10_000), true);
    assert.equal(s.has(10_000), false);
  });

  it('values added out of order, below the window, far ahead and near 2^53', () => {
    const s = new SeqSet();
    const values = [5000, 10, 4999, 1_000_000, 7, 2 ** 53 - 1, 2 ** 53 - 40, 33, 32, 31, 0];
    for (const v of values) s.add(v);
    same(s, new Set(values), 'added');
    for (const v of values) assert.equal(s.has(v), true, `has ${v}`);
    assert.equal(s.has(8), false);
    assert.equal(s.delete(2 ** 53 - 1), true);
    assert.equal(s.delete(10), true);
    same(s, new Set(values.filter((v) => v !== 2 ** 53 - 1 && v !== 10)), 'deleted');
    s.clear();
    same(s, new Set(), 'cleared');
    s.add(3);
    same(s, new Set([3]), 'after clear');
  });

  it('any sequence of operations: the same as a Set (property)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), v: fc.nat(3000) }),
      fc.record({ kind: fc.constant('add' as const), v: fc.nat(2 ** 40) }),
      fc.record({ kind: fc.constant('del' as const), v: fc.nat(3000) }),
      fc.record({ kind: fc.constant('run' as const), v: fc.nat(200_000), n: fc.nat(5000) }),
      fc.record({ kind: fc.constant('ack' as const), v: fc.nat(200_000), n: fc.nat(5000) }),
      fc.record({ kind: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const s = new SeqSet();
        const want = new Set<number>();
        for (const o of ops) {
          if (o.kind === 'add') {
            s.add(o.v);
            want.add(o.v);
          } else if (o.kind === 'del') {
            assert.equal(s.delete(o.v), want.delete(o.v));
          } else if (o.kind === 'run') {
            for (let v = o.v; v < o.v + o.n; v++) {
              s.add(v);
              want.add(v);
            }
          } else if (o.kind === 'ack') {
            for (let v = o.v; v < o.v + o.n; v++) assert.equal(s.delete(v), want.delete(v));
          } else {
            s.clear();
            want.clear();
          }
          assert.equal(s.size, want.size);
        }
        same(s, want, 'end');
        for (const v of want) assert.equal(s.has(v), true);
      }),
      { numRuns: 300 },
    );
  });
});
