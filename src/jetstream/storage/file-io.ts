// The I/O of the JetStream file store: files written only at their end (plus a few
// positioned overwrites), one scheduler that writes every file of every stream once
// per event-loop turn, and a bounded cache of what loads read back.
//
// Group commit: records are copied into a per-file chunk as they are stored; once per
// turn each file with new bytes gets one positioned writev, and with `sync: always` an
// fdatasync, before the callbacks of onDurable() run (the engine's PubAcks). Rounds
// never overlap: whatever is stored while one is on its way goes into the next.
// Without `always`, written means handed to the OS (a kill -9 loses nothing written)
// and a timer fsyncs every file written since its last run (sync_interval). Such a
// round writes on the event loop itself (writevSync into the page cache, as the
// reference's publishing goroutine writes each message in place): a hand-off to the
// thread pool cost more than the write, in wake-ups and promises, on every turn.
import {
  closeSync,
  fdatasync,
  fsyncSync,
  ftruncate,
  ftruncateSync,
  openSync,
  readSync,
  unlink,
  writev,
  writevSync,
  write,
  writeSync,
  constants,
} from 'node:fs';
import { dirname } from 'node:path';
import type { DurableCallback } from './types.js';

const MIN_CHUNK = 16 * 1024;
const MAX_CHUNK = 1024 * 1024;
/** Chunk buffers kept for reuse at most (see FileIo.chunkBuffer). */
const SPARE_CHUNKS = 4;
/** Recent chunks of a file kept for loads after they are written (readers near the tail). */
const TAIL_KEEP = 2 * 1024 * 1024;
/** Loads read a file in pages of this size, kept in one LRU cache for all files. */
export const PAGE = 16 * 1024;
/** Pages read at once when a read follows the previous one (sequential consumers). */
const READ_AHEAD_PAGES = 32;

interface Chunk {
  /** File offset of buf[0]. */
  readonly start: number;
  readonly buf: Buffer;
  used: number;
  /** Its entry in the read cache, once written and past the tail (see trimChunks). */
  entry: Page | null;
  /** A load was given its bytes (a view may be kept): its buffer is never reused. */
  lent: boolean;
}

interface Patch {
  readonly pos: number;
  readonly buf: Buffer;
}

/**
 * A page of a file read back from disk: bytes [index * PAGE, index * PAGE + buf.length);
 * or a written chunk kept for readers (`chunk` set, `index` -1: its bytes are found in
 * the file's chunks, not in `pages`).
 */
interface Page {
  readonly file: LogFile;
  readonly index: number;
  readonly buf: Buffer;
  readonly chunk: Chunk | null;
  /**
   * The pages that are views of one buffer (a read-ahead, a written chunk), or null for a
   * page with a buffer of its own: they leave the cache together, so that a page still
   * used does not keep alive (uncounted) the memory of the others.
   */
  readonly group: Page[] | null;
  /** In the cache's set of written pages nobody has read yet (a flag: no set lookup per load). */
  unread: boolean;
}

export class LogFile {
  fd = -1;
  /** Bytes appended (the file's logical end). */
  size: number;
  /** Bytes handed to the OS. */
  written: number;
  dirty = false;
  unsynced = false;
  /** Created by this run and not yet made durable in its directory. */
  isNew: boolean;
  /** Never closed by the pool (the block being written). */
  pinned = false;
  /** Writes in flight. */
  busy = 0;
  dead = false;
  /** The page the last load from disk ended in: a read in the next one reads ahead. */
  lastPage = -2;
  /** Pages of this file in the read cache. */
  readonly pages = new Map<number, Page>();
  /**
   * The file's newest bytes in memory, in file order: the first `retained` are written
   * chunks the read cache holds (each one entry there), then the tail (TAIL_KEEP) and
   * what is not written yet.
   */
  // Made holding objects (V8's elements kind), as the list of an older file is by now:
  // an empty `[]` is an array of small integers to V8, and a new block's first append
  // sent the optimised write path (room) back to the interpreter with a "wrong map".
  private chunks: Chunk[] = emptyListOf(NO_CHUNK);
  private retained = 0;
  private queuedFrom: number;
  private patches: Patch[] = [];
  private nextChunk = MIN_CHUNK;
  private cutTo = -1;
  /** No more appends: no chunk is kept for them (releaseTail). */
  private sealed = false;

