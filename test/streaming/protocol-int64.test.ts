// 64-bit sequences and timestamps keep every bit, and the sizes the reference server
// reports (in_bytes, bytes per stored message) come out the same.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  Ack,
  Long,
  MAX_SEQUENCE,
  MsgProto,
  PubMsg,
  SubscriptionRequest,
  encodeMsgProto,
  markRedelivered,
  millisToNanos,
  nanosToMillis,
  newHalves,
  nowNanos,
  nowNanosInto,
  seqFromLong,
  seqToLong,
} from '../../src/streaming/protocol/index.js';
import { haveSameMap } from '../helpers/v8-natives.js';

const U64_MAX = '18446744073709551615';
const I64_MAX = '9223372036854775807';
const I64_MIN = '-9223372036854775808';

describe('64-bit fields', () => {
  for (const text of ['0', '1', '9007199254740991', '9007199254740993', U64_MAX]) {
    it(`uint64 ${text} round-trips exactly (Ack.sequence, SubscriptionRequest.startSequence)`, () => {
      const value = Long.fromString(text, true);
      const ack = Ack.decode(Ack.encode({ subject: 'foo', sequence: value }).finish());
      assert.equal(ack.sequence.toString(), text);
      const req = SubscriptionRequest.decode(
        SubscriptionRequest.encode({ startSequence: value }).finish(),
      );
      assert.equal(req.startSequence.toString(), text);
    });
  }

  for (const text of [I64_MIN, '-1', '0', '1712000000123456789', I64_MAX]) {
    it(`int64 ${text} round-trips exactly (MsgProto.timestamp, startTimeDelta)`, () => {
      const value = Long.fromString(text);
      const msg = MsgProto.decode(MsgProto.encode({ timestamp: value }).finish());
      assert.equal(msg.timestamp.toString(), text);
      const req = SubscriptionRequest.decode(
        SubscriptionRequest.encode({ startTimeDelta: value }).finish(),
      );
      assert.equal(req.startTimeDelta.toString(), text);
    });
  }

  it('converts sequences between the wire and the store without loss', () => {
    for (const n of [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 52 + 3, MAX_SEQUENCE]) {
      assert.equal(seqFromLong(seqToLong(n)), n);
      assert.equal(seqToLong(n).toString(), String(n));
    }
  });

  it('maps wire sequences a store can never assign to Infinity', () => {
    assert.equal(seqFromLong(Long.fromString('9007199254740992', true)), Infinity);
    assert.equal(seqFromLong(Long.fromString(U64_MAX, true)), Infinity);
  });

  it('converts milliseconds and nanoseconds exactly', () => {
    assert.equal(millisToNanos(1_712_000_000_123).toString(), '1712000000123000000');
    assert.equal(nanosToMillis(Long.fromString('1712000000123999999')), 1_712_000_000_123);
    assert.equal(nanosToMillis(Long.fromString('-1')), -1);
    assert.equal(nanosToMillis(Long.fromString('-1000000')), -1);
    assert.equal(nanosToMillis(Long.fromString(I64_MAX)), 9_223_372_036_854);
  });

  it('reads the clock in nanoseconds, beyond 2^53', () => {
    const before = Date.now();
    const now = nowNanos();
    assert.ok(now.greaterThan(Long.fromNumber(2 ** 53)));
    assert.ok(Math.abs(nanosToMillis(now) - before) < 1000);
  });
});

describe('MsgProto as stored and delivered', () => {
  it('is 24 bytes for "msg-0" on foo, as the reference memory store counts it', () => {
    const bytes = encodeMsgProto(1, nowNanos(), 'foo', '', Buffer.from('msg-0'));
    assert.equal(bytes.length, 24);
  });

  it("makes a 69-byte PubMsg for node-nats-streaming's publish, as in_bytes counts it", () => {
    const bytes = PubMsg.encode({
      clientID: 'client1',
      guid: 'a'.repeat(22),
      subject: 'foo',
      data: Buffer.from('msg-0'),
      connID: Buffer.from('b'.repeat(22)),
    }).finish();
    assert.equal(bytes.length, 69);
  });

  for (const count of [0, 1, 127, 128, 300, 0xffffffff]) {
    it(`marks redelivery ${count} the same way a full re-encode does`, () => {
      const ts = Long.fromString('1712000000123456789');
      const stored = encodeMsgProto(42, ts, 'foo', 'reply', Buffer.from('payload'));
      const marked = markRedelivered(stored, count);
      const direct = MsgProto.encode({
        sequence: seqToLong(42),
        subject: 'foo',
        reply: 'reply',
        data: Buffer.from('payload'),
        timestamp: ts,
        redelivered: true,
        redeliveryCount: count,
      }).finish();
      assert.equal(marked.length, direct.length);
      const a = MsgProto.decode(marked);
      assert.equal(a.redelivered, true);
      assert.equal(a.redeliveryCount, count);
      assert.equal(a.sequence.toString(), '42');
      assert.equal(a.timestamp.toString(), ts.toString());
      assert.equal(Buffer.from(a.data).toString(), 'payload');
      assert.deepEqual(MsgProto.encode(a).finish(), direct);
    });
  }
});

describe('timestamp halves', () => {
  it('keep one hidden class whatever the time they hold', () => {
    // An unsigned low half above 2^31 - 1 is not a small integer: halves that began
    // as small integers changed their map on the first such timestamp.
    const a = newHalves();
    const b = newHalves();
    a.low = 0xffff_ffff;
    a.high = 0x7fff_ffff;
    nowNanosInto(b);
    assert.ok(haveSameMap(a, b));
    assert.ok(haveSameMap(a, newHalves()));
    const now = nowNanos();
    assert.ok(Long.fromBits(b.low, b.high, true).lessThanOrEqual(now.toUnsigned()));
  });
});
