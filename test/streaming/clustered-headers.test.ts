// A clustered Follower reads the headers of the Leader's publishes in place
// (src/streaming/store/jetstream/codec.ts readLeaderHeaders, longFromDecimal): what it
// reads is what the `nats` client's header parser and Long.fromString() read, and
// anything else is left to them (null).
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { describe, it } from 'node:test';
import Long from 'long';
import { headers } from 'nats';
import { longFromDecimal, readLeaderHeaders } from '../../src/streaming/store/jetstream/codec.js';

const bytes = (s: string): Buffer => Buffer.from(s);

/** A header block as the `nats` client encodes it. */
function block(fields: [string, string][]): Uint8Array {
  const h = headers();
  for (const [k, v] of fields) h.set(k, v);
  return (h as unknown as { encode(): Uint8Array }).encode();
}

describe('clustered Follower: the Leader headers read in place', () => {
  it('longFromDecimal: every 1-19 digit decimal up to 2^63-1 as Long.fromString reads it', () => {
    // Around every power of two and of ten up to 2^63 - 1, then random ones.
    const max = BigInt(Long.MAX_VALUE.toString());
    const edges = new Set<bigint>([0n, max]);
    for (let k = 0n; k < 63n; k++) for (const d of [-1n, 0n, 1n]) edges.add((1n << k) + d);
    for (let k = 0n; k <= 18n; k++) for (const d of [-1n, 0n, 1n]) edges.add(10n ** k + d);
    const values = [...edges].filter((v) => v >= 0n && v <= max).map(String);
    values.push('0000000000000000001', '1795519269910123456');
    for (let i = 0; i < 2000; i++) {
      const len = 1 + (i % 19);
      let s = String(randomInt(1, 10));
      while (s.length < len) s += String(randomInt(0, 10));
      if (len === 19 && s > Long.MAX_VALUE.toString()) continue;
      values.push(s);
    }
    for (const v of values) {
      const got = longFromDecimal(bytes(v), 0, v.length);
      assert.ok(got !== null, v);
      assert.equal(got.toString(), Long.fromString(v).toString(), v);
      assert.equal(got.unsigned, false);
    }
    // In the middle of a buffer.
    assert.equal(longFromDecimal(bytes('x:1234567890123:y'), 2, 15)?.toString(), '1234567890123');
    for (const v of ['', '9223372036854775808', '99999999999999999999', '-1', '12a4', ' 12'])
      assert.equal(longFromDecimal(bytes(v), 0, v.length), null, JSON.stringify(v));
  });

  it('readLeaderHeaders: the three headers of a Leader publish; other blocks refused', () => {
    const h = readLeaderHeaders(
      block([
        ['Nats-Expected-Last-Sequence', '41'],
        ['Stan-Timestamp', '1795519269910123456'],
        ['Stan-Reply', '_INBOX.r\u00e9ponse.1'],
      ]),
    );
    assert.ok(h !== null);
    assert.equal(h.expectedLast, 41);
    assert.equal(h.timestamp.toString(), '1795519269910123456');
    assert.equal(h.reply, '_INBOX.r\u00e9ponse.1');

    const noReply = readLeaderHeaders(
      block([
        ['Nats-Expected-Last-Sequence', '0'],
        ['Stan-Timestamp', '5'],
      ]),
    );
    assert.deepEqual(
      noReply && [noReply.expectedLast, noReply.timestamp.toString(), noReply.reply],
      [0, '5', ''],
    );

    // Left to the client's parser: a header it would read differently or we do not know,
    // a missing one, a negative timestamp, a value that is not a number.
    const refused: [string, string][][] = [
      [
        ['Nats-Expected-Last-Sequence', '1'],
        ['Stan-Timestamp', '5'],
        ['Other', 'x'],
      ],
      [['Stan-Timestamp', '5']],
      [['Nats-Expected-Last-Sequence', '1']],
      [
        ['Nats-Expected-Last-Sequence', '1'],
        ['Stan-Timestamp', '-1000000007'],
      ],
      [
        ['Nats-Expected-Last-Sequence', 'x1'],
        ['Stan-Timestamp', '5'],
      ],
    ];
    for (const fields of refused) assert.equal(readLeaderHeaders(block(fields)), null);
    assert.equal(readLeaderHeaders(bytes('NATS/1.0 503\r\n\r\n')), null);
    assert.equal(
      readLeaderHeaders(
        bytes(
          'NATS/1.0\r\nNats-Expected-Last-Sequence: 1\r\nStan-Timestamp: 5\r\nStan-Reply:  a \r\n\r\n',
        ),
      ),
      null,
    );
  });
});
