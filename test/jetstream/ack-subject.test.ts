// Ack subjects and bodies as the consumer reads them in place (src/jetstream/ack-subject.ts):
// the sequences of a well-formed `$JS.ACK` subject, and nothing from a malformed one.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ackDseq,
  ackEmptyToken,
  ackSseq,
  ackVerb,
  parseAckRange,
  parseAckSubject,
} from '../../src/jetstream/ack-subject.js';

const PREFIX = '$JS.ACK.ORDERS.c1.';

function parse(tail: string): [number, number] | null {
  return parseAckSubject(PREFIX + tail, PREFIX.length) ? [ackSseq, ackDseq] : null;
}

test('the stream and consumer sequences of a well-formed ack subject', () => {
  assert.deepEqual(parse('1.42.7.1700000000000000000.3'), [42, 7]);
  assert.deepEqual(parse('12.9007199254740991.1.0.0'), [9007199254740991, 1]);
  // The delivery count, timestamp and pending count are not read as numbers.
  assert.deepEqual(parse('x.5.6.y.z'), [5, 6]);
});

test('malformed ack subjects are not acks', () => {
  for (const tail of [
    '1.42.7.1700000000000000000', // four tokens
    '1.42.7.1700000000000000000.3.9', // six
    '1.4x.7.1.1', // stream sequence not decimal
    '1.42.-7.1.1', // consumer sequence signed
    '1..7.1.1', // empty sequence
    '1.1e3.7.1.1', // exponent
    '1.99999999999999999999.7.1.1', // past a safe integer
  ]) {
    assert.equal(parse(tail), null, tail);
  }
});

test('acks read from bytes in place, and the empty tokens no subscription matches', () => {
  const b = Buffer.from(`PUB ${PREFIX}1.42.7.1700000000000000000.3 _R 0`, 'latin1');
  const from = 4 + PREFIX.length;
  const end = b.indexOf(' _R');
  assert.equal(parseAckRange(b, from, end), true);
  assert.deepEqual([ackSseq, ackDseq, ackEmptyToken], [42, 7, false]);
  for (const tail of ['.1.42.7.1.3', '1.42.7.1.', '1.42.7..3', '1..42.7.1']) {
    const t = Buffer.from(tail, 'latin1');
    parseAckRange(t, 0, t.length);
    assert.equal(ackEmptyToken, true, tail);
  }
  const odd = Buffer.from('1.42.7.x', 'latin1');
  assert.equal(parseAckRange(odd, 0, odd.length), false);
  assert.equal(ackEmptyToken, false);
});

test('ack verbs from the body bytes', () => {
  const verb = (s: string): string => ackVerb(Buffer.from(s, 'latin1'));
  assert.equal(verb(''), '+ACK');
  assert.equal(verb('+ACK'), '+ACK');
  assert.equal(verb('-NAK {"delay": 1000000000}'), '-NAK');
  assert.equal(verb('+WPI'), '+WPI');
  assert.equal(verb('+TERM'), '+TER');
  assert.equal(verb('+NXT {"batch":2}'), '+NXT');
  assert.equal(verb('+AC'), '');
  assert.equal(verb('junk'), '');
  // As nats-server's processAck: +OK acks; +ACK, +WPI and +TERM only as the whole body.
  assert.equal(verb('+OK'), '+ACK');
  assert.equal(verb('+ACKNOWLEDGED'), '');
  assert.equal(verb('+WPIX'), '');
  assert.equal(verb('+TER'), '');
  assert.equal(verb('+TERMS'), '');
  assert.equal(verb('-NA'), '');
  // A body inside a larger buffer.
  const line = Buffer.from('xx+WPIyy', 'latin1');
  assert.equal(ackVerb(line, 2, 6), '+WPI');
  assert.equal(ackVerb(line, 2, 2), '+ACK');
});
