// A JetStream stream stored in files (see FILE-FORMAT.md): the write side. Messages
// are appended to the last block file; the limits drop the oldest ones (a block whose
// messages are all gone is deleted, one mostly gone is rewritten with what is left);
// the first sequence is recorded once per write round in a state record, interior
// deletes as tombstones in the block's delete file.
import { existsSync, mkdirSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import {
  EMPTIED_FIRST_TS,
  StoreError,
  isAllSubjects,
  lowersPerSubject,
  type ConsumerStore,
  type ConsumerStoreConfig,
  type DurableCallback,
  type StorageUpdateHandler,
  type StreamState,
  type StreamStore,
  type StreamStoreConfig,
} from './types.js';
import { BlockSlots, type SubjectInfo } from './file-index.js';
import { LogFile, syncDir, writeDurably, type FileIo, type RoundHook } from './file-io.js';
import { Block, StreamQueries } from './file-query.js';
import { blockPath, deletesPath, recoverLog } from './file-recover.js';
import {
  BLOCK_MAGIC,
  DELETES_MAGIC,
  FILE_HEADER_SIZE,
  STATE_RECORD_SIZE,
  TOMBSTONE_SIZE,
  eraseRecord,
  fileHeader,
  msgRecordSize,
  putMsgRecord,
  putStateRecord,
  putTombstone,
} from './file-record.js';
import { FileConsumerStore } from './file-consumer.js';
import { checkName } from './file-names.js';

export interface FileStreamOptions {
  /** The stream's directory (`.../streams/<name>`). */
  readonly dir: string;
  readonly io: FileIo;
  /** Bytes after which a new block file is started; 0: from max_bytes as nats-server does. */
  readonly blockSize: number;
  readonly syncAlways: boolean;
  readonly consumerFlushMs: number;
  readonly warn: (text: string) => void;
  readonly onClose: (store: FileStreamStore) => void;
}

export const MSGS_DIR = 'msgs';
export const CONSUMERS_DIR = 'obs';

const MAX_BLOCK = 8 * 1024 * 1024;
const MIN_BLOCK = 64 * 1024;
/** A gap of sequences this large starts a new block rather than empty slots. */
const MAX_GAP = 1024;
/** Blocks smaller than this are not rewritten to free their dead records. */
const COMPACT_MIN = 256 * 1024;

function blockSizeFor(cfg: StreamStoreConfig, fixed: number): number {
  if (fixed > 0) return fixed;
  if (cfg.maxBytes > 0)
    return Math.min(MAX_BLOCK, Math.max(MIN_BLOCK, Math.ceil(cfg.maxBytes / 4)));
  return MAX_BLOCK;
}

export class FileStreamStore extends StreamQueries implements StreamStore, RoundHook {
  readonly type = 'file' as const;
  private cfg: StreamStoreConfig;
  private readonly msgsDir: string;
  private readonly io: FileIo;
  private active!: Block;
  private blockSize: number;
  private stateDirty = false;
  private closed = false;
  private onUpdate: StorageUpdateHandler | undefined;
  private ageTimer: NodeJS.Timeout | undefined;
  private readonly consumers = new Set<FileConsumerStore>();
  /** Block ids only grow: a removed block's files may still be on their way out. */
  private nextId = 1;

  constructor(
    cfg: StreamStoreConfig,
    private readonly options: FileStreamOptions,
  ) {
    super();
    this.cfg = cfg;
    this.io = options.io;
    this.blockSize = blockSizeFor(cfg, options.blockSize);
    this.msgsDir = join(options.dir, MSGS_DIR);
    const recovering = existsSync(this.msgsDir);
    mkdirSync(this.msgsDir, { recursive: true });
    mkdirSync(join(options.dir, CONSUMERS_DIR), { recursive: true });
    const r = recoverLog(this.msgsDir, this.io, this.subjects, options.warn);
    this.blocks = r.blocks;
    this.msgs = r.msgs;
    this.bytes = r.bytes;
    this.firstSeq = r.firstSeq;
    this.firstTs = r.firstTs;
    this.lastSeq = r.lastSeq;
    this.lastTs = r.lastTs;
    if (recovering && this.msgs === 0) {
      // As nats-server's file store comes back empty (a stream never written included).
      this.firstSeq = this.lastSeq + 1;
      this.firstTs = EMPTIED_FIRST_TS;
    }
    // Blocks left with nothing live (their removal was cut by a crash).
    const last = this.blocks[this.blocks.length - 1];
    this.nextId = (last?.id ?? 0) + 1;
    for (const b of [...this.blocks]) {
      if (b !== last && b.slots.live === 0) this.dropBlock(b);
    }
    if (last === undefined) this.startBlock();
    else {
      this.active = last;
      last.file.pinned = true;
      last.slots = growable(last.slots);
    }
    this.enforceLimits();
    if (this.cfg.maxAgeNs > 0) this.expire();
  }

  // ---- writing -------------------------------------------------------------

  storeMsg(subject: string, hdr: Buffer, data: Buffer, ts: number): number {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    if (this.io.failure !== undefined) throw new StoreError('closed', this.io.failure.message);
    const cfg = this.cfg;
    let info = this.subjects.byName.get(subject);
    const maxp = cfg.maxMsgsPerSubject > 0 ? cfg.maxMsgsPerSubject : 0;
    const atSubjectLimit = maxp > 0 && info !== undefined && info.msgs >= maxp;
    if (cfg.discard === 'new') {
      let fseq = 0;
      if (atSubjectLimit) {
        if (cfg.discardNewPerSubject) {
          throw new StoreError('max-msgs-per-subject', 'maximum messages per subject exceeded');
        }
        fseq = this.firstOf(info!);
      }
      if (cfg.maxMsgs > 0 && this.msgs >= cfg.maxMsgs && !atSubjectLimit) {
        throw new StoreError('max-msgs', 'maximum messages exceeded');
      }
      if (cfg.maxBytes > 0 && this.bytes + hdr.length + data.length >= cfg.maxBytes) {
        if (!atSubjectLimit || this.sizeOf(fseq) <= hdr.length + data.length) {
          throw new StoreError('max-bytes', 'maximum bytes exceeded');
        }
      }
    }
    const seq = this.lastSeq + 1;
    const room = msgRecordSize(subject.length * 3, hdr.length, data.length);
    const b = this.writable(seq, room);
    const f = b.file;
    const off = f.size;
    const chunk = f.room(room);
    const rl = putMsgRecord(chunk.buf, chunk.used, seq, ts, subject, hdr, data);
    f.commit(chunk, rl);
    info ??= this.subjects.intern(subject);
    b.slots.add(seq, off, rl, info.id, ts);
    this.subjects.added(info, seq);
    if (this.msgs === 0) {
      this.firstSeq = seq;
      this.firstTs = ts;
    }
    this.msgs++;
    this.bytes += rl;
    this.lastSeq = seq;
    this.lastTs = ts;
    if (atSubjectLimit) this.trimSubject(info, maxp);
    this.enforceLimits();
    if (cfg.maxAgeNs > 0 && this.ageTimer === undefined) this.scheduleExpiry();
    this.onUpdate?.(1, rl, seq, subject);
    return seq;
  }

  skipMsg(): number {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    const seq = ++this.lastSeq;
    this.lastTs = Date.now() * 1e6;
    if (this.msgs === 0) {
      // The reference's file store stamps an empty stream's first time with the skip's.
      this.firstSeq = seq + 1;
      this.firstTs = this.lastTs;
    }
    this.markState();
    return seq;
  }

  onDurable(done: DurableCallback): void {
    this.io.onDurable(done);
  }

  appendMark(): number {
    return this.io.appended;
  }

  /** The block to append `seq` to (`room` bytes), starting a new one when due. */
  private writable(seq: number, room: number): Block {
    const a = this.active;
    const s = a.slots;
    if (s.count > 0 && (a.file.size + room > this.blockSize || seq - s.last > MAX_GAP)) {
      this.startBlock();
    }
    return this.active;
  }

  /** A new last block, opened with a state record; the old one is only read from now on. */
  private startBlock(): void {
    const id = this.nextId++;
    const old = this.blocks[this.blocks.length - 1];
    const file = new LogFile(blockPath(this.msgsDir, id), 0, this.io, this.msgsDir);
    file.pinned = true;
    file.append(fileHeader(BLOCK_MAGIC));
    const b = new Block(id, file, new BlockSlots(this.lastSeq + 1));
    this.blocks.push(b);
    this.active = b;
    this.writeState();
    if (old !== undefined) {
      old.file.pinned = false;
      old.file.releaseTail();
      old.slots.shrink();
      if (old.slots.live === 0) this.dropBlock(old);
    }
  }

  private writeState(): void {
    const f = this.active.file;
    const c = f.room(STATE_RECORD_SIZE);
    putStateRecord(
      c.buf,
      c.used,
      this.msgs === 0 ? this.lastSeq + 1 : this.firstSeq,
      this.lastSeq,
      this.lastTs,
    );
    f.commit(c, STATE_RECORD_SIZE);
    this.stateDirty = false;
  }

  private markState(): void {
    if (this.stateDirty) return;
    this.stateDirty = true;
    this.io.hook(this);
  }

  prepareRound(): void {
    if (this.stateDirty && !this.closed) this.writeState();
  }

  private sizeOf(seq: number): number {
    const b = this.liveBlock(seq);
    return b === undefined ? 0 : b.slots.len[seq - b.slots.base]!;
  }

  // ---- removing ------------------------------------------------------------

  private removeSeq(seq: number, erase: boolean): boolean {
    const b = this.liveBlock(seq);
    if (b === undefined) return false;
    const s = b.slots;
    const i = seq - s.base;
    const len = s.len[i]!;
    const info = this.subjects.byId[s.sid[i]!]!;
    if (erase) b.file.patch(s.off[i]!, eraseRecord, len);
    s.off[i] = 0;
    s.live--;
    s.liveBytes -= len;
    this.msgs--;
    this.bytes -= len;
    this.subjects.removed(info, seq);
    if (seq === this.firstSeq) {
      this.advanceFirst(seq + 1);
      this.markState();
    } else this.tombstone(b, seq);
    if (b !== this.active) {
      if (s.live === 0) this.dropBlock(b);
      else this.maybeCompact(b);
    }
    this.onUpdate?.(-1, -len, seq, info.name);
    return true;
  }

  private advanceFirst(from: number): void {
    const next = this.msgs === 0 ? 0 : this.nextLive(from, 0, null);
    if (next === 0) {
      this.firstSeq = this.lastSeq + 1;
      this.firstTs = EMPTIED_FIRST_TS;
    } else {
      this.firstSeq = next;
      const b = this.liveBlock(next)!;
      this.firstTs = b.slots.ts[next - b.slots.base]!;
    }
  }

  private tombstone(b: Block, seq: number): void {
    let d = b.deletes;
    if (d === undefined) {
      d = b.deletes = new LogFile(deletesPath(this.msgsDir, b.id), 0, this.io);
      d.append(fileHeader(DELETES_MAGIC));
    }
    const c = d.room(TOMBSTONE_SIZE);
    putTombstone(c.buf, c.used, seq);
    d.commit(c, TOMBSTONE_SIZE);
  }

  /** Forgets a block and removes its files after this round's writes. */
  private dropBlock(b: Block): void {
    const at = this.blocks.indexOf(b);
    if (at < 0) return;
    this.blocks.splice(at, 1);
    this.io.remove(b.file);
    if (b.deletes !== undefined) this.io.remove(b.deletes);
  }

  /** Rewrites a block holding mostly deleted records with only its live ones. */
  private maybeCompact(b: Block): void {
    const size = b.file.size;
    if (b.compacting || size < COMPACT_MIN || b.slots.liveBytes * 2 > size) return;
    b.compacting = true;
    this.io.addTask(() => this.compactBlock(b));
  }

  private compactBlock(b: Block): void {
    b.compacting = false;
    if (this.closed || !this.blocks.includes(b) || b === this.active || b.slots.live === 0) return;
    const s = b.slots;
    const out = Buffer.allocUnsafe(FILE_HEADER_SIZE + s.liveBytes);
    fileHeader(BLOCK_MAGIC).copy(out, 0);
    let pos = FILE_HEADER_SIZE;
    const offs = new Uint32Array(s.count);
    for (let i = 0; i < s.count; i++) {
      const off = s.off[i]!;
      if (off === 0) continue;
      const len = s.len[i]!;
      const r = b.file.read(off, len);
      r.buf.copy(out, pos, r.at, r.at + len);
      offs[i] = pos;
      pos += len;
    }
    const path = blockPath(this.msgsDir, b.id);
    const tmp = join(this.msgsDir, `${b.id}.new`);
    writeDurably(tmp, out.subarray(0, pos));
    this.io.closeFile(b.file);
    renameSync(tmp, path);
    // Every record in the new file is live: its tombstones are not needed any more.
    // Removed now, not after a round: a tombstone written meanwhile starts a new file.
    if (b.deletes !== undefined) {
      b.deletes.dead = true;
      this.io.closeFile(b.deletes);
      unlinkSync(b.deletes.path);
      b.deletes = undefined;
    }
    syncDir(this.msgsDir);
    b.file.dead = true;
    b.file = new LogFile(path, pos, this.io, this.msgsDir);
    s.off.set(offs.subarray(0, s.count));
  }

  removeMsg(seq: number): boolean {
    return this.removeSeq(seq, false);
  }

  eraseMsg(seq: number): boolean {
    return this.removeSeq(seq, true);
  }

  /** Removes the oldest message; false (and nothing more to remove) when there is none. */
  private dropFirst(): boolean {
    if (this.msgs === 0) return false;
    if (this.removeSeq(this.firstSeq, false)) return true;
    // The first sequence did not name a live message: find it, and try once more.
    this.advanceFirst(this.firstSeq);
    return this.removeSeq(this.firstSeq, false);
  }

  private enforceLimits(): void {
    const cfg = this.cfg;
    if (cfg.maxMsgs > 0) while (this.msgs > cfg.maxMsgs && this.dropFirst());
    if (cfg.maxBytes > 0) while (this.bytes > cfg.maxBytes && this.dropFirst());
  }

  private trimSubject(info: SubjectInfo, maxp: number): void {
    while (info.msgs > maxp && this.removeSeq(this.firstOf(info), false));
  }

  private enforceSubjectLimit(): void {
    const maxp = this.cfg.maxMsgsPerSubject;
    if (maxp <= 0) return;
    for (const info of [...this.subjects.byName.values()]) this.trimSubject(info, maxp);
  }

  private scheduleExpiry(): void {
    if (this.closed || this.cfg.maxAgeNs <= 0 || this.msgs === 0) return;
    // setTimeout takes at most 2^31 - 1 ms (a longer max_age checks again then).
    const waitMs = Math.min(
      0x7fffffff,
      Math.max(1, (this.firstTs + this.cfg.maxAgeNs) / 1e6 - Date.now()),
    );
    this.ageTimer = setTimeout(() => {
      this.ageTimer = undefined;
      this.expire();
    }, waitMs);
    this.ageTimer.unref();
  }

  private expire(): void {
    const oldest = Date.now() * 1e6 - this.cfg.maxAgeNs;
    while (this.msgs > 0 && this.firstTs <= oldest && this.dropFirst());
    this.scheduleExpiry();
  }

  purge(): number {
    return this.purgeTo(this.lastSeq + 1);
  }

  /** Removes everything; the next message gets `next` (≥ lastSeq + 1). */
  private purgeTo(next: number): number {
    const purged = this.msgs;
    const bytes = this.bytes;
    const old = this.blocks;
    this.blocks = [];
    for (const b of old) {
      b.slots.live = 0;
      this.blocks.push(b);
      this.dropBlock(b);
    }
    this.subjects.clear();
    this.msgs = 0;
    this.bytes = 0;
    this.lastSeq = Math.max(this.lastSeq, next - 1);
    this.firstSeq = this.lastSeq + 1;
    this.firstTs = 0;
    this.startBlock();
    if (purged > 0) this.onUpdate?.(-purged, -bytes, 0, '');
    return purged;
  }

  purgeEx(subject: string, seq: number, keep: number): number {
    if (seq > 1 && keep > 0) throw new Error('sequence > 1 && keep > 0 not allowed');
    if (isAllSubjects(subject)) {
      if (keep === 0 && seq <= 1) return this.purge();
      if (seq > 1) return this.compact(seq);
      if (keep >= this.msgs) return 0;
      return this.compact(this.lastSeq - keep + 1);
    }
    const ss = this.filteredState(1, subject);
    if (ss.msgs === 0) return 0;
    let max = Infinity;
    if (keep > 0) {
      if (keep >= ss.msgs) return 0;
      max = ss.msgs - keep;
    }
    const last = seq > 1 ? Math.min(ss.last, seq - 1) : ss.last;
    const literal = this.subjects.byName.get(subject);
    const wildcard = literal === undefined;
    let purged = 0;
    let at = ss.first;
    while (purged < max && at <= last) {
      const next = wildcard
        ? this.nextLive(at, 0, subject, last)
        : this.nextLive(at, literal.id, null, last);
      if (next === 0) break;
      if (this.removeSeq(next, false)) purged++;
      at = next + 1;
    }
    return purged;
  }

  compact(seq: number): number {
    if (seq === 0) return this.purge();
    if (seq > this.lastSeq) return this.purgeTo(seq);
    let purged = 0;
    let bytes = 0;
    for (const b of [...this.blocks]) {
      const s = b.slots;
      if (s.count === 0 || s.base >= seq) break;
      this.clearSlots(s, 0, Math.min(s.count, seq - s.base));
      purged += this.cleared;
      bytes += this.clearedBytes;
      if (b !== this.active && s.live === 0) this.dropBlock(b);
    }
    this.msgs -= purged;
    this.bytes -= bytes;
    this.advanceFirst(seq);
    this.markState();
    if (purged > 0) this.onUpdate?.(-purged, -bytes, 0, '');
    return purged;
  }

  private cleared = 0;
  private clearedBytes = 0;

  /**
   * Removes the live messages of slots [from, to) without tombstones (compact and
   * truncate record the outcome otherwise); counts them in cleared/clearedBytes.
   */
  private clearSlots(s: BlockSlots, from: number, to: number): void {
    this.cleared = 0;
    this.clearedBytes = 0;
    for (let i = from; i < to; i++) {
      if (s.off[i] === 0) continue;
      const len = s.len[i]!;
      this.subjects.removed(this.subjects.byId[s.sid[i]!]!, s.base + i);
      s.off[i] = 0;
      s.live--;
      s.liveBytes -= len;
      this.cleared++;
      this.clearedBytes += len;
    }
  }

  truncate(seq: number): void {
    if (seq >= this.lastSeq) return;
    const keep = seq === 0 ? undefined : this.liveBlock(seq);
    if (keep === undefined && seq !== 0) throw new Error('invalid sequence');
    let purged = 0;
    let bytes = 0;
    for (const b of [...this.blocks].reverse()) {
      const s = b.slots;
      if (s.count > 0 && s.last <= seq) break;
      this.clearSlots(s, Math.max(0, seq + 1 - s.base), s.count);
      purged += this.cleared;
      bytes += this.clearedBytes;
      if (b !== keep) this.dropBlock(b);
    }
    if (keep !== undefined) {
      const s = keep.slots;
      const i = seq - s.base;
      keep.file.cut(s.off[i]! + s.len[i]!);
      s.count = i + 1;
      this.lastTs = s.ts[i]!;
    } else this.lastTs = 0;
    this.lastSeq = seq;
    this.msgs -= purged;
    this.bytes -= bytes;
    if (this.msgs === 0) this.advanceFirst(seq + 1);
    // New messages go to a new block: the cut one may hold tombstones above `seq`.
    this.startBlock();
    if (purged > 0) this.onUpdate?.(-purged, -bytes, 0, '');
  }

  // ---- state, config, consumers, lifecycle ----------------------------------

  state(withDeleted = false): StreamState {
    const numDeleted = this.msgs === 0 ? 0 : this.lastSeq - this.firstSeq + 1 - this.msgs;
    const out: StreamState = {
      msgs: this.msgs,
      bytes: this.bytes,
      firstSeq: this.firstSeq,
      // Every path that empties the stream sets it: 0 (purge), EMPTIED_FIRST_TS (removals,
      // recovery) or a skip's time (interest retention with no interest), as the reference.
      firstTs: this.firstTs,
      lastSeq: this.lastSeq,
      lastTs: this.lastTs,
      numSubjects: this.subjects.size,
      numDeleted,
      consumers: this.consumers.size,
    };
    if (withDeleted) out.deleted = this.deletedSeqs();
    return out;
  }

  registerStorageUpdates(handler: StorageUpdateHandler): void {
    this.onUpdate = handler;
  }

  updateConfig(cfg: StreamStoreConfig): void {
    const lower = lowersPerSubject(this.cfg, cfg);
    this.cfg = cfg;
    this.blockSize = blockSizeFor(cfg, this.options.blockSize);
    if (lower) this.enforceSubjectLimit();
    this.enforceLimits();
    if (this.ageTimer !== undefined) clearTimeout(this.ageTimer);
    this.ageTimer = undefined;
    if (cfg.maxAgeNs > 0) this.expire();
  }

  consumerStore(name: string, cfg?: ConsumerStoreConfig): ConsumerStore {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    checkName('consumer', name);
    const c = new FileConsumerStore(
      join(this.options.dir, CONSUMERS_DIR, name),
      cfg ?? { ackPolicy: 'explicit' },
      {
        flushMs: this.options.consumerFlushMs,
        syncAlways: this.options.syncAlways,
        warn: this.options.warn,
        streamWritten: () => this.io.flush(),
      },
      (gone) => this.consumers.delete(gone),
    );
    this.consumers.add(c);
    return c;
  }

  /** Every file of this stream (to write, sync and close them at stop). */
  private files(): LogFile[] {
    const out: LogFile[] = [];
    for (const b of this.blocks) {
      out.push(b.file);
      if (b.deletes !== undefined) out.push(b.deletes);
    }
    return out;
  }

  async stop(): Promise<void> {
    if (this.closed) return;
    if (this.stateDirty) this.writeState();
    this.closed = true;
    if (this.ageTimer !== undefined) clearTimeout(this.ageTimer);
    for (const c of [...this.consumers]) await c.stop();
    await this.io.release(this.files());
    this.options.onClose(this);
  }

  async delete(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      if (this.ageTimer !== undefined) clearTimeout(this.ageTimer);
      for (const c of [...this.consumers]) await c.delete();
      for (const f of this.files()) f.dead = true;
      await this.io.release(this.files());
      this.options.onClose(this);
    }
    rmSync(this.options.dir, { recursive: true, force: true });
  }
}

/** Slots of a recovered last block, with room to grow again. */
function growable(s: BlockSlots): BlockSlots {
  const g = new BlockSlots(s.base, Math.max(1024, s.count * 2));
  g.off.set(s.off);
  g.len.set(s.len);
  g.sid.set(s.sid);
  g.ts.set(s.ts);
  g.count = s.count;
  g.live = s.live;
  g.liveBytes = s.liveBytes;
  return g;
}
