// Record framing of the FILE store (see FILE-FORMAT.md): the 8-byte file header,
// length + CRC32 framed records, the 32-byte index record, and the errors recovery
// raises with the file and offset they concern.
import { crc32 } from 'node:zlib';

/** "WBFS" + format version, little-endian: the first 8 bytes of every data file. */
export const FILE_MAGIC = 0x53464257;
export const FORMAT_VERSION = 1;
export const FILE_HEADER_SIZE = 8;
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

export function fileHeader(): Buffer {
  const b = Buffer.allocUnsafe(FILE_HEADER_SIZE);
  b.writeUInt32LE(FILE_MAGIC, 0);
  b.writeUInt32LE(FORMAT_VERSION, 4);
  return b;
}

/** Throws unless `b` starts with a header of this format version. */
export function checkFileHeader(b: Buffer, path: string): void {
  if (b.length < FILE_HEADER_SIZE || b.readUInt32LE(0) !== FILE_MAGIC) {
    throw new FileStoreError('CORRUPT', `file store: ${path} is not a wirebus store file`, path, 0);
  }
  const version = b.readUInt32LE(4);
  if (version !== FORMAT_VERSION) {
    throw new FileStoreError(
      'VERSION',
      `file store: ${path} has format version ${version}, this server reads version ${FORMAT_VERSION}`,
      path,
      4,
    );
  }
}

// CRC32 (IEEE), table-driven, for the few bytes of size fields, index records and
// subscription updates: a call into zlib costs ~100 ns before it reads a byte, this
// loop ~4 ns a byte. Longer payloads go to zlib.crc32 (same polynomial).
const CRC_TABLE = new Int32Array(256);
for (let i = 0; i < 256; i++) {
  let c = i;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  CRC_TABLE[i] = c;
}
const SMALL = 64;

/** Continues CRC32 `crc` over b[from..to). */
export function crcBytes(b: Uint8Array, from: number, to: number, crc = 0): number {
  if (to - from >= SMALL) {
    return crc32(from === 0 && to === b.length ? b : b.subarray(from, to), crc);
  }
  let c = ~crc;
  for (let i = from; i < to; i++) c = CRC_TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** CRC32 of the 4 little-endian bytes of `v`. */
function crcU32(v: number): number {
  let c = -1;
  c = CRC_TABLE[(c ^ v) & 0xff]! ^ (c >>> 8);
  c = CRC_TABLE[(c ^ (v >>> 8)) & 0xff]! ^ (c >>> 8);
  c = CRC_TABLE[(c ^ (v >>> 16)) & 0xff]! ^ (c >>> 8);
  c = CRC_TABLE[(c ^ (v >>> 24)) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** CRC32 (IEEE) of a record: its size field's 4 bytes, then its payload. */
export function recordCrc(sizeField: number, payload: Uint8Array): number {
  return crcBytes(payload, 0, payload.length, crcU32(sizeField >>> 0));
}

/** Writes a framed record at `pos` of `out` (room checked by the caller); returns the end. */
export function putRecord(
  out: Buffer,
  pos: number,
  sizeField: number,
  payload: Uint8Array,
): number {
  out.writeUInt32LE(sizeField >>> 0, pos);
  out.writeUInt32LE(recordCrc(sizeField, payload), pos + 4);
  out.set(payload, pos + RECORD_HEADER_SIZE);
  return pos + RECORD_HEADER_SIZE + payload.length;
}

export function typedSize(type: number, size: number): number {
  return ((type << 24) | size) >>> 0;
}

const TWO_32 = 0x1_0000_0000;

/** Writes a safe non-negative integer as a little-endian uint64. */
export function putU64(out: Buffer, pos: number, value: number): void {
  out.writeUInt32LE((value % TWO_32) >>> 0, pos);
  out.writeUInt32LE(Math.floor(value / TWO_32), pos + 4);
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
): void {
  putU64(out, pos, seq);
  putU64(out, pos + 8, offset);
  out.writeInt32LE(tsLow | 0, pos + 16);
  out.writeInt32LE(tsHigh | 0, pos + 20);
  out.writeUInt32LE(size, pos + 24);
  out.writeUInt32LE(crcBytes(out, pos, pos + 28), pos + 28);
}

/** True if the 32 bytes at `pos` hold an index record with a matching CRC. */
export function indexRecordValid(b: Buffer, pos: number): boolean {
  return crcBytes(b, pos, pos + 28) === b.readUInt32LE(pos + 28);
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
  while (v >= 0x80) {
    out[pos++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
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
        len += (byte & 0x7f) * 2 ** shift;
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
