// One slice of a channel's message log: msgs.N.dat (framed MsgProto records) and
// msgs.N.idx (one 32-byte record per message), plus, while it is resident, the index
// in memory (the same 32-byte records). Within a slice sequences are consecutive, so
// message `seq` is index record `seq - firstSeq`: a lookup never scans.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppendFile, type IoScheduler } from './file-io.js';
import {
  type Crc32,
  FILE_HEADER_SIZE,
  IDX_OFFSET,
  IDX_SIZE,
  IDX_TS_HIGH,
  IDX_TS_LOW,
  INDEX_RECORD_SIZE,
  MSG_OVERHEAD,
  RECORD_HEADER_SIZE,
  copySmall,
  fileHeader,
  getU64,
  putIndexRecord,
  putMsgRecord,
} from './file-record.js';

export function datName(num: number): string {
  return `msgs.${num}.dat`;
}

export function idxName(num: number): string {
  return `msgs.${num}.idx`;
}

/** Compares two int64 timestamps given as (high, low) halves: <0, 0, >0. */
export function compareTs(aHigh: number, aLow: number, bHigh: number, bLow: number): number {
  if (aHigh !== bHigh) return aHigh < bHigh ? -1 : 1;
  const a = aLow >>> 0;
  const b = bLow >>> 0;
  return a === b ? 0 : a < b ? -1 : 1;
}

export class Slice {
  readonly dat: AppendFile;
  readonly idx: AppendFile;
  /** Sequence of record 0; 0 while the slice holds nothing. */
  firstSeq = 0;
  /** Records in the slice, dropped ones included (limits only move the channel's first). */
  count = 0;
  /** Bytes of the records not dropped yet, as the store counts them (+40 each). */
  liveBytes = 0;
  /** The same for every record, dropped ones included (the reference's slice size). */
  totalBytes = 0;
  // These five start as doubles (-0): a low half is anywhere in the int32 range and
  // Date.now() past 2^31, neither a small integer, and fields that start as small
  // integers change the Slice's map at the first such value, deoptimizing append()
  // and its callers in a fresh server's first publishes (--trace-generalization).
  /** Timestamp of the first and last record, as int64 halves (time searches). */
  firstTsHigh = -0;
  firstTsLow = -0;
  lastTsHigh = -0;
  lastTsLow = -0;
  /** When its first message was stored (slice_max_age), ms. */
  createdAt = -0;
  /** The index records in memory: count × 32 bytes are valid. */
  index: Buffer | undefined;
  loading: Promise<Buffer> | undefined;

  constructor(
    readonly num: number,
    readonly dir: string,
    io: IoScheduler,
    datSize: number,
    idxSize: number,
    private readonly crc: Crc32,
  ) {
    this.dat = new AppendFile(join(dir, datName(num)), datSize, io);
    this.idx = new AppendFile(join(dir, idxName(num)), idxSize, io);
    // Recovery checks every index record against the .dat and rebuilds what is off.
    this.idx.syncOnFlush = false;
    if (datSize === 0) {
      this.dat.append(fileHeader());
      this.index = Buffer.allocUnsafe(64 * INDEX_RECORD_SIZE);
    }
    if (idxSize === 0) this.idx.append(fileHeader());
  }

  get lastSeq(): number {
    return this.firstSeq + this.count - 1;
  }

  /** Appends the message marshaled at `src[start, end)` to both files and to the resident index. */
  append(
    seq: number,
    tsLow: number,
    tsHigh: number,
    src: Buffer,
    start: number,
    end: number,
  ): void {
    const dat = this.dat;
    const offset = dat.size;
    const size = end - start;
    const recLen = RECORD_HEADER_SIZE + size;
    const buf = dat.room(recLen);
    putMsgRecord(buf, dat.pos, src, start, end, this.crc);
    dat.commit(recLen);
    let index = this.index ?? this.loadIndexSync();
    const at = this.count * INDEX_RECORD_SIZE;
    if (at + INDEX_RECORD_SIZE > index.length) {
      const grown = Buffer.allocUnsafe(Math.max(index.length * 2, 64 * INDEX_RECORD_SIZE));
      index.copy(grown, 0, 0, at);
      this.index = index = grown;
    }
    putIndexRecord(index, at, seq, offset, tsLow, tsHigh, size, this.crc);
    const idx = this.idx;
    copySmall(index, at, idx.room(INDEX_RECORD_SIZE), idx.pos, INDEX_RECORD_SIZE);
    idx.commit(INDEX_RECORD_SIZE);
    if (this.count === 0) {
      this.firstSeq = seq;
      this.firstTsHigh = tsHigh;
      this.firstTsLow = tsLow;
      this.createdAt = Date.now();
    }
    this.lastTsHigh = tsHigh;
    this.lastTsLow = tsLow;
    this.count++;
    this.liveBytes += size + MSG_OVERHEAD;
    this.totalBytes += size + MSG_OVERHEAD;
  }

  /** Offset in the .dat of message `seq`'s record (index resident). */
  offsetOf(seq: number): number {
    return getU64(this.index!, (seq - this.firstSeq) * INDEX_RECORD_SIZE + IDX_OFFSET);
  }

  /** Payload size of message `seq` (index resident). */
  sizeOf(seq: number): number {
    return this.index!.readUInt32LE((seq - this.firstSeq) * INDEX_RECORD_SIZE + IDX_SIZE);
  }

  tsHighOf(seq: number): number {
    return this.index!.readInt32LE((seq - this.firstSeq) * INDEX_RECORD_SIZE + IDX_TS_HIGH);
  }

  tsLowOf(seq: number): number {
    return this.index!.readInt32LE((seq - this.firstSeq) * INDEX_RECORD_SIZE + IDX_TS_LOW);
  }

  /** True while the in-memory index has records the .idx file does not have yet. */
  get hasUnwrittenIndex(): boolean {
    return this.idx.written < this.idx.size;
  }

  /** Loads the index from the .idx (written and checked by this run or by recovery). */
  loadIndex(): Promise<Buffer> {
    if (this.index !== undefined) return Promise.resolve(this.index);
    this.loading ??= readFile(this.idx.path).then(
      (b) => this.adopt(b),
      (err: unknown) => {
        this.loading = undefined;
        throw err;
      },
    );
    return this.loading;
  }

  /** The same, blocking: limits are enforced inside synchronous store() calls. */
  loadIndexSync(): Buffer {
    return this.index ?? this.adopt(readFileSync(this.idx.path));
  }

  private adopt(file: Buffer): Buffer {
    this.loading = undefined;
    if (this.index !== undefined) return this.index;
    const want = FILE_HEADER_SIZE + this.count * INDEX_RECORD_SIZE;
    if (file.length < want) {
      throw new Error(`index ${this.idx.path} has ${file.length} bytes, expected ${want}`);
    }
    this.index = file.subarray(FILE_HEADER_SIZE, want);
    return this.index;
  }

  /** Drops the resident index (it can be loaded again). */
  evictIndex(): boolean {
    if (this.hasUnwrittenIndex || this.loading !== undefined) return false;
    this.index = undefined;
    return true;
  }

  /** Binary search: first sequence in [from, lastSeq] with timestamp >= (high, low). */
  seqAtOrAfter(from: number, high: number, low: number): number {
    let lo = from;
    let hi = this.lastSeq + 1;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (compareTs(this.tsHighOf(mid), this.tsLowOf(mid), high, low) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
