// putLatin1 (in-process publishes lay out subjects and reply subjects with it) writes
// what Buffer#write(s, pos, 'latin1') writes, truncation at the buffer's end included;
// keep() hands out no view or copy for an empty range.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { putLatin1 } from '../../src/server/outbound.js';
import { keep, SHARED_READ_BUFFER } from '../../src/server/shared-read.js';

test('putLatin1 writes as Buffer#write with latin1 does', () => {
  const strings = [
    '',
    'a',
    '_INBOX.abcdefghijklmnopqrstuv.123',
    '$KV.b.k',
    'é\u00ff',
    'x'.repeat(40),
  ];
  for (const s of strings) {
    for (const pos of [0, 3, 30, 39]) {
      const want = Buffer.alloc(40, 0x2e);
      const got = Buffer.alloc(40, 0x2e);
      const end = pos + want.write(s, pos, 'latin1');
      assert.equal(putLatin1(got, pos, s), end, `${s} at ${pos}`);
      assert.deepEqual(got, want, `${s} at ${pos}`);
    }
  }
});

test('keep() of an empty range is the one empty buffer, from any buffer', () => {
  const own = Buffer.from('abc');
  assert.equal(keep(own, 1, 1).length, 0);
  assert.equal(keep(SHARED_READ_BUFFER, 5, 5), keep(own, 2, 2));
  assert.equal(keep(own, 0, 2).toString(), 'ab');
});