  /**
   * @param chain files of one chain (a stream's block files: its log) are written in the
   *   order they were appended to, each after the one before it is written and synced.
   */
  constructor(
    readonly path: string,
    size: number,
    private readonly io: FileIo,
    readonly chain?: string,
  ) {
    this.size = size;
    this.written = size;
    this.queuedFrom = size;
    this.isNew = size === 0;
    // Fields first changed far into a stream's life (the first chunk handed to the cache,
    // the first block sealed) are written a second time here: V8 holds a field written
    // once as a constant and throws away the code that relied on it at its first change,
    // which for these came thousands of messages into a fresh server's first publishes
    // and took the store's write path (storeMsg, room) with it.
    this.sealed = true;
    this.sealed = false;
    this.retained = -1;
    this.retained = 0;
    this.pinned = true;
    this.pinned = false;
  }

  /** Room for `n` bytes at the end: write them at buf[at], then commit(n). */
  room(n: number): Chunk {
    // A new file has no chunk: NO_CHUNK (no room) rather than a read past the list's end,
    // which a new block's first append would do first, deep into a fresh server's life.
    const k = this.chunks.length;
    let c = k > 0 ? this.chunks[k - 1]! : NO_CHUNK;
    if (c.start + c.used !== this.size || c.buf.length - c.used < n) {
      const size = Math.max(n, this.nextChunk);
      this.nextChunk = Math.min(this.nextChunk * 2, MAX_CHUNK);
      const buf = this.io.chunkBuffer(size);
      c = { start: this.size, buf, used: 0, entry: null, lent: false };
      this.chunks.push(c);
      this.trimChunks();
    }
    return c;
  }

  commit(c: Chunk, n: number): void {
    c.used += n;
    this.size += n;
    this.io.appended++;
    if (!this.dirty) {
      this.dirty = true;
      this.io.markDirty(this);
    }
  }

  append(bytes: Uint8Array): void {
    const c = this.room(bytes.length);
    c.buf.set(bytes, c.used);
    this.commit(c, bytes.length);
  }

  /** Rewrites the `len` bytes at `pos` with `fill` (erase): in memory, and on disk if they were written. */
  patch(pos: number, fill: (b: Buffer, at: number) => void, len: number): void {
    const mem = this.inChunk(pos, len);
    const memBuf = READ.buf;
    const memAt = READ.at;
    // The chunks (those the cache holds too) are patched in place: only pages read back go.
    if (mem) fill(memBuf, memAt);
    // Bytes already handed to a write (done or in flight) are written again after it.
    if (pos < this.queuedFrom) {
      const b = Buffer.allocUnsafe(len);
      if (mem) memBuf.copy(b, 0, memAt, memAt + len);
      else {
        const r = this.read(pos, len);
        r.buf.copy(b, 0, r.at, r.at + len);
        fill(b, 0);
      }
      this.patches.push({ pos, buf: b });
      this.io.appended++;
      if (!this.dirty) {
        this.dirty = true;
        this.io.markDirty(this);
      }
    }
    this.io.cache.dropPages(this);
  }

  /** Forgets everything past `size` (truncate): cut on disk at the next round. */
  cut(size: number): void {
    if (size >= this.size) return;
    // Cached chunks go first (all of them, as cached pages do: dropFile below).
    this.io.cache.dropFile(this);
    this.chunks = this.chunks.filter((c) => c.start < size);
    const last = this.chunks[this.chunks.length - 1];
    if (last !== undefined && last.start + last.used > size) last.used = size - last.start;
    this.size = size;
    if (this.queuedFrom > size) this.queuedFrom = size;
    if (this.written > size) {
      this.written = size;
      this.queuedFrom = size;
    }
    this.cutTo = size;
    this.patches = this.patches.filter((p) => p.pos + p.buf.length <= size);
    this.io.cache.dropFile(this);
    if (!this.dirty) {
      this.dirty = true;
      this.io.markDirty(this);
    }
  }

