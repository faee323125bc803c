// The hand-written codec of the hot path (protocol/wire.ts, writeMsgProto,
// encodePubAckFrom) against protobufjs, the codec the rest of the server uses: the
// same values from the same bytes, the same rejections, the same bytes written.
// Generated messages cover the usual shapes (ASCII and not, empty fields, repeated
// fields, unknown fields); arbitrary bytes cover the malformed ones.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  Ack,
  Long,
  MsgProto,
  PubAck,
  PubMsg,
  seqFromLong,
  writeMsgProto,
} from '../../src/streaming/protocol/index.js';
import { Slabs } from '../../src/streaming/protocol/slabs.js';
import {
  ACK_INVALID,
  ACK_OTHER_CHANNEL,
  PubMsgView,
  decodeAck,
} from '../../src/streaming/protocol/wire.js';
import { encodePubAckFrom } from '../../src/streaming/encode.js';

const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 }));
const bytes = fc.uint8Array({ maxLength: 300 });

/** A varint-keyed field of any number and wire type, as raw bytes (unknown to PubMsg or not). */
const extraField = fc
  .record({ field: fc.integer({ min: 1, max: 40 }), value: fc.uint8Array({ maxLength: 12 }) })
  .map(({ field, value }) => {
    const tag = (field << 3) | 2;
    const head = tag < 0x80 ? [tag] : [(tag & 0x7f) | 0x80, tag >>> 7];
    return Buffer.from([...head, value.length, ...value]);
  });

function viewOf(buf: Buffer): Record<string, unknown> | null {
  const v = new PubMsgView();
  if (!v.decode(buf)) return null;
  return {
    clientID: v.clientID(),
    guid: v.guid(),
    subject: v.subject(),
    reply: v.reply(),
    data: Buffer.from(v.data),
    connID: Buffer.from(v.connKey(), 'latin1'),
  };
}

function protobufjsOf(buf: Buffer): Record<string, unknown> | null {
  try {
    const pm = PubMsg.decode(buf);
    return {
      clientID: pm.clientID,
      guid: pm.guid,
      subject: pm.subject,
      reply: pm.reply,
      data: Buffer.from(pm.data),
      connID: Buffer.from(pm.connID),
    };
  } catch {
    return null;
  }
}

describe('PubMsg read by hand', () => {
  it('gives what protobufjs gives for any PubMsg, with extra fields around', () => {
    fc.assert(
      fc.property(
        fc.record({
          clientID: text,
          guid: text,
          subject: text,
          reply: text,
          data: bytes,
          connID: fc.uint8Array({ maxLength: 30 }),
          sha256: fc.uint8Array({ maxLength: 32 }),
        }),
        fc.array(extraField, { maxLength: 3 }),
        (fields, extras) => {
          const buf = Buffer.concat([...extras, PubMsg.encode(fields).finish(), ...extras]);
          assert.deepEqual(viewOf(buf), protobufjsOf(buf));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('accepts and rejects arbitrary bytes as protobufjs does', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (raw) => {
        const buf = Buffer.from(raw);
        assert.deepEqual(viewOf(buf), protobufjsOf(buf));
      }),
      { numRuns: 3000 },
    );
  });

  it('rejects invalid UTF-8 in a string field, as protobufjs does', () => {
    const buf = Buffer.from([0x12, 0x02, 0xc3, 0x28, 0x1a, 0x03, 0x66, 0x6f, 0x6f]);
    assert.equal(protobufjsOf(buf), null);
    assert.equal(viewOf(buf), null);
  });
});

describe('Ack read by hand', () => {
  const channel = Buffer.from('foo.bar');

  function expected(buf: Buffer): number {
    try {
      const ack = Ack.decode(buf);
      return ack.subject === 'foo.bar' ? seqFromLong(ack.sequence) : ACK_OTHER_CHANNEL;
    } catch {
      return ACK_INVALID;
    }
  }

  it('gives the sequence protobufjs gives, up to 2^64 - 1', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constant('foo.bar'), fc.constant('foo.baz'), fc.constant(''), text),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        (subject, seq) => {
          const sequence = Long.fromString(seq.toString(), true);
          const buf = Buffer.from(Ack.encode({ subject, sequence }).finish());
          assert.equal(decodeAck(buf, channel), expected(buf));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('agrees with protobufjs on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 30 }), (raw) => {
        const buf = Buffer.from(raw);
        assert.equal(decodeAck(buf, channel), expected(buf));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('MsgProto and PubAck written by hand', () => {
  it('writes the bytes protobufjs writes', () => {
    const slabs = new Slabs();
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        text,
        text,
        bytes,
        (sequence, ts, subject, reply, data) => {
          const timestamp = Long.fromString(ts.toString());
          const mine = writeMsgProto(slabs, sequence, timestamp, Buffer.from(subject), reply, data);
          const theirs = MsgProto.encode({
            sequence: Long.fromNumber(sequence, true),
            subject,
            reply,
            data,
            timestamp,
          }).finish();
          assert.deepEqual(Buffer.from(mine), Buffer.from(theirs));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('writes a PubAck from the guid bytes of a PubMsg as protobufjs does', () => {
    fc.assert(
      fc.property(text, (guid) => {
        const pub = Buffer.from(PubMsg.encode({ guid, subject: 'foo' }).finish());
        const view = new PubMsgView();
        assert.ok(view.decode(pub));
        const mine = encodePubAckFrom(view.buf, view.guidStart, view.guidEnd);
        assert.deepEqual(mine, Buffer.from(PubAck.encode({ guid }).finish()));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps each buffer carved from a slab apart from the next', () => {
    const slabs = new Slabs();
    const bufs = Array.from({ length: 2000 }, (_, i) => {
      const b = slabs.alloc(1 + (i % 97));
      b.fill(i & 0xff);
      return b;
    });
    bufs.forEach((b, i) => {
      assert.ok(b.every((x) => x === (i & 0xff)));
    });
  });
});
