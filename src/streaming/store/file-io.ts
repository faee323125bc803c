// The FILE store's I/O: append-only files that collect records in memory, and the
// scheduler that writes them (open files are in file-pool.ts).
//
// Writes are batched: records are copied into a per-file buffer as they are stored,
// and once per event-loop turn (or when flush() is called) each file with new bytes
// gets one positioned writev. Rounds never overlap, so whatever is appended while a
// round is on disk goes into the next one: group commit for free. flush() resolves
// after the round that covers every earlier append, written and, with `sync`, on
// disk (O_DSYNC writes, fdatasync of the rest).
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DeadFileError, FilePool, StoreFile } from './file-pool.js';
import { FileStoreError } from './file-record.js';

const MIN_CHUNK = 16 * 1024;
// Written chunks kept per size for reuse.
const FREE_CHUNKS = 4;

/**
 * A file written only at its end. `size` counts what was appended, `written` what
 * the OS has; appends go into `chunk` and are handed to the scheduler as views.
 */
export class AppendFile extends StoreFile {
  size: number;
  written: number;
  /** Bytes written since the last fdatasync. */
  unsynced = false;
  /** Created by this run: its directory entry needs a sync too. */
  isNew: boolean;
  /**
   * Synced by flush() with `sync` on. False for files rebuilt from others at recovery
   * (a slice's .idx): one fdatasync less per round; close and auto sync still sync it.
   */
  syncOnFlush = true;
  /**
   * With `sync`, opened with O_DSYNC: every write is durable when it returns. False for
   * the typed logs (subs.dat, clients.dat): most of their rounds carry only deliveries
   * and acks, which, as in the reference, become durable with the next flush; such a
   * round is a plain write, and a round that must be durable syncs them after the write.
   */
  writeThrough = true;
  dirty = false;
  private chunk: Buffer = EMPTY;
  private chunkFrom = 0;
  private chunkPos = 0;
  private queued: Buffer[] = [];
  private nextChunk = MIN_CHUNK;
  /** Bytes appended since the scheduler last took this file's bytes. */
  private roundBytes = 0;

  constructor(
    path: string,
    size: number,
    private readonly io: IoScheduler,
  ) {
    super(path);
    this.size = size;
    this.written = size;
    this.isNew = size === 0;
  }

  // With `sync`, a write through O_DSYNC is durable when it returns: one system call
  // and one thread-pool hop per round instead of two.
  override get dsync(): boolean {
    return this.writeThrough && this.syncOnFlush && this.io.syncOnFlush;
  }

  /** Room for `n` more bytes: write them at `buf[pos]`, then call commit(n). */
  room(n: number): Buffer {
    if (this.chunk.length - this.chunkPos < n) {
      if (this.chunkPos > this.chunkFrom) {
        this.queued.push(this.chunk.subarray(this.chunkFrom, this.chunkPos));
      }
      // Chunks grow while a turn fills them, up to buffer_size; a chunk that took more
      // than one round to fill means a quiet file, which goes back to small chunks (a
      // channel storing a few records a turn kept buffer_size bytes per file).
      if (this.roundBytes < this.chunk.length) this.nextChunk = MIN_CHUNK;
      const size = Math.max(n, this.nextChunk);
      this.nextChunk = Math.min(this.nextChunk * 2, Math.max(MIN_CHUNK, this.io.bufferSize));
      this.chunk = this.io.chunk(size);
      this.chunkFrom = 0;
      this.chunkPos = 0;
    }
    return this.chunk;
  }

  get pos(): number {
    return this.chunkPos;
  }

  commit(n: number): void {
    this.chunkPos += n;
    this.roundBytes += n;
    this.size += n;
    this.io.appendedTo();
    if (!this.dirty) {
      this.dirty = true;
      this.io.markDirty(this);
    }
  }

  append(bytes: Uint8Array): void {
    const buf = this.room(bytes.length);
    buf.set(bytes, this.chunkPos);
    this.commit(bytes.length);
  }

