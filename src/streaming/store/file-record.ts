// Record framing of the FILE store, the reference's (see FILE-FORMAT.md): the 4-byte
// file version, size + CRC32 framed records, the 32-byte index record, and the errors
// recovery raises with the file and offset they concern.
export { CRC_IEEE, Crc32, IEEE } from '../../durable/crc32.js';
import { type Crc32, SMALL_CRC_BYTES } from '../../durable/crc32.js';

/** Every file starts with its format version, a little-endian uint32 (the reference's 1). */
export const FORMAT_VERSION = 1;
export const FILE_HEADER_SIZE = 4;
/** Size field + CRC field in front of every record. */
export const RECORD_HEADER_SIZE = 8;
export const INDEX_RECORD_SIZE = 32;
/** What the FILE store counts per message on top of its bytes (the reference's 40). */
export const MSG_OVERHEAD = RECORD_HEADER_SIZE + INDEX_RECORD_SIZE;
/** Typed records keep their type in the top byte of the size field. */
export const MAX_TYPED_SIZE = 0xffffff;
/** Nothing bigger is ever written: a larger size field is damage, not a record. */
export const MAX_RECORD_SIZE = 0x7fffffff;
export type FileStoreErrorCode = 'CORRUPT' | 'TRUNCATED' | 'VERSION' | 'LOCKED' | 'IO';

/** Why a file store cannot start (or stopped writing); names the file and offset. */
export class FileStoreError extends Error {
  override readonly name = 'FileStoreError';

  constructor(
    readonly code: FileStoreErrorCode,
    message: string,
    readonly file = '',
    readonly offset = -1,
  ) {
    super(message);
  }
}

const HEADER = Buffer.from([FORMAT_VERSION, 0, 0, 0]);

export function fileHeader(): Buffer {
  return Buffer.from(HEADER);
}

/** Throws unless `b` starts with a version this store reads (the reference's check). */
export function checkFileHeader(b: Buffer, path: string): void {
  if (b.length < FILE_HEADER_SIZE) {
    throw new FileStoreError(
      'CORRUPT',
      `file store: ${path}: unable to verify file version`,
      path,
      0,
    );
  }
  const version = b.readUInt32LE(0);
  if (version === 0 || version > FORMAT_VERSION) {
    throw new FileStoreError(
      'VERSION',
      `file store: ${path}: unsupported file version: ${version} (supports [1..${FORMAT_VERSION}])`,
      path,
      0,
    );
  }
}

/** Writes a framed record at `pos` of `out` (room checked by the caller); returns the end. */
export function putRecord(
  out: Buffer,
  pos: number,
  sizeField: number,
  payload: Uint8Array,
  crc: Crc32,
): number {
  putU32(out, pos, sizeField);
  putU32(out, pos + 4, crc.bytes(payload, 0, payload.length));
  out.set(payload, pos + RECORD_HEADER_SIZE);
  return pos + RECORD_HEADER_SIZE + payload.length;
}

/**
 * A message's record, its payload being `src[start, end)` (the publish path's bytes,
 * kept where they are): size, CRC, payload. A short payload is copied in a loop, a
 * longer one through one view of it, which also serves zlib's CRC past the table
 * loop's sizes (no second view for it).
 */
export function putMsgRecord(
  out: Buffer,
  pos: number,
  src: Buffer,
  start: number,
  end: number,
  crc: Crc32,
): number {
  const n = end - start;
  const at = pos + RECORD_HEADER_SIZE;
  putU32(out, pos, n);
  if (n < COPY_LOOP_MAX) {
    for (let i = 0; i < n; i++) out[at + i] = src[start + i]!;
    putU32(out, pos + 4, crc.bytes(out, at, at + n));
  } else {
    const payload = new Uint8Array(src.buffer, src.byteOffset + start, n);
    out.set(payload, at);
    // The table loop reads the copy (a Buffer, as every other caller's: one shape).
    putU32(
      out,
      pos + 4,
      n > SMALL_CRC_BYTES ? crc.bytes(payload, 0, n) : crc.bytes(out, at, at + n),
    );
  }
  return at + n;
}
// Below this a loop copies faster than a view and a native copy (best of runs: 16 B
// 39-47 ns against 68-86; 32 B 52-58 against 51-58; 48 B 69 against 51).
const COPY_LOOP_MAX = 32;

export function typedSize(type: number, size: number): number {
  return ((type << 24) | size) >>> 0;
}

const TWO_32 = 0x1_0000_0000;

/** Writes a uint32 little-endian (no range checks: Buffer's writers cost more than the write). */
export function putU32(out: Buffer, pos: number, value: number): void {
  out[pos] = value;
  out[pos + 1] = value >>> 8;
  out[pos + 2] = value >>> 16;
  out[pos + 3] = value >>> 24;
}

