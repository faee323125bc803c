// The records of the JetStream file store (see FILE-FORMAT.md in this folder).
//
// A message record has the size nats-server 2.9 counts for a file-stored message
// (fileStoreMsgSize: 22 + subject + [4 + header] + data + 8), so STREAM.INFO `bytes`
// matches the reference, and the bytes counted are the bytes on disk:
//
//   u32 length | HDR_BIT        the whole record, this field and the trailer included
//   u32 seq low, u32 seq high   kind in the top byte of the high word
//   u32 ts low, i32 ts high     nanoseconds since the epoch
//   u16 subject length, subject
//   [u32 header length, header] when HDR_BIT is set
//   data
//   u32 CRC32 of everything before it, u32 length again (a reader can walk backwards)
import { crc32 } from 'node:zlib';
import { IEEE } from '../../durable/crc32.js';

export const BLOCK_MAGIC = 0x534a4257; // "WBJS"
export const DELETES_MAGIC = 0x444a4257; // "WBJD"
export const CONSUMER_MAGIC = 0x434a4257; // "WBJC"
export const FORMAT_VERSION = 1;
export const FILE_HEADER_SIZE = 8;

export const HDR_BIT = 0x80000000;
export const RECORD_HEAD = 22;
export const RECORD_TRAILER = 8;
/** The smallest possible record (no subject, no data). */
export const MIN_RECORD = RECORD_HEAD + RECORD_TRAILER;
/** A length past this is damage (nothing larger is ever written). */
export const MAX_RECORD = 0x40000000;

export const KIND_MSG = 0;
/** A message overwritten by EraseMsg: same length, zeroed content, still a valid record. */
export const KIND_ERASED = 1;
/** The stream's first and last sequences (seq field = last, data = u64 first). */
export const KIND_STATE = 2;
export const STATE_RECORD_SIZE = MIN_RECORD + 8;

/** One tombstone of a block's delete file: u32 seq low, u32 seq high, u32 CRC32. */
export const TOMBSTONE_SIZE = 12;

const TWO_32 = 0x1_0000_0000;

/** Bytes nats-server counts (and this store writes) for a message. */
export function msgRecordSize(subjectBytes: number, hdrLen: number, dataLen: number): number {
  return RECORD_HEAD + subjectBytes + (hdrLen > 0 ? 4 + hdrLen : 0) + dataLen + RECORD_TRAILER;
}

export function fileHeader(magic: number): Buffer {
  const b = Buffer.allocUnsafe(FILE_HEADER_SIZE);
  b.writeUInt32LE(magic, 0);
  b.writeUInt32LE(FORMAT_VERSION, 4);
  return b;
}

/** Why a file is not one of ours, or undefined if its header is right. */
export function headerProblem(b: Buffer, magic: number): string | undefined {
  if (b.length < FILE_HEADER_SIZE) return 'file shorter than its header';
  if (b.readUInt32LE(0) !== magic) return 'not a wirebus JetStream file';
  const v = b.readUInt32LE(4);
  if (v !== FORMAT_VERSION) return `format version ${v}, this server reads ${FORMAT_VERSION}`;
  return undefined;
}

/**
 * A little-endian u32 by plain byte stores: the write side runs per message, and
 * Buffer#writeUInt32LE's checks cost as much again (and as much again to compile).
 */
function u32(b: Buffer, pos: number, v: number): void {
  b[pos] = v;
  b[pos + 1] = v >>> 8;
  b[pos + 2] = v >>> 16;
  b[pos + 3] = v >>> 24;
}

export function putU64(b: Buffer, pos: number, v: number): void {
  const high = Math.floor(v / TWO_32);
  u32(b, pos, v - high * TWO_32);
  u32(b, pos + 4, high);
}

export function getU64(b: Buffer, pos: number): number {
  return (b.readUInt32LE(pos + 4) & 0x1fffff) * TWO_32 + b.readUInt32LE(pos);
}

/** Writes a timestamp (ns, a double) as an int64. */
function putTs(b: Buffer, pos: number, ts: number): void {
  const high = Math.floor(ts / TWO_32);
  u32(b, pos, ts - high * TWO_32);
  u32(b, pos + 4, high | 0);
}