  /** What was appended and not handed to the OS yet, in order. */
  take(): Buffer[] {
    this.dirty = false;
    this.roundBytes = 0;
    if (this.chunkPos > this.chunkFrom) {
      this.queued.push(this.chunk.subarray(this.chunkFrom, this.chunkPos));
      this.chunkFrom = this.chunkPos;
    }
    const out = this.queued;
    this.queued = [];
    if (out.length === 0) this.nextChunk = MIN_CHUNK;
    return out;
  }

  /** True while `b` (a written view) shares memory with bytes not written yet. */
  holds(b: Buffer): boolean {
    if (b.buffer === this.chunk.buffer) return true;
    for (const q of this.queued) if (q.buffer === b.buffer) return true;
    return false;
  }

  /** Forgets what was appended and not written; the file ends at `size` from now on. */
  reset(size: number): void {
    this.queued = [];
    this.chunkFrom = this.chunkPos;
    this.size = size;
    this.written = size;
  }
}

const EMPTY = Buffer.alloc(0);
const DONE: Promise<void> = Promise.resolve();

export interface IoOptions {
  readonly sync: boolean;
  readonly bufferSize: number;
  readonly fdsCap: number;
}

interface Waiter {
  /** Appends (and tasks) made before the flush() call: what must be on disk. */
  readonly gen: number;
  /** Every file synced, .idx included (close, auto sync). */
  readonly all: boolean;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
}

export class IoScheduler {
  readonly pool: FilePool;
  readonly bufferSize: number;
  readonly syncOnFlush: boolean;
  private dirty: AppendFile[] = [];
  private readonly unsynced = new Set<AppendFile>();
  private dirsToSync = new Set<string>();
  private tasks: (() => Promise<void>)[] = [];
  private waiters: Waiter[] = [];
  // Generations: every append and task counts one; a round that took them all sets
  // `written` (and `synced`, `allSynced`) to the count it started with. A flush() whose
  // appends a finished round already covers resolves without a round of its own: the
  // server chains one flush per publish batch, and one round can cover many batches.
  private appended = 0;
  private written = 0;
  private synced = 0;
  private allSynced = 0;
  /** Written chunks for reuse, by size: far fewer large allocations for the GC. */
  private readonly freeChunks = new Map<number, Buffer[]>();
  private scheduled = false;
  /** Something written since the last round must be durable without a flush() for it. */
  private syncWanted = false;
  private active = false;
  private running: Promise<void> | undefined;
  /** The first write error: every later flush fails with it (nothing is trusted after). */
  failure: Error | undefined;

  constructor(options: IoOptions) {
    this.pool = new FilePool(options.fdsCap);
    this.bufferSize = options.bufferSize;
    this.syncOnFlush = options.sync;
  }

  markDirty(file: AppendFile): void {
    this.dirty.push(file);
    this.schedule();
  }

  /** An append to a file already dirty: counted for flush(). */
  appendedTo(): void {
    this.appended++;
  }

  /** Runs after the writes of the next round, in the order queued. */
  addTask(task: () => Promise<void>): void {
    this.appended++;
    this.tasks.push(task);
    this.schedule();
  }

  /**
   * The next round syncs (with `sync`) even if no flush() waits for it: a record that
   * must not wait for the next publish to be durable (a subscription, a client).
   */
  wantSync(): void {
    if (!this.syncOnFlush) return;
    this.syncWanted = true;
    this.schedule();
  }

  /** A directory whose entries changed: synced with the next synced round. */
  dirChanged(dir: string): void {
    this.dirsToSync.add(dir);
  }

  /** A buffer of `size` bytes for appends (a written one when there is one). */
  chunk(size: number): Buffer {
    return this.freeChunks.get(size)?.pop() ?? Buffer.allocUnsafe(size);
  }