  /**
   * Written chunks past the tail (older than TAIL_KEEP; all of a sealed file) go to the
   * read cache, each as one entry, and stay in `chunks` where loads find them: a reader
   * of recent messages (a consumer close behind its publishers, a consumer created after
   * them) reads them from memory instead of from disk, within the cache's budget, as the
   * reference's message blocks keep what they wrote. Those nobody reads leave first (the
   * cache keeps a quarter of its budget for them). One entry per chunk, not a page object
   * per 16 KB of it: a fresh server publishing 1 KiB messages spent more in putting pages
   * into the cache (interpreted, then compiled) than in writing the chunks.
   */
  private trimChunks(): void {
    const chunks = this.chunks;
    const keep = this.sealed ? 0 : 1;
    while (this.retained < chunks.length - keep) {
      const c = chunks[this.retained]!;
      const end = c.start + c.used;
      if (end > this.written || (!this.sealed && this.size - end < TAIL_KEEP)) break;
      this.retained++;
      const entry: Page = {
        file: this,
        index: -1,
        buf: c.buf,
        chunk: c,
        group: null,
        unread: false,
      };
      c.entry = entry;
      this.io.cache.put(entry, true);
    }
  }

  /** The cache let a chunk go: its bytes are read back from disk from now on. */
  forgetChunk(c: Chunk): void {
    c.entry = null;
    // Nobody was given a view of it: its memory takes the next chunk's bytes.
    if (!c.lent && c.buf.length === MAX_CHUNK) this.io.spareChunk(c.buf);
    const chunks = this.chunks;
    const i = this.chunkAt(c.start);
    if (i < 0 || chunks[i] !== c) return;
    chunks.splice(i, 1);
    if (i < this.retained) this.retained--;
  }

  /** The chunks the read cache holds (a copy of the list: dropping them changes it). */
  cachedChunks(): Chunk[] {
    return this.chunks.slice(0, this.retained);
  }

  /** A block no longer written: its chunks go to the read cache once they are written. */
  releaseTail(): void {
    this.sealed = true;
    this.trimChunks();
  }

  /** The index of the last chunk starting at or before `pos` (-1: none). */
  private chunkAt(pos: number): number {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const above = mid + 1;
      const below = chunks[mid]!.start <= pos;
      lo = below ? above : lo;
      hi = below ? hi : mid;
    }
    return lo - 1;
  }

  /**
   * Whether the `len` bytes at `pos` are in a chunk still kept; if so READ says where.
   * The chunk is found by binary search (they are in file order): a reader of recent
   * messages (a KV get) looked at every chunk oldest first, one behind them at every
   * chunk newest first. The bounds are computed and READ written on every call, with an
   * empty chunk when none holds the bytes (the caller fills READ from the pages then): a
   * field or sum first met when a reader reaches the chunks would cost V8's optimised load
   * path a deopt and a recompile. So is every step of the search (chunkAt computes both
   * moves and picks one): a load path optimised while every read fell below the kept
   * chunks met `mid + 1` for the first time when a consumer reached the newest messages.
   */
  private inChunk(pos: number, len: number): boolean {
    const i = this.chunkAt(pos);
    const hit = i >= 0 ? this.chunks[i]! : NO_CHUNK;
    const r = READ;
    r.buf = hit.buf;
    r.at = pos - hit.start;
    r.chunk = hit;
    // False for NO_CHUNK: nothing ends at or before 0.
    return pos + len <= hit.start + hit.used;
  }

  /** The `len` bytes at `pos`: in `buf` at `at`. Synchronous (loads are). */
  read(pos: number, len: number): { buf: Buffer; at: number } {
    const r = READ;
    if (this.inChunk(pos, len)) {
      r.chunk.lent = true;
      const entry = r.chunk.entry;
      if (entry !== null) this.io.cache.touch(entry);
      return r;
    }
    const first = Math.floor(pos / PAGE);
    const last = Math.floor((pos + len - 1) / PAGE);
    if (last !== first) {
      // Across a page boundary (large records, or one in 60 of 1 KiB ones): put together
      // from the cached pages when they all are there, else read as is.
      r.buf = this.fromPages(pos, len, first, last) ?? this.readAt(pos, len, len);
      r.at = 0;
      return r;
    }
    const start = first * PAGE;
    let page = this.pages.get(first);
    if (page === undefined || pos + len > start + page.buf.length) {
      const pages = first === this.lastPage + 1 ? READ_AHEAD_PAGES : 1;
      const want = Math.min(pages * PAGE, this.written - start);
      const buf = this.readAt(start, want, pos + len - start);
      const group: Page[] | null = buf.length > PAGE ? [] : null;
      for (let k = 0; k * PAGE < buf.length; k++) {
        const p: Page = {
          file: this,
          index: first + k,
          buf: buf.subarray(k * PAGE, (k + 1) * PAGE),
          chunk: null,
          group,
          unread: false,
        };
        group?.push(p);
        this.io.cache.put(p);
        if (k === 0) page = p;
      }
    } else this.io.cache.touch(page);
    this.lastPage = first;
    r.buf = page!.buf;
    r.at = pos - start;
    return r;
  }

  /** A copy of the `len` bytes at `pos` from cached pages first..last, or undefined if one is missing. */
  private fromPages(pos: number, len: number, first: number, last: number): Buffer | undefined {
    for (let i = first; i < last; i++) {
      const p = this.pages.get(i);
      if (p === undefined || p.buf.length !== PAGE) return undefined;
    }
    const end = pos + len;
    const tail = this.pages.get(last);
    if (tail === undefined || end > last * PAGE + tail.buf.length) return undefined;
    const out = Buffer.allocUnsafe(len);
    for (let i = first, at = pos; i <= last; i++) {
      const p = this.pages.get(i)!;
      const from = at - i * PAGE;
      const to = Math.min(end - i * PAGE, p.buf.length);
      out.set(p.buf.subarray(from, to), at - pos);
      at += to - from;
      this.io.cache.touch(p);
    }
    return out;
  }

  /** Reads `want` bytes at `pos` (at least `need` must be there). */
  private readAt(pos: number, want: number, need: number): Buffer {
    const buf = Buffer.allocUnsafe(want);
    const fd = this.io.open(this);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, pos + got);
      if (n === 0) break;
      got += n;
    }
    if (got < need) throw new Error(`file store: ${this.path} is shorter than expected`);
    this.io.readBack += got;
    return got === want ? buf : buf.subarray(0, got);
  }

  /** What to write this round (views, from `written`), and the overwrites. */
  take(): { bufs: Buffer[]; patches: Patch[]; cutTo: number } {
    this.dirty = false;
    const bufs: Buffer[] = [];
    const chunks = this.chunks;
    // Only the newest chunks hold bytes not queued yet (the cached ones before them never).
    let i = chunks.length;
    while (i > 0 && chunks[i - 1]!.start + chunks[i - 1]!.used > this.queuedFrom) i--;
    for (; i < chunks.length; i++) {
      const c = chunks[i]!;
      bufs.push(c.buf.subarray(Math.max(this.queuedFrom - c.start, 0), c.used));
    }
    this.queuedFrom = this.size;
    const patches = this.patches;
    this.patches = [];
    const cutTo = this.cutTo;
    this.cutTo = -1;
    return { bufs, patches, cutTo };
  }

  wrote(n: number): void {
    this.written += n;
    this.trimChunks();
  }
}

