// Byte-level helpers for MsgProto, the message as stored and as delivered.
//
// A message is marshaled once, when it is published: those bytes are what the store
// keeps, what its byte limits count (the reference counts the marshaled MsgProto) and
// what every first delivery sends. A redelivery needs `redelivered` and
// `redeliveryCount` set: protobuf decoders accept fields in any order and the stored
// form never carries either field, so appending them to the stored bytes yields the
// same message as re-encoding it, for the cost of one copy.
import type Long from 'long';
import type { Slabs } from './slabs.js';
import { putBytes } from '../../server/outbound.js';

const TAG_SEQUENCE = (1 << 3) | 0;
const TAG_SUBJECT = (2 << 3) | 2;
const TAG_REPLY = (3 << 3) | 2;
const TAG_DATA = (4 << 3) | 2;
const TAG_TIMESTAMP = (5 << 3) | 0;

/**
 * Marshals a message as it is stored (redelivered unset), byte for byte what
 * protobufjs and the reference write: fields in number order, empty ones left out.
 */
export function encodeMsgProto(
  sequence: number,
  timestamp: Long,
  subject: string,
  reply: string,
  data: Uint8Array,
): Uint8Array {
  return writeMsgProto(null, sequence, timestamp, Buffer.from(subject), reply, data);
}

/**
 * encodeMsgProto with the subject already in bytes (a channel keeps its name so),
 * into a buffer from `slabs` (null: a buffer of its own).
 */
export function writeMsgProto(
  slabs: Slabs | null,
  sequence: number,
  timestamp: Long,
  subject: Buffer,
  reply: string,
  data: Uint8Array,
): Buffer {
  const src = Buffer.isBuffer(data)
    ? data
    : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const tsLow = timestamp.low >>> 0;
  const tsHigh = timestamp.high >>> 0;
  const size = msgProtoSize(sequence, tsLow, tsHigh, subject, reply, src.length);
  const out = slabs !== null ? slabs.alloc(size) : Buffer.allocUnsafe(size);
  putMsgProto(out, 0, sequence, tsLow, tsHigh, subject, reply, src, 0, src.length);
  return out;
}

/**
 * The publish path's writeMsgProto: the data is `src[srcStart, srcEnd)` (the PubMsg
 * as read), the timestamp its unsigned 32-bit halves, and the message goes to
 * `slabs.buf[slabs.start, slabs.start + size)`; returns the size. No object is made.
 */
export function writeMsgProtoRange(
  slabs: Slabs,
  sequence: number,
  tsLow: number,
  tsHigh: number,
  subject: Buffer,
  reply: string,
  src: Buffer,
  srcStart: number,
  srcEnd: number,
): number {
  const size = msgProtoSize(sequence, tsLow, tsHigh, subject, reply, srcEnd - srcStart);
  slabs.reserve(size);
  putMsgProto(
    slabs.buf,
    slabs.start,
    sequence,
    tsLow,
    tsHigh,
    subject,
    reply,
    src,
    srcStart,
    srcEnd,
  );
  return size;
}

function msgProtoSize(
  sequence: number,
  tsLow: number,
  tsHigh: number,
  subject: Buffer,
  reply: string,
  dataLen: number,
): number {
  const replyLen = reply.length === 0 ? 0 : Buffer.byteLength(reply);
  let size = 0;
  if (sequence !== 0) size += 1 + varintSize(sequence);
  if (subject.length > 0) size += 1 + varintSize(subject.length) + subject.length;
  if (replyLen > 0) size += 1 + varintSize(replyLen) + replyLen;
  if (dataLen > 0) size += 1 + varintSize(dataLen) + dataLen;
  if (tsLow !== 0 || tsHigh !== 0) size += 1 + varint64Size(tsLow, tsHigh);
  return size;
}

/** Writes the fields in number order, empty ones left out, at `out[pos]`. */
function putMsgProto(
  out: Buffer,
  pos: number,
  sequence: number,
  tsLow: number,
  tsHigh: number,
  subject: Buffer,
  reply: string,
  src: Buffer,
  srcStart: number,
  srcEnd: number,
): void {
  if (sequence !== 0) {
    out[pos++] = TAG_SEQUENCE;
    pos = putVarint(out, pos, sequence);
  }
  if (subject.length > 0) {
    out[pos++] = TAG_SUBJECT;
    pos = putVarint(out, pos, subject.length);
    pos = putBytes(out, pos, subject, 0, subject.length);
  }
  if (reply.length > 0) {
    const replyLen = Buffer.byteLength(reply);
    out[pos++] = TAG_REPLY;
    pos = putVarint(out, pos, replyLen);
    pos += out.write(reply, pos, replyLen, 'utf8');
  }
  if (srcEnd > srcStart) {
    out[pos++] = TAG_DATA;
    pos = putVarint(out, pos, srcEnd - srcStart);
    pos = putBytes(out, pos, src, srcStart, srcEnd);
  }
  if (tsLow !== 0 || tsHigh !== 0) {
    out[pos++] = TAG_TIMESTAMP;
    putVarint64(out, pos, tsLow, tsHigh);
  }
}

/** Bytes of a varint for a non-negative safe integer. */
export function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Writes a non-negative safe integer as a varint at `pos`; returns the end. */
export function putVarint(out: Buffer, pos: number, v: number): number {
  while (v >= 0x80) {
    out[pos++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[pos++] = v;
  return pos;
}

function varint64Size(low: number, high: number): number {
  let n = 1;
  while (high !== 0) {
    low = ((low >>> 7) | (high << 25)) >>> 0;
    high >>>= 7;
    n++;
  }
  while (low >= 0x80) {
    low >>>= 7;
    n++;
  }
  return n;
}

/** A 64-bit value given as its unsigned 32-bit halves (two's complement when negative). */
function putVarint64(out: Buffer, pos: number, low: number, high: number): number {
  while (high !== 0) {
    out[pos++] = (low & 0x7f) | 0x80;
    low = ((low >>> 7) | (high << 25)) >>> 0;
    high >>>= 7;
  }
  while (low >= 0x80) {
    out[pos++] = (low & 0x7f) | 0x80;
    low >>>= 7;
  }
  out[pos++] = low;
  return pos;
}

// Field 6 (redelivered, varint) = true; field 7 (redeliveryCount, varint) tag.
const REDELIVERED_TRUE_0 = 0x30;
const REDELIVERED_TRUE_1 = 0x01;
const REDELIVERY_COUNT_TAG = 0x38;

/** The stored bytes of a message as sent on redelivery number `count` (1 for the first). */
export function markRedelivered(stored: Uint8Array, count: number): Uint8Array {
  let n = count >>> 0;
  let varintLen = 1;
  while (n > 0x7f) {
    n >>>= 7;
    varintLen++;
  }
  const extra = count > 0 ? 3 + varintLen : 2;
  const out = Buffer.allocUnsafe(stored.length + extra);
  out.set(stored, 0);
  let pos = stored.length;
  out[pos++] = REDELIVERED_TRUE_0;
  out[pos++] = REDELIVERED_TRUE_1;
  if (count > 0) {
    out[pos++] = REDELIVERY_COUNT_TAG;
    let v = count >>> 0;
    while (v > 0x7f) {
      out[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[pos] = v;
  }
  return out;
}
