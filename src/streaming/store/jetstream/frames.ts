// The Leader's JetStream publishes as ready-made HPUB frames. Through the `nats`
// client every publish built a header object's string, encoded it, built and encoded
// the protocol line and queued three buffers: 40% of a busy Leader's time. Here a
// channel's `HPUB <subject> <ack inbox> ` is encoded once, the two headers and the
// data are copied into one buffer, and the frames of a turn go to the connection in
// one write (src/streaming/raw-frames.ts: the client's queue keeps them in order).
//
// The bytes are what the client would write: `NATS/1.0`, `Nats-Expected-Last-Sequence`,
// `Stan-Timestamp`, maybe `Stan-Reply`, the data. A frame the client would refuse or
// change (a reply with control characters or outer spaces, a message over the
// server's max_payload) or a closed connection is left to the client (add() returns
// false; the caller flushes the queued frames first, to keep the order): it throws
// or writes as before.
import type Long from 'long';
import type { NatsConnection } from 'nats';
import { REPLY_HEADER, TIMESTAMP_HEADER } from './names.js';
import { putInt } from '../../../server/outbound.js';
import { RawFrames } from '../../raw-frames.js';

const HEAD = Buffer.from('NATS/1.0\r\nNats-Expected-Last-Sequence: ');
const TIMESTAMP = Buffer.from(`\r\n${TIMESTAMP_HEADER}: `);
const REPLY = Buffer.from(`\r\n${REPLY_HEADER}: `);
const CRLF = 0x0a0d; // "\r\n" as a little-endian uint16
/** Frame bytes besides prefix, numbers, reply and data: the fixed texts and CRLFs. */
const FIXED = HEAD.length + TIMESTAMP.length + 2 + 2 + 2 + 1 + 2;
/** Longest decimal of a safe integer, and of a 64-bit timestamp. */
const DIGITS = 20;

export class FrameWriter extends RawFrames {
  /** Null when the client does not expose its protocol handler (then publish() is used). */
  static override of(nc: NatsConnection): FrameWriter | null {
    const protocol = RawFrames.protocolOf(nc);
    return protocol === null ? null : new FrameWriter(nc, protocol);
  }

  /** `HPUB <subject> <reply> `, a channel's frame prefix. */
  static prefix(subject: string, reply: string): Buffer {
    return Buffer.from(`HPUB ${subject} ${reply} `);
  }

  /**
   * Queues one publish (written at the end of the turn); false when the client must
   * publish it instead (see above).
   */
  add(
    prefix: Buffer,
    expectedLast: number,
    timestamp: Long,
    reply: Uint8Array,
    data: Uint8Array,
  ): boolean {
    if (this.nc.isClosed() || !plainValue(reply)) return false;
    this.reserve(prefix.length + FIXED + 4 * DIGITS + reply.length + REPLY.length + data.length);
    const b = this.buf;
    // The header block is written first, after room for the prefix and both lengths;
    // then the prefix and lengths are written before it and the gap closed.
    const headAt = this.len + prefix.length + 2 * DIGITS + 3;
    let p = headAt;
    p += HEAD.copy(b, p);
    p = putInt(b, p, expectedLast);
    p += TIMESTAMP.copy(b, p);
    p = writeTimestamp(b, p, timestamp);
    if (reply.length > 0) {
      p += REPLY.copy(b, p);
      b.set(reply, p);
      p += reply.length;
    }
    b.writeUInt16LE(CRLF, p);
    b.writeUInt16LE(CRLF, p + 2);
    p += 4;
    const headerLength = p - headAt;
    const total = headerLength + data.length;
    const limit = this.nc.info?.max_payload;
    if (limit !== undefined && total > limit) return false;
    let q = this.len + prefix.copy(b, this.len);
    q = putInt(b, q, headerLength);
    b[q++] = 0x20;
    q = putInt(b, q, total);
    b.writeUInt16LE(CRLF, q);
    q += 2;
    b.copy(b, q, headAt, p);
    q += headerLength;
    b.set(data, q);
    q += data.length;
    b.writeUInt16LE(CRLF, q);
    this.queued(q + 2);
    return true;
  }
}

/** A header value the client would write unchanged: no control bytes, no outer spaces. */
function plainValue(v: Uint8Array): boolean {
  const n = v.length;
  if (n === 0) return true;
  if (v[0] === 0x20 || v[n - 1] === 0x20) return false;
  for (let i = 0; i < n; i++) if (v[i]! < 0x20 || v[i] === 0x7f) return false;
  return true;
}

const BILLION = 1e9;

/**
 * Writes a timestamp (Unix ns, a Long) in decimal, as Long.toString() would, without
 * its divisions: N = H * 2^32 + L is split into N = q * 10^9 + r with exact doubles
 * (H = Hh * 2^16 + Hl; 2^48 = 281474 * 10^9 + 976710656, 2^32 = 4 * 10^9 + 294967296;
 * every product and the sum stay below 2^53).
 */
function writeTimestamp(b: Buffer, p: number, t: Long): number {
  const high = t.high;
  if (high < 0) return p + b.write(t.toString(), p, 'latin1');
  const hh = high >>> 16;
  const hl = high & 0xffff;
  let r = hh * 976710656 + hl * 294967296 + (t.low >>> 0);
  const q = hh * 281474 + hl * 4 + Math.floor(r / BILLION);
  r %= BILLION;
  if (q === 0) return putInt(b, p, r);
  p = putInt(b, p, q);
  for (let i = p + 8; i >= p; i--) {
    b[i] = 0x30 + (r % 10);
    r = Math.floor(r / 10);
  }
  return p + 9;
}