function getTs(b: Buffer, pos: number): number {
  return b.readInt32LE(pos + 4) * TWO_32 + b.readUInt32LE(pos);
}

function putSeqKind(b: Buffer, pos: number, seq: number, kind: number): void {
  const high = Math.floor(seq / TWO_32);
  u32(b, pos, seq - high * TWO_32);
  u32(b, pos + 4, high | (kind << 24));
}

/**
 * The CRC of everything before the trailer, then the length field again. The streaming
 * store's CRC32 (IEEE, as zlib's): a table loop for short records, zlib past 256 bytes,
 * and no view of the record made for it.
 */
function seal(b: Buffer, at: number, rl: number, field: number): void {
  const end = at + rl - RECORD_TRAILER;
  u32(b, end, IEEE.bytes(b, at, end));
  u32(b, end + 4, field);
}

/**
 * Encodes a message at `b[at]` (the caller made room for
 * msgRecordSize(3 * subject.length, ...)); returns the record's length.
 *
 * The head is written first and its CRC taken, then the payload is copied and the CRC
 * continued over `data` itself (the publisher's bytes, the same as the copy): a payload
 * past 256 bytes goes to zlib whole, with no view of the record made for it.
 */
export function putMsgRecord(
  b: Buffer,
  at: number,
  seq: number,
  ts: number,
  subject: string,
  hdr: Buffer,
  data: Buffer,
): number {
  const sl = putSubject(b, at + RECORD_HEAD, subject);
  let pos = at + RECORD_HEAD + sl;
  if (hdr.length > 0) {
    u32(b, pos, hdr.length);
    // TypedArray set, not Buffer#copy: a builtin memmove, no JS of its own to compile.
    b.set(hdr, pos + 4);
    pos += 4 + hdr.length;
  }
  const rl = pos + data.length + RECORD_TRAILER - at;
  const field = hdr.length > 0 ? rl | HDR_BIT : rl;
  u32(b, at, field);
  putSeqKind(b, at + 4, seq, KIND_MSG);
  putTs(b, at + 12, ts);
  b[at + 20] = sl;
  b[at + 21] = sl >>> 8;
  const crc = IEEE.bytes(b, at, pos);
  b.set(data, pos);
  pos += data.length;
  u32(b, pos, IEEE.bytes(data, 0, data.length, crc));
  u32(b, pos + 4, field);
  return rl;
}

/** Subjects up to this long are written a character at a time when they are ASCII. */
const SHORT_SUBJECT = 64;

/**
 * Writes `subject` at `b[at]` as UTF-8; returns its length in bytes. Most subjects are
 * short and ASCII: their characters are their bytes, stored one by one, with no call
 * into Node (Buffer#write's checks and its encoder cost more than the copy per message).
 */
function putSubject(b: Buffer, at: number, subject: string): number {
  const n = subject.length;
  if (n <= SHORT_SUBJECT) {
    let i = 0;
    for (; i < n; i++) {
      const c = subject.charCodeAt(i);
      if (c >= 0x80) break;
      b[at + i] = c;
    }
    if (i === n) return n;
  }
  return b.write(subject, at, 'utf8');
}

/** The record of the stream's first and last sequences. */
export function putStateRecord(
  b: Buffer,
  at: number,
  first: number,
  last: number,
  ts: number,
): void {
  u32(b, at, STATE_RECORD_SIZE);
  putSeqKind(b, at + 4, last, KIND_STATE);
  putTs(b, at + 12, ts);
  b[at + 20] = 0;
  b[at + 21] = 0;
  putU64(b, at + RECORD_HEAD, first);
  seal(b, at, STATE_RECORD_SIZE, STATE_RECORD_SIZE);
}

/** Rewrites the record at `b[at]` as erased: same length, sequence and time, content zeroed. */
export function eraseRecord(b: Buffer, at: number): void {
  const rl = b.readUInt32LE(at) & ~HDR_BIT;
  b.writeUInt32LE(rl, at);
  const high = b.readUInt32LE(at + 8) & 0xffffff;
  b.writeUInt32LE((high | (KIND_ERASED << 24)) >>> 0, at + 8);
  b.fill(0, at + 20, at + rl - RECORD_TRAILER);
  b.writeUInt16LE(0, at + 20);
  seal(b, at, rl, rl);
}

