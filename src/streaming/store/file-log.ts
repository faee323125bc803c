// A typed record log (subs.dat, clients.dat): state changes are appended as small
// records, cheap on the delivery path, and the file is rewritten with only the live
// state once most of its records are obsolete (compact, compact_frag,
// compact_interval, compact_min_size). Replaying it at recovery rebuilds the state.
import { open } from 'node:fs/promises';
import { AppendFile, type IoScheduler } from './file-io.js';
import { replaceFile } from './file-meta.js';
import type { FileStoreTuning } from './file-options.js';
import {
  Crc32,
  FILE_HEADER_SIZE,
  MAX_TYPED_SIZE,
  RECORD_HEADER_SIZE,
  checkFileHeader,
  fileHeader,
  putRecord,
  putU32,
  putVarint,
  typedSize,
} from './file-record.js';
import { cutOrRefuse, cutZeros, FileReader } from './file-scan.js';

/** Records between two looks at whether the log should be compacted (a power of 2). */
const COMPACT_CHECK = 256;

/** Writes live state as records into `out` (compaction). */
export type Snapshot = (out: RecordSink) => void;

export interface RecordSink {
  record(type: number, payload: Uint8Array): void;
  update(type: number, id: number, seq: number): void;
}

// Room for a hand-encoded SubStateUpdate: two tags and two 64-bit varints.
const UPDATE_MAX = 2 + 2 * 10;

/** Writes SubStateUpdate{ID: id, seqno: seq} at `pos` (UPDATE_MAX bytes of room); returns the end. */
function putUpdate(out: Buffer, pos: number, id: number, seq: number): number {
  out[pos] = 0x08;
  const end = putVarint(out, pos + 1, id);
  out[end] = 0x10;
  return putVarint(out, end + 1, seq);
}

/** Room for a whole SubStateUpdate record, header included. */
const UPDATE_RECORD_MAX = RECORD_HEADER_SIZE + UPDATE_MAX;

/**
 * Writes a whole SubStateUpdate record of `type` at `pos` (UPDATE_RECORD_MAX bytes of
 * room), its CRC taken in place (no scratch copy); returns its length.
 */
function putUpdateRecord(
  out: Buffer,
  pos: number,
  type: number,
  id: number,
  seq: number,
  crc: Crc32,
): number {
  const at = pos + RECORD_HEADER_SIZE;
  const len = putUpdate(out, at, id, seq) - at;
  putU32(out, pos, typedSize(type, len));
  putU32(out, pos + 4, crc.bytes(out, at, at + len));
  return RECORD_HEADER_SIZE + len;
}

export class TypedLog implements RecordSink {
  readonly file: AppendFile;
  /** Records in the file now, obsolete ones included. */
  private records: number;
  // Both get their start value in the constructor, after a declaration or placeholder
  // of the same kind: written twice, V8 holds them as variables (not constants whose
  // first change, the first compaction, throws away the code that read them), and the
  // clock time as a double from the start.
  private compacting: boolean;
  private lastCompact = NaN;
  private readonly crc: Crc32;

  constructor(
    path: string,
    size: number,
    records: number,
    private readonly io: IoScheduler,
    private readonly tuning: FileStoreTuning,
    private readonly snapshot: Snapshot,
    /** Records a compaction would write. */
    private readonly liveRecords: () => number,
  ) {
    this.compacting = false;
    this.lastCompact = -0;
    this.crc = Crc32.of(tuning.crcPoly);
    this.file = new AppendFile(path, size, io);
    // Deliveries and acks, most of its records, are durable with the next flush (as in
    // the reference, whose subs.dat is synced after each publish batch); the records
    // of record() ask for a synced round of their own.
    this.file.writeThrough = false;
    if (size === 0) this.file.append(fileHeader());
    this.records = records;
  }

  record(type: number, payload: Uint8Array): void {
    if (payload.length > MAX_TYPED_SIZE) {
      throw new Error(`file store: record of ${payload.length} bytes is too large`);
    }
    const f = this.file;
    const n = RECORD_HEADER_SIZE + payload.length;
    putRecord(f.room(n), f.pos, typedSize(type, payload.length), payload, this.crc);
    f.commit(n);
    this.io.wantSync();
    this.added();
  }

  /**
   * A SubStateUpdate{ID, seqno} record, one per delivery and per ack: encoded by hand
   * where it is written (no Buffer writers).
   */
  update(type: number, id: number, seq: number): void {
    const f = this.file;
    const buf = f.room(UPDATE_RECORD_MAX);
    f.commit(putUpdateRecord(buf, f.pos, type, id, seq, this.crc));
    this.added();
  }