const NO_CHUNK: Chunk = { start: 0, buf: Buffer.alloc(0), used: 0, entry: null, lent: false };

/** An empty array that V8 already holds as one of objects (made with `sample`, then emptied). */
function emptyListOf<T extends object>(sample: T): T[] {
  const list = [sample];
  list.length = 0;
  return list;
}
/** What inChunk() and read() found; `chunk` is the chunk that held it (NO_CHUNK if none). */
const READ: { buf: Buffer; at: number; chunk: Chunk } = {
  buf: Buffer.alloc(0),
  at: 0,
  chunk: NO_CHUNK,
};

/**
 * Pages read back from disk, and pages of what was written, least recently used first,
 * within a byte budget. Written pages nobody has read yet get a quarter of it: a stream
 * only written to keeps its newest writes in memory, not a whole cache of them.
 */
class ReadCache {
  private readonly lru = new Set<Page>();
  /** The page last added or touched: the last in `lru`. */
  private newest: Page | null = null;
  private bytes = 0;
  /** Written pages not read since, oldest first, and their bytes. */
  private readonly unread = new Set<Page>();
  private unreadBytes = 0;
  private readonly unreadLimit: number;

  constructor(private readonly limit: number) {
    this.unreadLimit = limit >>> 2;
    // Written twice: variables to V8 from the start (see LogFile's constructor).
    this.bytes = -1;
    this.bytes = 0;
    this.unreadBytes = -1;
    this.unreadBytes = 0;
  }

  /** Adds a page; `written` for one of what a file wrote (not read yet). */
  put(p: Page, written = false): void {
    if (p.chunk === null) {
      const old = p.file.pages.get(p.index);
      if (old !== undefined) this.drop(old);
      p.file.pages.set(p.index, p);
    }
    this.lru.add(p);
    this.newest = p;
    this.bytes += p.buf.length;
    if (written) {
      p.unread = true;
      this.unread.add(p);
      this.unreadBytes += p.buf.length;
      this.evict(this.unread, p, this.unreadLimit);
    }
    this.evict(this.lru, p, this.limit);
  }