  /** `b` was written: its chunk can be reused unless it still holds unwritten bytes. */
  private recycle(file: AppendFile, bufs: readonly Buffer[]): void {
    for (const b of bufs) {
      const size = b.buffer.byteLength;
      if (size < MIN_CHUNK || size > this.bufferSize || (size & (size - 1)) !== 0) continue;
      if (file.holds(b)) continue;
      let free = this.freeChunks.get(size);
      if (free === undefined) this.freeChunks.set(size, (free = []));
      if (free.length < FREE_CHUNKS) free.push(Buffer.from(b.buffer, 0, size));
    }
  }

  /** Resolves once every earlier append is written (and synced if `sync`). */
  flush(): Promise<void> {
    return this.wait(false);
  }

  /** Writes and syncs everything, .idx files included (auto sync, close). */
  syncAll(): Promise<void> {
    return this.wait(true);
  }

  /** Resolves when no round is running or due. */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  private wait(all: boolean): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const gen = this.appended;
    if (this.reached(gen, all)) return DONE;
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ gen, all, resolve, reject });
      if (!this.active) this.start();
    });
  }

  private reached(gen: number, all: boolean): boolean {
    if (all) return this.allSynced >= gen;
    return (this.syncOnFlush ? this.synced : this.written) >= gen;
  }

  private schedule(): void {
    if (this.scheduled || this.active) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.active) this.start();
    });
  }

  // `running` is cleared in the same synchronous step that sees nothing left to do, so
  // a flush() arriving just after always starts a new loop.
  private start(): void {
    this.active = true;
    const loop = this.loop();
    if (this.looping()) this.running = loop;
  }

  private looping(): boolean {
    return this.active;
  }

  private async loop(): Promise<void> {
    while (true) {
      if (
        this.dirty.length === 0 &&
        this.tasks.length === 0 &&
        this.waiters.length === 0 &&
        !this.syncWanted
      ) {
        this.active = false;
        this.running = undefined;
        return;
      }
      const covers = this.appended;
      const files = this.dirty;
      const tasks = this.tasks;
      let all = false;
      let sync = this.syncWanted;
      this.syncWanted = false;
      for (const w of this.waiters) {
        if (w.all) all = true;
        else if (this.syncOnFlush) sync = true;
      }
      this.dirty = [];
      this.tasks = [];
      try {
        if (this.failure !== undefined) throw this.failure;
        if (all || sync) {
          // Files written without O_DSYNC are synced in the same step as the writes,
          // each right after its own write: a durable round costs no extra step.
          const stale = this.staleFiles(files, all);
          await forEachLimited(files.length + stale.length, this.pool.parallel, (i) =>
            i < files.length ? this.write(files[i]!, all) : this.syncFile(stale[i - files.length]!),
          );
        } else {
          await forEachLimited(files.length, this.pool.parallel, (i) => this.write(files[i]!));
        }
        for (const task of tasks) await task();
        this.written = covers;
        if (all || (sync && this.needsSync())) await this.syncFiles(all);
        if (all || (this.syncOnFlush && !this.needsSync())) this.synced = covers;
        if (all) this.allSynced = covers;
      } catch (err) {
        this.failure ??= asStoreError(err);
        for (const w of this.waiters.splice(0)) w.reject(this.failure);
        continue;
      }
      // Waiters that came during the round are served too if it covered their appends.
      const waiting = this.waiters;
      this.waiters = [];
      for (const w of waiting) {
        if (this.reached(w.gen, w.all)) w.resolve();
        else this.waiters.push(w);
      }
    }
  }

  /**
   * Writes what `file` has pending. `syncAll` undefined: no sync in this round; else
   * the file is synced after its write if it is not O_DSYNC and this round must make
   * it durable (every file with `syncAll`, else those synced on flush).
   */
  private async write(file: AppendFile, syncAll?: boolean): Promise<void> {
    const bufs = file.take();
    if (file.dead || bufs.length === 0) return;
    const syncNow = syncAll !== undefined && !file.dsync && (syncAll || file.syncOnFlush);
    let total = 0;
    for (const b of bufs) total += b.length;
    const at = file.written;
    if (file.isNew) {
      file.isNew = false;
      this.dirsToSync.add(dirname(file.path));
    }
    const ok = await this.pool
      .use(
        file,
        async (h) => {
          let done = 0;
          let pending = bufs;
          // A short write (disk nearly full, signal) continues where it stopped.
          while (done < total) {
            const { bytesWritten } = await h.writev(pending, at + done);
            if (bytesWritten === 0) throw new Error(`no progress writing ${file.path}`);
            done += bytesWritten;
            if (done < total) pending = skipBytes(bufs, done);
          }
          if (syncNow) await h.datasync();
          return true;
        },
        true,
      )
      .catch((err: unknown) => {
        if (err instanceof DeadFileError) return false;
        throw err;
      });
    if (!ok) return;
    // `written` only moves forward: a reset during the write set it past these bytes.
    if (file.written === at) file.written = at + total;
    this.recycle(file, bufs);
    if (file.dsync) return;
    if (syncNow) {
      file.unsynced = false;
      this.unsynced.delete(file);
      return;
    }
    file.unsynced = true;
    this.unsynced.add(file);
  }

  /** Files written by earlier rounds, not synced yet, that this round does not write. */
  private staleFiles(writing: readonly AppendFile[], all: boolean): AppendFile[] {
    const stale: AppendFile[] = [];
    for (const f of this.unsynced) {
      if ((all || f.syncOnFlush) && !writing.includes(f)) {
        stale.push(f);
        this.unsynced.delete(f);
      }
    }
    return stale;
  }

  private async syncFile(f: AppendFile): Promise<void> {
    if (f.dead || !f.unsynced) return;
    f.unsynced = false;
    await this.pool.use(f, (h) => h.datasync());
  }

  /** Something flush() must sync: a file written without O_DSYNC, or a directory. */
  private needsSync(): boolean {
    if (this.dirsToSync.size > 0) return true;
    for (const f of this.unsynced) if (f.syncOnFlush) return true;
    return false;
  }

  private async syncFiles(all: boolean): Promise<void> {
    const files: AppendFile[] = [];
    for (const f of this.unsynced) {
      if (all || f.syncOnFlush) {
        files.push(f);
        this.unsynced.delete(f);
      }
    }
    const dirs = [...this.dirsToSync];
    this.dirsToSync = new Set();
    await forEachLimited(files.length, this.pool.parallel, (i) => this.syncFile(files[i]!));
    await Promise.all(dirs.map((d) => syncDir(d)));
  }
}