  private added(): void {
    // Whether to compact is asked every COMPACT_CHECK records, not per record: a
    // subscription catching up writes two records per message (sent, acked), and the
    // clock read and ratio of every one were 3% of the server's CPU in a FILE catch-up
    // (a Date.now() boxed per call besides). Compaction is housekeeping: a few hundred
    // records later changes nothing.
    if ((++this.records & (COMPACT_CHECK - 1)) !== 0) return;
    const t = this.tuning;
    if (
      !t.compact ||
      this.compacting ||
      this.file.size < t.compactMinSize ||
      (this.records - this.liveRecords()) * 100 < this.records * t.compactFrag ||
      Date.now() - this.lastCompact < t.compactInterval
    ) {
      return;
    }
    this.compacting = true;
    this.io.addTask(() => this.compact());
  }

  private async compact(): Promise<void> {
    try {
      if (this.file.dead) return;
      // Taken now, between two rounds: it holds every change so far, written or not.
      const out = new SnapshotWriter(this.crc);
      this.snapshot(out);
      const chunks = out.finish();
      this.file.reset(out.size);
      this.records = out.records;
      await this.io.pool.close(this.file);
      await replaceFile(this.file.path, chunks);
    } finally {
      this.compacting = false;
      this.lastCompact = Date.now();
    }
  }
}

/** Room in each of a compaction's buffers: a few for thousands of pending messages. */
const SNAPSHOT_CHUNK = 64 * 1024;

/**
 * A compaction's records, written back to back into large buffers. A class, not an
 * object literal: a literal `{ record, update }` shared its first hidden-class
 * transition with the stores' `{ record, pending }` entries, and storing a function
 * under `record` retired the entries' field type and the code compiled around it
 * (every delivery and ack), in the middle of a subscription's catch-up. A buffer per
 * record also made one allocation per pending message.
 */
class SnapshotWriter implements RecordSink {
  size = FILE_HEADER_SIZE;
  records = 0;
  private readonly chunks: Buffer[] = [fileHeader()];
  private buf = Buffer.allocUnsafe(SNAPSHOT_CHUNK);
  private pos = 0;

  constructor(private readonly crc: Crc32) {}

  record(type: number, payload: Uint8Array): void {
    const n = RECORD_HEADER_SIZE + payload.length;
    const at = this.room(n);
    putRecord(this.buf, at, typedSize(type, payload.length), payload, this.crc);
    this.added(n);
  }

  update(type: number, id: number, seq: number): void {
    const at = this.room(UPDATE_RECORD_MAX);
    this.added(putUpdateRecord(this.buf, at, type, id, seq, this.crc));
  }

  /** The file's bytes, in order. */
  finish(): Buffer[] {
    if (this.pos > 0) this.chunks.push(this.buf.subarray(0, this.pos));
    this.pos = 0;
    return this.chunks;
  }

  private room(n: number): number {
    if (this.buf.length - this.pos < n) {
      if (this.pos > 0) this.chunks.push(this.buf.subarray(0, this.pos));
      this.buf = Buffer.allocUnsafe(Math.max(n, SNAPSHOT_CHUNK));
      this.pos = 0;
    }
    return this.pos;
  }

  private added(n: number): void {
    this.pos += n;
    this.size += n;
    this.records++;
  }
}

export interface ReplayResult {
  /** Size of the file after recovery (cut if it had a bad tail); 0 if missing. */
  readonly size: number;
  readonly records: number;
}

/**
 * Reads every record of a typed log. `apply` returns an error text for a record it
 * cannot use; that record is then handled as a damaged one (cut or refuse).
 */
export async function replayLog(
  path: string,
  tuning: FileStoreTuning,
  warn: (text: string) => void,
  apply: (type: number, payload: Buffer) => string | undefined,
): Promise<ReplayResult> {
  const h = await open(path, 'r+').catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  });
  if (h === undefined) return { size: 0, records: 0 };
  try {
    const fileSize = (await h.stat()).size;
    if (fileSize === 0) return { size: 0, records: 0 };
    const crc = Crc32.of(tuning.crcPoly);
    const reader = new FileReader(h, fileSize, 0, tuning.readBufferSize, true, crc);
    if (fileSize < FILE_HEADER_SIZE) {
      reader.bad = { offset: 0, eof: true, reason: 'unexpected end of file (file header)' };
    } else {
      checkFileHeader(await reader.bytes(0, FILE_HEADER_SIZE), path);
      reader.pos = FILE_HEADER_SIZE;
    }
    let records = 0;
    while (reader.bad === undefined) {
      const rec = await reader.next();
      if (rec === undefined) break;
      const problem = apply(rec.type, rec.payload);
      if (problem !== undefined) {
        reader.bad = { offset: rec.offset, eof: false, reason: problem };
        break;
      }
      records++;
    }
    if (reader.zeroAt !== undefined) {
      return { size: await cutZeros(h, path, fileSize, reader.zeroAt, warn), records };
    }
    if (reader.bad === undefined) return { size: fileSize, records };
    const size = await cutOrRefuse(h, path, fileSize, reader.bad, tuning.truncateBadEof, warn);
    return { size: size < FILE_HEADER_SIZE ? 0 : size, records };
  } finally {
    await h.close();
  }
}
