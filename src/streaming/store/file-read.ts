// Reading messages back from a slice: one positioned read of up to read_buffer_size
// bytes from the requested message on, parsed into messages with the sequence and
// timestamp from the index, so a subscription catching up reads the log in large
// sequential blocks instead of one small read per message.
import Long from 'long';
import { isLent, lend } from '../../server/shared-read.js';
import type { IoScheduler } from './file-io.js';
import { type Crc32, RECORD_HEADER_SIZE } from './file-record.js';
import type { Slice } from './file-slice.js';
import type { StoredMsg } from './types.js';

export interface ReadBlock {
  readonly slice: Slice;
  readonly from: number;
  /** The last sequence asked for. */
  readonly to: number;
  /** Messages from..from+count-1 were read and checked (fewer than asked if a record was bad). */
  readonly count: number;
  /** The bytes read: the records of those messages, back to back. */
  readonly buf: Buffer;
  /**
   * Where message from+i's marshaled bytes start in `buf` (count + 1 entries: record i
   * ends 8 bytes before the start of i + 1), and its timestamp's halves at ts[2i],
   * ts[2i+1]: what the slice's index says, which may be evicted while the block is held.
   */
  readonly starts: Int32Array;
  readonly ts: Int32Array;
}

/**
 * A ReadBlock. A class, not an object literal: the literal shared its first hidden-class
 * transitions (slice, from, to) with the store's reads in progress, so the two
 * generalized each other's field types under the code compiled around them.
 */
class Block implements ReadBlock {
  constructor(
    readonly slice: Slice,
    readonly from: number,
    readonly to: number,
    readonly count: number,
    readonly buf: Buffer,
    readonly starts: Int32Array,
    readonly ts: Int32Array,
  ) {}
}

/**
 * The buffers of blocks the store let go (releaseBlock()), for the next blocks read: a
 * FILE catch-up of 50,000 x 1 KiB read 18 blocks of 2 MB, each a new ArrayBuffer
 * whose external memory started mark-compacts of a 10 MB heap. They are lent
 * (src/server/shared-read.ts): delivery copies whatever it keeps past the call that
 * hands it the bytes (a payload passed by reference, an in-process subscriber's), as
 * for a client's read, and lookup() copies (msgAt), so a block's buffer can be filled
 * again once the store holds the block no more. At most SPARE_MAX are kept.
 */
const spare: ArrayBuffer[] = [];
const SPARE_MAX = 2;

/** A buffer for `n` bytes of a block: a lent one of `size` bytes while n fits in it. */
function blockBuffer(n: number, size: number): Buffer {
  if (n > size) return Buffer.allocUnsafe(n);
  for (let i = spare.length - 1; i >= 0; i--) {
    const ab = spare[i]!;
    if (ab.byteLength === size) {
      spare.splice(i, 1);
      return Buffer.from(ab, 0, n);
    }
  }
  const whole = Buffer.allocUnsafeSlow(size);
  lend(whole.buffer);
  return whole.subarray(0, n);
}

/**
 * The store holds block `b` no more (nothing it handed out refers to it: see
 * `spare`): its buffer serves the next block read with the same buffer size.
 */
export function releaseBlock(b: ReadBlock, size: number): void {
  const ab = b.buf.buffer;
  if (
    ab.byteLength === size &&
    isLent(b.buf) &&
    spare.length < SPARE_MAX &&
    ab instanceof ArrayBuffer &&
    !spare.includes(ab)
  ) {
    spare.push(ab);
  }
}

/** True when every message asked for was read (no bad record cut the block short). */
export function isWhole(b: ReadBlock): boolean {
  return b.count === b.to - b.from + 1;
}

/**
 * Message `seq` of a block (from <= seq < from + count). Made when looked up, not when
 * read: a block's thousands of messages as objects lived as long as the block, long
 * enough for every young-generation collection to copy them. Its bytes are a copy: the
 * caller may keep them (a redelivery waits for several), and the block's buffer is
 * filled again once the store lets the block go (releaseBlock()).
 */
export function msgAt(b: ReadBlock, seq: number): StoredMsg {
  const i = seq - b.from;
  const start = b.starts[i]!;
  const end = b.starts[i + 1]! - RECORD_HEADER_SIZE;
  const bytes = Buffer.allocUnsafe(end - start);
  b.buf.copy(bytes, 0, start, end);
  return new ReadMsg(seq, bytes, b.ts[2 * i]!, b.ts[2 * i + 1]!);
}

/**
 * A message read back from a slice or the cache. Its timestamp becomes a Long only
 * when asked for: delivery needs the bytes alone.
 */