/** Runs `fn` for 0..count-1, at most `limit` at a time. */
async function forEachLimited(
  count: number,
  limit: number,
  fn: (i: number) => Promise<void>,
): Promise<void> {
  if (count <= limit) {
    const all: Promise<void>[] = [];
    for (let i = 0; i < count; i++) all.push(fn(i));
    await Promise.all(all);
    return;
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await fn(next++);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

function skipBytes(bufs: Buffer[], n: number): Buffer[] {
  const out: Buffer[] = [];
  let skip = n;
  for (const b of bufs) {
    if (skip >= b.length) skip -= b.length;
    else {
      out.push(skip > 0 ? b.subarray(skip) : b);
      skip = 0;
    }
  }
  return out;
}

/** fsync of a directory: makes file creations, renames and removals in it durable. */
export async function syncDir(dir: string): Promise<void> {
  let h: FileHandle | undefined;
  try {
    h = await open(dir, constants.O_RDONLY);
    await h.sync();
  } catch (err) {
    // A directory removed meanwhile (channel deleted) has nothing left to make durable.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  } finally {
    await h?.close();
  }
}

function asStoreError(err: unknown): Error {
  if (err instanceof FileStoreError) return err;
  const text = err instanceof Error ? err.message : String(err);
  return new FileStoreError('IO', `file store: write failed, store stopped: ${text}`);
}
