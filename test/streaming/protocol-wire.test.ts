// The hand-written codec of the hot path (protocol/wire.ts, writeMsgProto, the
// PubAckBatch) against protobufjs, the codec the rest of the server uses: the same
// values from the same bytes, the same rejections, the same bytes written. The hot
// path reads messages where they lie in a read buffer, as ranges: every reader here
// is given its bytes between others that would break it if it read past them.
// Generated messages cover the usual shapes (ASCII and not, empty fields, repeated
// fields, unknown fields); arbitrary bytes cover the malformed ones.
import { after, before, describe, it } from 'node:test';
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
import { writeMsgProtoRange } from '../../src/streaming/protocol/msgproto.js';
import { Slabs } from '../../src/streaming/protocol/slabs.js';
import {
  ACK_INVALID,
  ACK_OTHER_CHANNEL,
  PubMsgView,
  decodeAck,
} from '../../src/streaming/protocol/wire.js';
import { encodePubAckError } from '../../src/streaming/encode.js';
import { PubAckBatch } from '../../src/streaming/pub-acks.js';
import { InternalBus } from '../../src/streaming/bus-internal.js';
import { startServer, type RunningServer } from '../../src/index.js';
import { isSmallInteger } from '../helpers/v8-natives.js';

/** Bytes around a message under test: a valid tag and a length that runs past the end. */
const PAD = Buffer.from([0x0a, 0x7f, 0xff]);

/** `buf` between PAD bytes, and where it is. */
function padded(buf: Uint8Array): [Buffer, number, number] {
  return [Buffer.concat([PAD, buf, PAD]), PAD.length, PAD.length + buf.length];
}

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
  if (!v.decode(...padded(buf))) return null;
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

  it('keeps every offset a small integer, whatever the length of a field', () => {
    // A heap number in one of these fields turns them all into doubles, under the
    // publish path a fresh server has just compiled (2 ** shift did, in the varints).
    for (const size of [0, 1, 127, 128, 300, 16_383, 16_384, 70_000, 2_100_000]) {
      const buf = Buffer.from(
        PubMsg.encode({
          clientID: 'me',
          guid: 'g'.repeat(200),
          subject: 'foo',
          reply: 'r',
          data: Buffer.alloc(size, 1),
          connID: Buffer.from('c'),
        }).finish(),
      );
      const v = new PubMsgView();
      assert.ok(v.decode(...padded(buf)), `size ${size}`);
      assert.equal(v.data.length, size);
      for (const field of [
        'clientIDStart',
        'clientIDEnd',
        'guidStart',
        'guidEnd',
        'subjectStart',
        'subjectEnd',
        'replyStart',
        'replyEnd',
        'dataStart',
        'dataEnd',
        'connIDStart',
        'connIDEnd',
      ] as const) {
        assert.ok(isSmallInteger(v[field]), `${field} of a PubMsg with ${size} bytes of data`);
      }
    }
  });

  it('given the last channel, says whether the subject is it, and reads the rest the same', () => {
    fc.assert(
      fc.property(
        fc.record({ clientID: text, guid: text, subject: text, data: bytes }),
        text,
        fc.boolean(),
        (fields, other, same) => {
          const buf = Buffer.from(PubMsg.encode(fields).finish());
          const known = Buffer.from(same ? fields.subject : other, 'utf8');
          const v = new PubMsgView();
          const ok = v.decode(...padded(buf), known);
          assert.equal(ok, protobufjsOf(buf) !== null);
          if (!ok) return;
          // An empty subject is not written, so never "known" (no channel name is empty).
          assert.equal(
            v.subjectKnown,
            fields.subject !== '' && Buffer.from(fields.subject, 'utf8').equals(known),
          );
          assert.equal(v.subject(), fields.subject);
          assert.equal(v.guid(), fields.guid);
          assert.equal(v.clientID(), fields.clientID);
        },
      ),
    );
    // A non-ASCII channel name, known: accepted without protobufjs, and marked.
    const name = 'caf\u00e9.\u00fc';
    const buf = Buffer.from(PubMsg.encode({ guid: 'g', subject: name }).finish());
    const v = new PubMsgView();
    assert.equal(v.decode(buf, 0, buf.length, Buffer.from(name)), true);
    assert.equal(v.subjectKnown, true);
    assert.equal(v.subject(), name);
    // Invalid UTF-8 that is not the known name is still refused, as protobufjs does.
    const bad = Buffer.from([0x1a, 0x02, 0xc3, 0x28]);
    assert.equal(v.decode(bad, 0, bad.length, Buffer.from('foo')), false);
  });

  it('rejects invalid UTF-8 in a string field, as protobufjs does', () => {
    const buf = Buffer.from([0x12, 0x02, 0xc3, 0x28, 0x1a, 0x03, 0x66, 0x6f, 0x6f]);
    assert.equal(protobufjsOf(buf), null);
    assert.equal(viewOf(buf), null);
  });
});