  /** Drops the oldest of `pages` until within `limit`, never `p`'s group (the newest pages). */
  private evict(pages: Set<Page>, p: Page, limit: number): void {
    for (const q of pages) {
      const total = pages === this.unread ? this.unreadBytes : this.bytes;
      if (total <= limit || q === p || (q.group !== null && q.group === p.group)) break;
      this.drop(q);
    }
  }

  touch(p: Page): void {
    if (p.unread) this.markRead(p);
    // Sequential loads read one page many times in a row: it is already the newest.
    if (p === this.newest) return;
    this.lru.delete(p);
    this.lru.add(p);
    this.newest = p;
  }

  /** A written page was read (or leaves): out of the unread set. */
  private markRead(p: Page): void {
    p.unread = false;
    this.unread.delete(p);
    this.unreadBytes -= p.buf.length;
  }

  /** Takes a page out, and the others of its group. */
  private drop(p: Page): void {
    if (!this.remove(p) || p.group === null) return;
    for (const q of p.group) this.remove(q);
  }

  private remove(p: Page): boolean {
    if (!this.lru.delete(p)) return false;
    if (p === this.newest) this.newest = null;
    this.bytes -= p.buf.length;
    if (p.unread) this.markRead(p);
    if (p.chunk !== null) p.file.forgetChunk(p.chunk);
    else if (p.file.pages.get(p.index) === p) p.file.pages.delete(p.index);
    return true;
  }

  /** Forgets a file's pages read back from disk (overwritten). */
  dropPages(file: LogFile): void {
    for (const p of [...file.pages.values()]) this.drop(p);
  }

  /** Forgets all a file holds here, pages and chunks (cut, closed). */
  dropFile(file: LogFile): void {
    this.dropPages(file);
    for (const c of file.cachedChunks()) this.drop(c.entry!);
  }
}

export interface FileIoOptions {
  /** fdatasync before onDurable callbacks run (`sync_interval: always`). */
  readonly syncAlways: boolean;
  /** Milliseconds between background fsyncs when not `always` (0: never). */
  readonly syncIntervalMs: number;
  /** Bytes of pages read back from disk kept for loads. */
  readonly cacheBytes: number;
  /** Open files kept at most (files being written do not count against it). */
  readonly fdLimit: number;
}

interface Waiter {
  readonly gen: number;
  readonly done: DurableCallback;
}

export interface RoundHook {
  /** Called once at the start of a round: the last chance to append for it. */
  prepareRound(): void;
}

export class FileIo {
  /** Counts every append, overwrite, hook and task: what a round covers. */
  appended = 0;
  /** Bytes loads read back from disk (not found in the chunks or the read cache). */
  readBack = 0;
  /** Chunks written into the memory of an earlier one (chunkBuffer), not fresh memory. */
  chunksReused = -1; // then 0: written twice (see LogFile's constructor)
  private durable = 0;
  readonly cache: ReadCache;
  private dirty: LogFile[] = [];
  private readonly hooks = new Set<RoundHook>();
  private tasks: (() => Promise<void> | void)[] = [];
  private waiters: Waiter[] = [];
  private readonly openFiles = new Set<LogFile>();
  private readonly unsynced = new Set<LogFile>();
  private readonly dirsToSync = new Set<string>();
  /** Buffers of chunks the read cache let go unread, for the next chunks (MAX_CHUNK each). */
  private readonly spare: Buffer[] = emptyListOf(NO_CHUNK.buf);
  private scheduled = false;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  failure: Error | undefined;

  constructor(private readonly options: FileIoOptions) {
    this.chunksReused = 0;
    this.cache = new ReadCache(options.cacheBytes);
    if (!options.syncAlways && options.syncIntervalMs > 0) {
      this.timer = setInterval(() => this.addTask(() => this.syncAll()), options.syncIntervalMs);
      this.timer.unref();
    }
  }