export class ReadMsg implements StoredMsg {
  constructor(
    readonly sequence: number,
    readonly encoded: Buffer,
    private readonly tsLow: number,
    private readonly tsHigh: number,
  ) {}

  get timestamp(): Long {
    return Long.fromBits(this.tsLow, this.tsHigh);
  }
}

/** The last message of the block that starts at `seq`: as many as fit in `maxBytes`, at least one. */
export function blockEnd(slice: Slice, seq: number, maxBytes: number): number {
  let to = seq;
  let bytes = RECORD_HEADER_SIZE + slice.sizeOf(seq);
  while (to < slice.lastSeq) {
    bytes += RECORD_HEADER_SIZE + slice.sizeOf(to + 1);
    if (bytes > maxBytes) break;
    to++;
  }
  return to;
}

/**
 * Reads messages `seq`..`to` of `slice` (its index resident, see blockEnd) into a
 * buffer of `bufferSize` (the read buffer size) while they fit. Records are checked
 * against the index and, with `crc`, their CRC; reading stops before the first bad
 * one, which `warn` reports.
 */
export async function readBlock(
  io: IoScheduler,
  slice: Slice,
  seq: number,
  to: number,
  crc: Crc32 | undefined,
  warn: (text: string) => void,
  bufferSize: number,
): Promise<ReadBlock> {
  const start = slice.offsetOf(seq);
  const end = slice.offsetOf(to) + RECORD_HEADER_SIZE + slice.sizeOf(to);
  // Appended but not on disk yet (evicted from the cache before its round ran).
  if (end > slice.dat.written) await io.flush();
  const buf = blockBuffer(end - start, bufferSize);
  const starts = new Int32Array(to - seq + 2);
  const ts = new Int32Array(2 * (to - seq + 1));
  const empty = new Block(slice, seq, to, 0, buf, starts, ts);
  if (slice.dat.dead) return empty;
  try {
    await io.pool.use(slice.dat, async (h) => {
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await h.read(buf, got, buf.length - got, start + got);
        if (bytesRead === 0) throw new Error(`unexpected end of file at offset ${start + got}`);
        got += bytesRead;
      }
    });
  } catch (err) {
    // A slice removed by limits meanwhile has nothing to give; anything else is logged.
    if (!isDead(slice)) warn(`file store: cannot read ${slice.dat.path}: ${String(err)}`);
    return empty;
  }
  const count = checkRecords(slice, seq, to, buf, starts, ts, crc, start, warn);
  return new Block(slice, seq, to, count, buf, starts, ts);
}

/**
 * Checks the records of messages `seq`..`to` read into `buf` (the slice's bytes from
 * offset `start`) against the index and, with `crc`, their CRC; fills `starts` and
 * `ts`; returns how many are good (up to the first bad one, which `warn` reports).
 * Apart from readBlock(): V8 compiles this loop while the first block is checked,
 * and code compiled inside an async function's first call went back to the
 * interpreter at the first statement after the loop, block after block (the
 * compiled loop is kept and entered again), each time recompiling readBlock.
 */
function checkRecords(
  slice: Slice,
  seq: number,
  to: number,
  buf: Buffer,
  starts: Int32Array,
  ts: Int32Array,
  crc: Crc32 | undefined,
  start: number,
  warn: (text: string) => void,
): number {
  let pos = 0;
  let count = 0;
  // Where the record after the last good one would start: kept up to date inside the
  // loop, so nothing after it needs type feedback the first block has not given yet
  // (the loop's code is compiled while it runs, and left at the first new operation).
  starts[0] = RECORD_HEADER_SIZE;
  for (let s = seq; s <= to; s++) {
    const size = slice.sizeOf(s);
    const at = pos + RECORD_HEADER_SIZE;
    if (
      buf.readUInt32LE(pos) !== size ||
      (crc !== undefined && crc.bytes(buf, at, at + size) !== buf.readUInt32LE(pos + 4))
    ) {
      warn(
        `file store: corrupt record for message ${s} in ${slice.dat.path} at offset ${start + pos}`,
      );
      break;
    }
    ts[2 * count] = slice.tsLowOf(s);
    ts[2 * count + 1] = slice.tsHighOf(s);
    starts[count++] = at;
    pos = at + size;
    starts[count] = pos + RECORD_HEADER_SIZE;
  }
  return count;
}

// Read again after an await: limits may have removed the slice meanwhile.
function isDead(slice: Slice): boolean {
  return slice.dat.dead;
}