/** Writes a safe non-negative integer as a little-endian uint64. */
export function putU64(out: Buffer, pos: number, value: number): void {
  // Sequences and offsets are nearly always below 2^32: no floating-point division.
  const high = value > 0xffffffff ? Math.floor(value / TWO_32) : 0;
  putU32(out, pos, value - high * TWO_32);
  putU32(out, pos + 4, high);
}

/** Reads a little-endian uint64 as a number; values past 2^53 come back as Infinity. */
export function getU64(b: Buffer, pos: number): number {
  const high = b.readUInt32LE(pos + 4);
  if (high > 0x1fffff) return Infinity;
  return high * TWO_32 + b.readUInt32LE(pos);
}

/**
 * Writes the index record of one message at `pos` of `out`: sequence, offset of its
 * record in the .dat, timestamp (two 32-bit halves of the int64), record payload size
 * and the CRC32 of those 28 bytes.
 */
export function putIndexRecord(
  out: Buffer,
  pos: number,
  seq: number,
  offset: number,
  tsLow: number,
  tsHigh: number,
  size: number,
  crc: Crc32,
): void {
  putU64(out, pos, seq);
  putU64(out, pos + 8, offset);
  putU32(out, pos + 16, tsLow);
  putU32(out, pos + 20, tsHigh);
  putU32(out, pos + 24, size);
  putU32(out, pos + 28, crc.bytes(out, pos, pos + 28));
}

/** True if the 32 bytes at `pos` hold an index record with a matching CRC. */
export function indexRecordValid(b: Buffer, pos: number, crc: Crc32): boolean {
  return crc.bytes(b, pos, pos + 28) === b.readUInt32LE(pos + 28);
}

/** An all-zero record header: the end of a file padded with zeros (the reference rewinds there). */
export function isZeroHeader(b: Buffer, pos: number): boolean {
  return b.readUInt32LE(pos) === 0 && b.readUInt32LE(pos + 4) === 0;
}

/** Offsets of an index record's fields. */
export const IDX_SEQ = 0;
export const IDX_OFFSET = 8;
export const IDX_TS_LOW = 16;
export const IDX_TS_HIGH = 20;
export const IDX_SIZE = 24;

/**
 * Copies src[from..from+n) to dst[at..]: for the few bytes of an index record or a
 * subscription update, a loop beats Buffer#copy and its argument checks.
 */
export function copySmall(src: Buffer, from: number, dst: Buffer, at: number, n: number): void {
  for (let i = 0; i < n; i++) dst[at + i] = src[from + i]!;
}

/** Appends a varint (a safe non-negative integer) at `pos`; returns the end. */
export function putVarint(out: Buffer, pos: number, value: number): number {
  let v = value;
  // Past 2^31 the low 7 bits are taken by arithmetic; below it, by bit operations.
  while (v > 0x7fffffff) {
    out[pos++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  while (v >= 0x80) {
    out[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[pos++] = v;
  return pos;
}

/**
 * Reads the sequence (field 1) and timestamp (field 5) of a marshaled MsgProto, to
 * rebuild an index from a .dat. Returns false if the bytes are not a MsgProto.
 */
export function scanMsgProto(
  b: Uint8Array,
  out: { seq: number; tsLow: number; tsHigh: number },
): boolean {
  let pos = 0;
  let seq = -1;
  out.tsLow = 0;
  out.tsHigh = 0;
  while (pos < b.length) {
    const tag = b[pos++]!;
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field === 0 || tag >= 0x80) return false;
    if (wire === 0) {
      // Varint: kept as two 32-bit halves (a timestamp is a full int64).
      let low = 0;
      let high = 0;
      let shift = 0;
      let byte: number;
      do {
        if (pos >= b.length || shift > 63) return false;
        byte = b[pos++]!;
        const bits = byte & 0x7f;
        if (shift < 28) low |= bits << shift;
        else if (shift === 28) {
          low |= (bits & 0x0f) << 28;
          high |= bits >>> 4;
        } else high |= bits << (shift - 32);
        shift += 7;
      } while (byte >= 0x80);
      if (field === 1) seq = (high >>> 0) * TWO_32 + (low >>> 0);
      else if (field === 5) {
        out.tsLow = low | 0;
        out.tsHigh = high | 0;
      }
    } else if (wire === 2) {
      let len = 0;
      let shift = 0;
      let byte: number;
      do {
        if (pos >= b.length || shift > 28) return false;
        byte = b[pos++]!;
        len += (byte & 0x7f) * (1 << shift); // a small integer while it fits (wire.ts)
        shift += 7;
      } while (byte >= 0x80);
      pos += len;
      if (pos > b.length) return false;
    } else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else return false;
  }
  if (pos !== b.length || seq < 0) return false;
  out.seq = seq;
  return true;
}