  /**
   * A buffer for a chunk of `size` bytes; of MAX_CHUNK: one the cache let go if there is one. A
   * fresh one costs a page fault per 4 KB at its first writes (the kernel zeroes the
   * page; in a VM, a trap more): some 13 ms per 30 MB here, a tenth of the event loop's
   * time in a fresh server taking 1 KiB publishes, and the garbage collector frees a
   * cached chunk's memory only at a full collection, so malloc cannot reuse it either.
   * Smaller chunks are fresh memory. Every chunk comes from here: a fresh server's first
   * MAX_CHUNK (about 1 MB into its first stream) is not the first call of it, which
   * would have no feedback and send the optimised publish path back to the interpreter.
   */
  chunkBuffer(size: number): Buffer {
    if (size !== MAX_CHUNK) return Buffer.allocUnsafe(size);
    const buf = this.spare.pop();
    if (buf === undefined) return Buffer.allocUnsafe(MAX_CHUNK);
    this.chunksReused++;
    return buf;
  }

  spareChunk(buf: Buffer): void {
    if (this.spare.length < SPARE_CHUNKS) this.spare.push(buf);
  }

  markDirty(file: LogFile): void {
    this.dirty.push(file);
    this.schedule();
  }

  hook(h: RoundHook): void {
    // What the hook appends counts now: a wait begun after it covers it (a skipped
    // sequence's state record is durable before its PubAck goes).
    this.appended++;
    this.hooks.add(h);
    this.schedule();
  }

  /** Runs after the writes of the next round (removing files, rewriting them). */
  addTask(task: () => Promise<void> | void): void {
    this.appended++;
    this.tasks.push(task);
    this.schedule();
  }

  /**
   * Calls `done` once everything appended so far is written (and synced with `always`),
   * with how far the round that did it reached: appends made after this call may be
   * covered too.
   */
  onDurable(done: DurableCallback): void {
    if (this.failure !== undefined) {
      done(this.failure, this.durable);
      return;
    }
    const gen = this.appended;
    if (this.durable >= gen) {
      done(undefined, this.durable);
      return;
    }
    this.waiters.push({ gen, done });
    this.schedule();
  }

