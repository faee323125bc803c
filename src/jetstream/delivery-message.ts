// One consumer's deliveries as the core routes them: the MSG line's subject (the one the
// message was published to), its ack reply `$JS.ACK.<stream>.<consumer>.<dc>.<sseq>.
// <dseq>.<ts>.<pending>` and its sizes, written as bytes into a buffer of the consumer's
// own, where the core's delivery copies them from. The ack prefix is written once, the
// subject only when it changes, the numbers in place: no string per delivered message.

import { InternalMessage } from '../server/message.js';
import { putInt } from '../server/outbound.js';

const DOT = 0x2e;
const ZERO = 0x30;
/** The five numbers of an ack reply (at most 20 digits each) and their dots, then two sizes. */
const NUMBERS_ROOM = 5 * 20 + 4 + 2 * 20;
/** Largest `hi` whose `hi * 1e9` is an exact double (see putNanos). */
const EXACT_SECONDS = Math.floor(Number.MAX_SAFE_INTEGER / 1953125);

export class DeliveryMessage {
  /**
   * The fields the core reads, in an InternalMessage: the core's delivery code was
   * optimised for the shapes it has routed before (PubAcks, API replies are
   * InternalMessages), and a message of a class of its own would make V8 drop that
   * code at a consumer's first delivery and compile it again for two shapes.
   */
  private readonly m = new InternalMessage();
  /** Where the subject starts: after the reply and the sizes, whatever their lengths. */
  private readonly subjectAt: number;
  private subject = '';
  private argBuf: Buffer = Buffer.alloc(0);

  constructor(private readonly ackPrefix: string) {
    // Every character one latin1 byte, as the core's in-process publishes write them.
    this.subjectAt = ackPrefix.length + NUMBERS_ROOM;
    this.grow(64);
  }

  /**
   * Lays out a delivery of the message published to `subject`: its delivery count, stream
   * and consumer sequences, stored time (ns) and the consumer's pending count go into the
   * ack reply; the payload is `buf[hdrStart, dataEnd)`, the header block (empty for none)
   * up to `dataStart`: a store keeps the two together, and the core copies them from there.
   */
  set(
    subject: string,
    dc: number,
    sseq: number,
    dseq: number,
    ts: number,
    pending: number,
    buf: Buffer,
    hdrStart: number,
    dataStart: number,
    dataEnd: number,
  ): InternalMessage {
    const m = this.m;
    if (subject !== this.subject) {
      if (this.subjectAt + subject.length > this.argBuf.length) this.grow(subject.length);
      m.argBuf = this.argBuf;
      m.subjectStart = this.subjectAt;
      m.subjectEnd = this.subjectAt + this.argBuf.write(subject, this.subjectAt, 'latin1');
      this.subject = subject;
    }
    const b = this.argBuf;
    let p = putInt(b, this.ackPrefix.length, dc);
    b[p++] = DOT;
    p = putInt(b, p, sseq);
    b[p++] = DOT;
    p = putInt(b, p, dseq);
    b[p++] = DOT;
    p = putNanos(b, p, ts);
    b[p++] = DOT;
    p = putInt(b, p, pending);
    m.replyStart = 0;
    m.replyEnd = p;
    const hdrLen = dataStart - hdrStart;
    const total = dataEnd - hdrStart;
    if (hdrLen > 0) {
      m.hdr = hdrLen;
      m.hdrStart = p;
      p = putInt(b, p, hdrLen);
      m.hdrEnd = p;
    } else {
      m.hdr = -1;
    }
    m.payload = buf;
    m.payloadStart = hdrStart;
    m.payloadEnd = dataEnd;
    m.sizeStart = p;
    m.sizeEnd = putInt(b, p, total);
    m.size = total;
    return m;
  }

  /** A buffer with room for a subject of `subjectLen` bytes, the ack prefix written. */
  private grow(subjectLen: number): void {
    const b = Buffer.allocUnsafe(this.subjectAt + Math.max(subjectLen * 2, 64));
    b.write(this.ackPrefix, 0, 'latin1');
    this.argBuf = b;
    this.m.argBuf = b;
    this.subject = '';
  }
}

/**
 * Writes a time in nanoseconds since the epoch (an integer held in a double, exact to
 * 256 ns) in decimal at `p`: its exact value, which reads back as the same double, as
 * String() would write it (but without the string). Seconds and nanoseconds apart: the
 * seconds times 1e9 is exact while they times 5^9 stay below 2^53 (until the year 2112);
 * beyond that the string is made.
 */
export function putNanos(b: Buffer, p: number, ns: number): number {
  if (ns <= Number.MAX_SAFE_INTEGER) return putInt(b, p, ns);
  let hi = Math.floor(ns / 1e9);
  if (hi > EXACT_SECONDS) return p + b.write(String(ns), p, 'latin1');
  let lo = ns - hi * 1e9;
  if (lo < 0) {
    hi--;
    lo += 1e9;
  } else if (lo >= 1e9) {
    hi++;
    lo -= 1e9;
  }
  // The seconds' last digit apart: putInt's digit count would pass 2^31 on ten digits
  // (V8 drops its optimised code on that overflow, and every caller that inlined it).
  const tens = Math.floor(hi / 10);
  p = putInt(b, p, tens);
  b[p++] = ZERO + hi - tens * 10;
  // Nine digits, zeros in front; below 2^31, so integer arithmetic.
  for (let i = 8; i >= 0; i--) {
    const q = (lo / 10) | 0;
    b[p + i] = ZERO + lo - q * 10;
    lo = q;
  }
  return p + 9;
}