/** A decoded record head; `problem` set when the bytes are not a sound record. */
export interface RecordView {
  rl: number;
  kind: number;
  seq: number;
  ts: number;
  subjectStart: number;
  subjectEnd: number;
  hdrStart: number;
  hdrEnd: number;
  dataEnd: number;
}

/** The length field at `at`, or 0 if it cannot be a record's. */
export function recordLength(b: Buffer, at: number): number {
  const rl = b.readUInt32LE(at) & ~HDR_BIT;
  return rl < MIN_RECORD || rl > MAX_RECORD ? 0 : rl;
}

/**
 * Checks and decodes the record at `b[at]` (all `rl` bytes present) into `out`;
 * returns a problem text, or undefined when it is sound.
 */
export function readRecord(b: Buffer, at: number, rl: number, out: RecordView): string | undefined {
  const end = at + rl - RECORD_TRAILER;
  const field = b.readUInt32LE(at);
  if (b.readUInt32LE(end + 4) !== field) return 'record length mismatch';
  if (crc32(b.subarray(at, end)) !== b.readUInt32LE(end)) return 'checksum mismatch';
  const high = b.readUInt32LE(at + 8);
  out.rl = rl;
  out.kind = high >>> 24;
  out.seq = (high & 0x1fffff) * TWO_32 + b.readUInt32LE(at + 4);
  out.ts = getTs(b, at + 12);
  const sl = b.readUInt16LE(at + 20);
  out.subjectStart = at + RECORD_HEAD;
  out.subjectEnd = out.subjectStart + sl;
  if (out.subjectEnd > end) return 'subject past the record';
  if ((field & HDR_BIT) !== 0) {
    if (out.subjectEnd + 4 > end) return 'header past the record';
    const hl = b.readUInt32LE(out.subjectEnd);
    out.hdrStart = out.subjectEnd + 4;
    out.hdrEnd = out.hdrStart + hl;
    if (out.hdrEnd > end) return 'header past the record';
  } else {
    out.hdrStart = out.subjectEnd;
    out.hdrEnd = out.subjectEnd;
  }
  out.dataEnd = end;
  if (out.kind > KIND_STATE) return `unknown record kind ${out.kind}`;
  if (out.kind === KIND_STATE && end - out.subjectEnd !== 8) return 'bad state record';
  return undefined;
}

export function newRecordView(): RecordView {
  return {
    rl: 0,
    kind: 0,
    seq: 0,
    ts: -0, // a double from the start (see blankStoredMsg)
    subjectStart: 0,
    subjectEnd: 0,
    hdrStart: 0,
    hdrEnd: 0,
    dataEnd: 0,
  };
}

/**
 * Offsets of header and data inside a message record known to be sound (a load:
 * the record was checked when it was written or recovered, so no CRC here).
 */
export function msgParts(
  b: Buffer,
  at: number,
): { hdrStart: number; hdrEnd: number; dataEnd: number } {
  const field = b.readUInt32LE(at);
  const rl = field & ~HDR_BIT;
  const subjectEnd = at + RECORD_HEAD + b.readUInt16LE(at + 20);
  PARTS.dataEnd = at + rl - RECORD_TRAILER;
  if ((field & HDR_BIT) !== 0) {
    PARTS.hdrStart = subjectEnd + 4;
    PARTS.hdrEnd = PARTS.hdrStart + b.readUInt32LE(subjectEnd);
  } else {
    PARTS.hdrStart = subjectEnd;
    PARTS.hdrEnd = subjectEnd;
  }
  return PARTS;
}
const PARTS = { hdrStart: 0, hdrEnd: 0, dataEnd: 0 };

export function putTombstone(b: Buffer, at: number, seq: number): void {
  putU64(b, at, seq);
  u32(b, at + 8, IEEE.bytes(b, at, at + 8));
}

/** The sequence of the tombstone at `b[at]`, or -1 if it is damaged. */
export function readTombstone(b: Buffer, at: number): number {
  if (crc32(b.subarray(at, at + 8)) !== b.readUInt32LE(at + 8)) return -1;
  return getU64(b, at);
}
