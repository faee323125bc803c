// Recovery of a channel's message log. Every slice's .dat is read from start to end
// through a bounded window, every record's CRC checked, and the .idx read alongside:
// an index record that is missing, damaged or does not match its .dat record makes
// the rest of the index come from the .dat (sequence and timestamp parsed from the
// MsgProto), and the .idx is rewritten. The first unreadable .dat record either cuts
// the file there (truncate_bad_eof) or stops the start with the file and offset.
import { open, readdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import Long from 'long';
import type { IoScheduler } from './file-io.js';
import { replaceFile } from './file-meta.js';
import type { RecoveredMsgs } from './file-msgs.js';
import type { FileStoreTuning } from './file-options.js';
import {
  Crc32,
  FILE_HEADER_SIZE,
  FileStoreError,
  INDEX_RECORD_SIZE,
  MSG_OVERHEAD,
  checkFileHeader,
  fileHeader,
  getU64,
  indexRecordValid,
  putIndexRecord,
  scanMsgProto,
} from './file-record.js';
import { cutOrRefuse, cutZeros, FileReader, type BadRecord } from './file-scan.js';
import { datName, idxName, Slice } from './file-slice.js';

const SLICE_FILE = /^msgs\.([1-9][0-9]*)\.(dat|idx)$/;

export interface RecoverContext {
  readonly io: IoScheduler;
  readonly tuning: FileStoreTuning;
  readonly warn: (text: string) => void;
}

export async function recoverMsgs(dir: string, ctx: RecoverContext): Promise<RecoveredMsgs> {
  const nums = new Set<number>();
  const dats = new Set<number>();
  for (const name of await readdir(dir)) {
    const m = SLICE_FILE.exec(name);
    if (m === null) continue;
    const n = Number(m[1]);
    nums.add(n);
    if (m[2] === 'dat') dats.add(n);
  }
  const sorted = [...nums].sort((a, b) => a - b);
  const nextNum = (sorted[sorted.length - 1] ?? 0) + 1;
  const slices: Slice[] = [];
  for (const num of sorted) {
    if (!dats.has(num)) {
      // An index whose messages are gone (a deletion interrupted by a crash).
      await unlinkQuietly(join(dir, idxName(num)));
      continue;
    }
    const prevLast = slices[slices.length - 1]?.lastSeq ?? 0;
    const slice = await recoverSlice(dir, num, prevLast, ctx);
    if (slice !== undefined) slices.push(slice);
  }
  // As the reference: every slice's messages count again, and the channel's limits,
  // applied by the store, drop the oldest down to them.
  const first = slices[0]?.firstSeq ?? 0;
  // Only the head and the tail keep their index in memory.
  for (let i = 1; i < slices.length - 1; i++) slices[i]!.index = undefined;
  return { slices, first, nextNum };
}

async function recoverSlice(
  dir: string,
  num: number,
  prevLast: number,
  ctx: RecoverContext,
): Promise<Slice | undefined> {
  const datPath = join(dir, datName(num));
  const idxPath = join(dir, idxName(num));
  const datSize = (await stat(datPath)).size;
  if (datSize === 0) {
    // Created, then the process died before its first write: nothing was in it.
    await unlinkQuietly(datPath);
    await unlinkQuietly(idxPath);
    return undefined;
  }
  const dat = await open(datPath, 'r+');
  const idx = await open(idxPath, 'r').catch(() => undefined);
  try {
    const scan = new SliceScan(dat, datSize, idx, idxPath, prevLast, ctx);
    await scan.run(datPath);
    let size = datSize;
    if (scan.zeroAt !== undefined) {
      size = await cutZeros(dat, datPath, datSize, scan.zeroAt, ctx.warn);
    } else if (scan.bad !== undefined) {
      size = await cutOrRefuse(
        dat,
        datPath,
        datSize,
        scan.bad,
        ctx.tuning.truncateBadEof,
        ctx.warn,
      );
    }
    if (scan.count === 0) {
      await dat.close();
      await idx?.close();
      await unlinkQuietly(datPath);
      await unlinkQuietly(idxPath);
      return undefined;
    }
    const indexBytes = scan.index.subarray(0, scan.count * INDEX_RECORD_SIZE);
    if (scan.rebuildFrom !== undefined || scan.idxRecords !== scan.count) {
      if (scan.rebuildFrom !== undefined) {
        ctx.warn(
          `file store: index ${idxPath} ${scan.rebuildFrom === 0 ? 'missing or unreadable' : `damaged from record ${scan.rebuildFrom}`}, rebuilt from ${datName(num)}`,
        );
      }
      await replaceFile(idxPath, [fileHeader(), indexBytes]);
    }
    const slice = new Slice(num, dir, ctx.io, size, FILE_HEADER_SIZE + indexBytes.length, scan.crc);
    slice.index = indexBytes;
    slice.firstSeq = scan.firstSeq;
    slice.count = scan.count;
    slice.liveBytes = scan.bytes;
    slice.totalBytes = scan.bytes;
    slice.firstTsHigh = scan.firstTsHigh;
    slice.firstTsLow = scan.firstTsLow;
    slice.lastTsHigh = scan.lastTsHigh;
    slice.lastTsLow = scan.lastTsLow;
    // slice_max_age counts from the first message's time.
    slice.createdAt = Long.fromBits(scan.firstTsLow, scan.firstTsHigh).div(1_000_000).toNumber();
    return slice;
  } finally {
    await dat.close().catch(() => undefined);
    await idx?.close().catch(() => undefined);
  }
}

/** One pass over a slice's .dat with its .idx alongside. */
class SliceScan {
  index = Buffer.allocUnsafe(1024 * INDEX_RECORD_SIZE);
  count = 0;
  bytes = 0;
  firstSeq = 0;
  firstTsHigh = 0;
  firstTsLow = 0;
  lastTsHigh = 0;
  lastTsLow = 0;
  /** Index records in the .idx file that looked usable. */
  idxRecords = 0;
  /** Record number from which the index comes from the .dat, if it does. */
  rebuildFrom: number | undefined;
  bad: BadRecord | undefined;
  zeroAt: number | undefined;
  readonly crc: Crc32;
  private readonly parsed = { seq: 0, tsLow: 0, tsHigh: 0 };

  constructor(
    private readonly dat: FileHandle,
    private readonly datSize: number,
    private readonly idx: FileHandle | undefined,
    private readonly idxPath: string,
    private readonly prevLast: number,
    private readonly ctx: RecoverContext,
  ) {
    this.crc = Crc32.of(ctx.tuning.crcPoly);
  }

  async run(datPath: string): Promise<void> {
    if (this.datSize < FILE_HEADER_SIZE) {
      this.bad = { offset: 0, eof: true, reason: 'unexpected end of file (file header)' };
      return;
    }
    const window = this.ctx.tuning.readBufferSize;
    const reader = new FileReader(this.dat, this.datSize, 0, window, false, this.crc);
    try {
      checkFileHeader(await reader.bytes(0, FILE_HEADER_SIZE), datPath);
    } catch (err) {
      // Another format version is never cut; a damaged header is like a damaged record.
      if (err instanceof FileStoreError && err.code === 'VERSION') throw err;
      this.bad = { offset: 0, eof: false, reason: 'damaged file header' };
      return;
    }
    reader.pos = FILE_HEADER_SIZE;
    const idxReader = await this.openIndex(window);
    if (idxReader === undefined) this.rebuildFrom = 0;
    const p = this.parsed;
    for (let rec = await reader.next(); rec !== undefined; rec = await reader.next()) {
      let fromIndex = false;
      if (
        idxReader !== undefined &&
        this.rebuildFrom === undefined &&
        this.count < this.idxRecords
      ) {
        const ib = await idxReader.bytes(FILE_HEADER_SIZE + this.count * INDEX_RECORD_SIZE, 32);
        if (
          indexRecordValid(ib, 0, this.crc) &&
          getU64(ib, 8) === rec.offset &&
          ib.readUInt32LE(24) === rec.payload.length
        ) {
          p.seq = getU64(ib, 0);
          p.tsLow = ib.readInt32LE(16);
          p.tsHigh = ib.readInt32LE(20);
          fromIndex = true;
        }
      }
      if (!fromIndex) {
        this.rebuildFrom ??= this.count;
        if (!scanMsgProto(rec.payload, p)) {
          this.bad = { offset: rec.offset, eof: false, reason: 'record is not a message' };
          return;
        }
      }
      const expected = this.count === 0 ? this.prevLast + 1 : this.firstSeq + this.count;
      if (this.count === 0 ? p.seq < expected : p.seq !== expected) {
        this.bad = {
          offset: rec.offset,
          eof: false,
          reason: `message sequence ${p.seq} out of order (expected ${this.count === 0 ? `more than ${this.prevLast}` : expected})`,
        };
        return;
      }
      this.add(p.seq, rec.offset, p.tsLow, p.tsHigh, rec.payload.length);
    }
    this.bad = reader.bad;
    this.zeroAt = reader.zeroAt;
  }

  private async openIndex(window: number): Promise<FileReader | undefined> {
    if (this.idx === undefined) return undefined;
    const size = (await this.idx.stat()).size;
    const reader = new FileReader(this.idx, size, 0, window, false, this.crc);
    if (size < FILE_HEADER_SIZE) return undefined;
    try {
      checkFileHeader(await reader.bytes(0, FILE_HEADER_SIZE), this.idxPath);
    } catch {
      return undefined;
    }
    // A torn last record (the .idx is written after the .dat) is simply not counted.
    this.idxRecords = Math.floor((size - FILE_HEADER_SIZE) / INDEX_RECORD_SIZE);
    return reader;
  }

  private add(seq: number, offset: number, tsLow: number, tsHigh: number, size: number): void {
    const at = this.count * INDEX_RECORD_SIZE;
    if (at + INDEX_RECORD_SIZE > this.index.length) {
      const grown = Buffer.allocUnsafe(this.index.length * 2);
      this.index.copy(grown, 0, 0, at);
      this.index = grown;
    }
    putIndexRecord(this.index, at, seq, offset, tsLow, tsHigh, size, this.crc);
    if (this.count === 0) {
      this.firstSeq = seq;
      this.firstTsHigh = tsHigh;
      this.firstTsLow = tsLow;
    }
    this.lastTsHigh = tsHigh;
    this.lastTsLow = tsLow;
    this.count++;
    this.bytes += size + MSG_OVERHEAD;
  }
}

async function unlinkQuietly(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