  /** Resolves once every earlier append is written (and synced with `always`). */
  flush(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.onDurable((err) => (err === undefined ? resolve() : reject(err)));
    });
  }

  /** An fd for `file`, opened (and created) on demand; idle files past the limit are closed. */
  open(file: LogFile): number {
    if (file.fd >= 0) {
      this.openFiles.delete(file);
      this.openFiles.add(file);
      return file.fd;
    }
    if (file.dead) throw new Error(`file store: ${file.path} was removed`);
    file.fd = openSync(file.path, constants.O_RDWR | constants.O_CREAT, 0o640);
    if (file.isNew) this.dirsToSync.add(dirname(file.path));
    this.openFiles.add(file);
    if (this.openFiles.size > this.options.fdLimit) {
      for (const f of this.openFiles) {
        if (this.openFiles.size <= this.options.fdLimit) break;
        if (f === file || f.pinned || f.busy > 0 || f.dirty || this.unsynced.has(f)) continue;
        this.closeFile(f);
      }
    }
    return file.fd;
  }

  closeFile(file: LogFile): void {
    this.openFiles.delete(file);
    this.cache.dropFile(file);
    if (file.fd >= 0) {
      closeSync(file.fd);
      file.fd = -1;
    }
  }

  /**
   * Stops using `file` and removes it from disk after the next round's writes. A file of
   * a chain still gets the bytes appended to it before: it keeps its place in the log
   * until then. (Such a block, dropped by the limits before the round that writes it,
   * was skipped once: a crash in that round found the later blocks without it, and the
   * record of its removal, a first sequence in the newest block, not written: a hole.)
   */
  remove(file: LogFile): void {
    if (file.chain === undefined) file.dead = true;
    this.addTask(async () => {
      file.dead = true;
      if (file.busy === 0) this.closeFile(file);
      this.unsynced.delete(file);
      await unlinkQuietly(file.path);
      this.dirsToSync.add(dirname(file.path));
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running !== undefined) return;
    this.scheduled = true;
    setImmediate(this.startRound);
  }

  private readonly startRound = (): void => {
    this.scheduled = false;
    if (this.running !== undefined) return;
    // Without `always` and without tasks a round is synchronous: written, and its
    // waiters called, before this returns.
    if (!this.options.syncAlways && this.tasks.length === 0 && this.failure === undefined) {
      this.roundNow();
    }
    // With nothing to do, loop() would settle (and clear `running`) before the assignment,
    // leaving a settled promise there for ever: no round would start again.
    if (this.hasWork()) this.running = this.loop();
  };

  /**
   * A round written on the event loop (no `always`, no tasks): every sync publish's. Index
   * loops and the hooks out of line: a for-of over a Set or an array is an iterator that
   * TurboFan compiles into each function holding it, and this one is compiled by every
   * fresh server within its first few hundred round trips.
   */
  private roundNow(): void {
    if (this.hooks.size > 0) this.prepareHooks();
    const gen = this.appended;
    const files = this.dirty;
    this.dirty = [];
    try {
      for (let i = 0; i < files.length; i++) this.writeFileNow(files[i]!);
    } catch (err) {
      this.fail(err);
    }
    this.settle(gen);
  }

  private prepareHooks(): void {
    for (const h of this.hooks) h.prepareRound();
    this.hooks.clear();
  }

  /** Resolves when no round is running or due. */
  async idle(): Promise<void> {
    while (this.running !== undefined || this.scheduled) {
      if (this.running !== undefined) await this.running;
      else await new Promise<void>((r) => setImmediate(r));
    }
  }

  private async loop(): Promise<void> {
    try {
      while (this.hasWork()) await this.round();
    } finally {
      this.running = undefined;
    }
  }

  private hasWork(): boolean {
    return (
      this.hooks.size > 0 || this.dirty.length > 0 || this.tasks.length > 0 || this.pendingWaiters()
    );
  }

  private pendingWaiters(): boolean {
    return this.waiters.length > 0 && this.durable < this.appended;
  }

  private async round(): Promise<void> {
    this.prepareHooks();
    const gen = this.appended;
    const files = this.dirty;
    this.dirty = [];
    const tasks = this.tasks;
    this.tasks = [];
    try {
      if (this.failure === undefined) {
        if (this.options.syncAlways) {
          await this.writeSynced(files);
          this.syncDirs();
        } else {
          for (const f of files) this.writeFileNow(f);
        }
        for (const t of tasks) await t();
      }
    } catch (err) {
      this.fail(err);
    }
    this.settle(gen);
  }

  private fail(err: unknown): void {
    this.failure = new Error(
      `file store: write failed, store stopped: ${err instanceof Error ? err.message : String(err)}`,
    );
  }

  /** Everything appended before `gen` is written: calls the waiters it covers. */
  private settle(gen: number): void {
    this.durable = gen;
    const ready = this.waiters;
    const failure = this.failure;
    // A failed store calls every waiter: none of them can become durable.
    let n = ready.length;
    if (failure === undefined) {
      n = 0;
      while (n < ready.length && ready[n]!.gen <= gen) n++;
    }
    // The waiters left are set aside before any is called: a callback may wait again.
    this.waiters = n === ready.length ? [] : ready.slice(n);
    for (let i = 0; i < n; i++) ready[i]!.done(failure, gen);
  }

  /** writeFile without `always`, on the event loop: the bytes are handed to the OS now. */
  private writeFileNow(f: LogFile): void {
    if (f.dead) {
      f.take();
      return;
    }
    const { bufs, patches, cutTo } = f.take();
    const fd = this.open(f);
    let pos = f.written;
    let left = bufs;
    while (left.length > 0) {
      const w = writevSync(fd, left, pos);
      pos += w;
      f.wrote(w);
      left = advance(left, w);
    }
    for (let i = 0; i < patches.length; i++) {
      const p = patches[i]!;
      let at = 0;
      while (at < p.buf.length) at += writeSync(fd, p.buf, at, p.buf.length - at, p.pos + at);
    }
    if (cutTo >= 0) ftruncateSync(fd, cutTo);
    if (bufs.length > 0 || patches.length > 0 || cutTo >= 0) this.unsynced.add(f);
    if (f.isNew) {
      f.isNew = false;
      this.dirsToSync.add(dirname(f.path));
    }
  }

  /**
   * The files of an `always` round, written and synced: a chain's one after another (in
   * the order they were appended to), the rest concurrently.
   *
   * A round can span several blocks of a stream (a burst stored while the previous
   * round synced). Were they written concurrently, a crash could leave block N+1
   * complete and block N without the round's bytes: a hole in the log that no delete
   * explains, later messages kept and earlier ones lost (none of them acknowledged: the
   * round never completed). In order, what a kill -9 leaves is a prefix of the round, as
   * nats-server's blocks, written in place one after another, leave it; and syncing
   * block N before block N+1 is written keeps a power loss from persisting N+1's pages
   * first. Rounds within one block, the common case, lose nothing by it. Rounds without
   * `always` write on the event loop in append order (writeFileNow): a kill -9 leaves a
   * prefix there too.
   */
  private async writeSynced(files: LogFile[]): Promise<void> {
    if (files.length === 1) return this.writeFile(files[0]!);
    const chains = new Map<string, LogFile[]>();
    const jobs: Promise<void>[] = [];
    for (const f of files) {
      if (f.chain === undefined) {
        jobs.push(this.writeFile(f));
        continue;
      }
      const chain = chains.get(f.chain);
      if (chain === undefined) chains.set(f.chain, [f]);
      else chain.push(f);
    }
    for (const chain of chains.values()) jobs.push(this.writeChain(chain));
    await Promise.all(jobs);
  }

  private async writeChain(files: LogFile[]): Promise<void> {
    for (const f of files) await this.writeFile(f);
  }

  private async writeFile(f: LogFile): Promise<void> {
    if (f.dead) {
      f.take();
      return;
    }
    const { bufs, patches, cutTo } = f.take();
    const fd = this.open(f);
    f.busy++;
    try {
      let pos = f.written;
      let n = 0;
      for (const b of bufs) n += b.length;
      let left = bufs;
      while (left.length > 0) {
        const w = await writevAt(fd, left, pos);
        pos += w;
        f.wrote(w);
        left = advance(left, w);
      }
      for (const p of patches) await writeAt(fd, p.buf, p.pos);
      if (cutTo >= 0)
        await new Promise<void>((res, rej) => ftruncate(fd, cutTo, (e) => (e ? rej(e) : res())));
      if (n > 0 || patches.length > 0 || cutTo >= 0) {
        if (this.options.syncAlways) await datasync(fd);
        else this.unsynced.add(f);
      }
      if (f.isNew) {
        f.isNew = false;
        this.dirsToSync.add(dirname(f.path));
      }
    } finally {
      f.busy--;
    }
  }

  private syncDirs(): void {
    const dirs = [...this.dirsToSync];
    this.dirsToSync.clear();
    for (const d of dirs) syncDir(d);
  }

  /** fsyncs every file written since the last sync (sync_interval, stop). */
  async syncAll(): Promise<void> {
    const files = [...this.unsynced];
    this.unsynced.clear();
    for (const f of files) {
      if (f.fd >= 0 && !f.dead) await datasync(f.fd);
    }
    this.syncDirs();
  }

  /** Writes, syncs and closes the files of one stream (stop). */
  async release(files: Iterable<LogFile>): Promise<void> {
    await this.flush();
    await this.idle();
    for (const f of files) {
      if (f.fd >= 0 && !f.dead && this.unsynced.has(f)) await datasync(f.fd);
      this.unsynced.delete(f);
      this.closeFile(f);
    }
    this.syncDirs();
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.flush().catch(() => undefined);
    await this.idle();
    await this.syncAll().catch(() => undefined);
    for (const f of [...this.openFiles]) this.closeFile(f);
  }
}