describe('Ack read by hand', () => {
  const channel = Buffer.from('foo.bar');

  function ackOf(buf: Buffer): number {
    const whole = decodeAck(buf, channel);
    const [p, start, end] = padded(buf);
    assert.equal(decodeAck(p, channel, start, end), whole);
    return whole;
  }

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
          assert.equal(ackOf(buf), expected(buf));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('agrees with protobufjs on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 30 }), (raw) => {
        const buf = Buffer.from(raw);
        assert.equal(ackOf(buf), expected(buf));
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
          // The publish path's form: data as a range, the timestamp as unsigned halves.
          const [p, start, end] = padded(data);
          const size = writeMsgProtoRange(
            slabs,
            sequence,
            timestamp.low >>> 0,
            timestamp.high >>> 0,
            Buffer.from(subject),
            reply,
            p,
            start,
            end,
          );
          assert.deepEqual(
            slabs.buf.subarray(slabs.start, slabs.start + size),
            Buffer.from(theirs),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('keeps each buffer carved from a slab apart from the next', () => {
    const slabs = new Slabs();
    const bufs = Array.from({ length: 2000 }, (_, i) => {
      const n = 1 + (i % 97);
      // Both ways of taking bytes: a view, and a reservation in slabs.buf.
      if (i % 2 === 0) return slabs.alloc(n).fill(i & 0xff);
      slabs.reserve(n);
      return slabs.buf
        .fill(i & 0xff, slabs.start, slabs.start + n)
        .subarray(slabs.start, slabs.start + n);
    });
    bufs.forEach((b, i) => {
      assert.ok(b.every((x) => x === (i & 0xff)));
    });
  });
});

describe('PubAcks of a publish batch', () => {
  let running: RunningServer;
  let bus: InternalBus;
  const got: [string, Buffer][] = [];
  before(async () => {
    running = await startServer({ host: '127.0.0.1', port: 0 });
    bus = new InternalBus(running.server, 'pub-acks test');
    bus.subscribe('acks.>', (subject, _r, data) => {
      got.push([subject, Buffer.from(data)]);
    });
  });
  after(async () => {
    await bus.close();
    await running.close();
  });

  it('sends each PubAck as protobufjs writes it, to its own reply subject, in order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ guid: text, error: fc.option(text, { nil: undefined }) }), {
          maxLength: 700,
        }),
        fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
        (acks, failure) => {
          got.length = 0;
          const batch = new PubAckBatch();
          acks.forEach(({ guid, error }, i) => {
            if (error !== undefined) {
              batch.add(`acks.${i}`, encodePubAckError(guid, error));
              return;
            }
            const [p, start, end] = padded(PubMsg.encode({ guid, subject: 'foo' }).finish());
            const view = new PubMsgView();
            assert.ok(view.decode(p, start, end));
            batch.addFrom(`acks.${i}`, view.buf, view.guidStart, view.guidEnd);
          });
          assert.equal(batch.size, acks.length);
          batch.send(bus, failure ?? null);
          assert.deepEqual(
            got,
            acks.map(({ guid, error }, i) => {
              // A failed flush turns every success (no error, or '') into that error.
              const e = error !== undefined && error !== '' ? error : failure;
              const ack = e !== undefined ? { guid, error: e } : { guid };
              return [`acks.${i}`, Buffer.from(PubAck.encode(ack).finish())];
            }),
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('Slabs', () => {
  it('every reservation fits in its buffer, whatever the sizes before it', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 40_000 }), { maxLength: 40 }), (sizes) => {
        const slabs = new Slabs();
        for (const n of sizes) {
          slabs.reserve(n);
          assert.ok(slabs.start + n <= slabs.buf.length, `${n} B at ${slabs.start}`);
          assert.equal(slabs.alloc(n).length, n);
        }
      }),
    );
  });

  it('a fresh channel: 20 KB after 100 B (ran past an 8 KiB slab)', () => {
    const slabs = new Slabs();
    slabs.alloc(100);
    slabs.reserve(20_000);
    assert.ok(slabs.start + 20_000 <= slabs.buf.length);
  });
});
