// Latin1Memo: the strings an in-process subscription on a wildcard gets are the ones
// a fresh toString would make, whether the bytes repeat, change at any position
// (same length or not), run past the memo's 256 bytes or hold non-ASCII bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Latin1Memo, latin1String } from '../../src/server/latin1-memo.js';

test('Latin1Memo gives what toString gives, for repeated and changing bytes', () => {
  const memo = new Latin1Memo();
  const subjects = [
    '_STAN.pub.abc.orders',
    '_STAN.pub.abc.orders',
    '_STAN.pub.abc.ordert',
    'XSTAN.pub.abc.orders',
    '_STAN.pub.abc.orders.eu',
    'a',
    '',
    'a',
    'x'.repeat(256),
    'x'.repeat(256),
    'x'.repeat(255) + 'y',
    'z'.repeat(300),
    'z'.repeat(299) + 'w',
    'caf\u00e9.\u00ff',
    'caf\u00e9.\u00fe',
  ];
  for (const s of subjects) {
    // The subject sits at an offset in a larger buffer, as in a read buffer.
    const b = Buffer.concat([Buffer.from('MSG '), Buffer.from(s, 'latin1'), Buffer.from(' 1\r\n')]);
    const got = memo.get(b, 4, 4 + Buffer.byteLength(s, 'latin1'));
    assert.equal(got, b.toString('latin1', 4, 4 + Buffer.byteLength(s, 'latin1')));
    assert.equal(got, s);
  }
});

test('Latin1Memo: a buffer reused for other bytes does not give the old string', () => {
  const memo = new Latin1Memo();
  const b = Buffer.from('_STAN.acks.AAAA');
  assert.equal(memo.get(b, 0, b.length), '_STAN.acks.AAAA');
  b.write('B', 14, 'latin1');
  assert.equal(memo.get(b, 0, b.length), '_STAN.acks.AAAB');
  assert.equal(memo.get(b, 11, 15), 'AAAB');
});

test('latin1String gives what toString gives, on views at an offset and on empty ranges', () => {
  // A read buffer is often a view into a larger pool: the range is the view's own.
  const pool = Buffer.from('....PUB _INBOX.\u00e9x.1 r 5\r\n', 'latin1');
  const view = pool.subarray(4);
  for (const [start, end] of [
    [0, 3],
    [4, 14],
    [4, 4],
    [0, view.length],
    [view.length, view.length],
  ] as const) {
    assert.equal(latin1String(view, start, end), view.toString('latin1', start, end));
  }
});