function advance(bufs: Buffer[], n: number): Buffer[] {
  let i = 0;
  while (i < bufs.length && n >= bufs[i]!.length) n -= bufs[i++]!.length;
  if (i === bufs.length) return [];
  const rest = bufs.slice(i);
  rest[0] = rest[0]!.subarray(n);
  return rest;
}

function writevAt(fd: number, bufs: Buffer[], pos: number): Promise<number> {
  return new Promise((resolve, reject) => {
    writev(fd, bufs, pos, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

function writeAt(fd: number, buf: Buffer, pos: number): Promise<void> {
  return new Promise((resolve, reject) => {
    write(fd, buf, 0, buf.length, pos, (err) => (err ? reject(err) : resolve()));
  });
}

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}

function unlinkQuietly(path: string): Promise<void> {
  return new Promise((resolve, reject) =>
    unlink(path, (err) => (err && err.code !== 'ENOENT' ? reject(err) : resolve())),
  );
}

/** fsync of a directory: makes creations, renames and removals in it durable. */
export function syncDir(dir: string): void {
  let fd = -1;
  try {
    fd = openSync(dir, constants.O_RDONLY);
    fsyncSync(fd);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

/** Writes a whole file and syncs it (before it is renamed over another). */
export function writeDurably(path: string, bytes: Buffer): void {
  const fd = openSync(path, 'w', 0o640);
  try {
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
