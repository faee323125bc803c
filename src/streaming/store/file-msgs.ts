// The messages of one channel in the FILE store: an append-only log in slices
// (file-slice.ts), a ring of recently stored messages for delivery, read-ahead blocks
// for subscriptions that catch up, and the limits of the reference (max_msgs and
// max_bytes on every store, max_age by a timer: msg-store-base.ts). Limits drop
// leading messages one by one, or a whole slice at once when all of it must go; a
// slice whose messages are all gone is deleted (except the last, whose records still
// tell the last sequence).
import { unlink } from 'node:fs/promises';
import Long from 'long';
import { nowNanos } from '../protocol/int64.js';
import type { IoScheduler } from './file-io.js';
import type { StoreFile } from './file-pool.js';
import type { FileStoreTuning, SliceLimits } from './file-options.js';
import {
  blockEnd,
  isWhole,
  msgAt,
  ReadMsg,
  readBlock,
  type ReadBlock,
  releaseBlock,
} from './file-read.js';
import { MSG_OVERHEAD, RECORD_HEADER_SIZE } from './file-record.js';
import { compareTs, Slice } from './file-slice.js';
import type { ChannelLimits } from './limits.js';
import { MsgStoreBase } from './msg-store-base.js';
import type { StoredMsg } from './types.js';
import { archiveSlice } from './file-archive.js';
import type { Crc32 } from './file-record.js';

export interface FileMsgContext {
  readonly isClosed: () => boolean;
  readonly warn: (text: string) => void;
  readonly onStored: (() => void) | undefined;
  readonly io: IoScheduler;
  readonly tuning: FileStoreTuning;
  readonly sliceLimits: SliceLimits;
  readonly crc: Crc32;
  readonly cache: CacheBudget;
}

/**
 * The read caches of all channels of one store together: at most CACHE_CHANNELS
 * times cacheBytes (64 MiB by default), so a server with many busy channels does not
 * keep 16 MiB for each. A channel that stores past the total forgets its own oldest.
 */
export class CacheBudget {
  bytes = 0;
  readonly limit: number;
  constructor(cacheBytes: number) {
    this.limit = cacheBytes * CACHE_CHANNELS;
  }
}

const CACHE_CHANNELS = 4;

/** What recovery found for a channel. */
export interface RecoveredMsgs {
  readonly slices: Slice[];
  readonly first: number;
  readonly nextNum: number;
}

const RING_MIN = 1024;
const RING_MAX = 65536;
const READ_BLOCKS = 4;
// Blocks read ahead of the one being delivered: a read that is slow to come back (a
// busy thread pool or disk) still has a whole block's delivery to finish in.
const READ_AHEAD = 2;
const RESIDENT_EXTRA = 2;
// Offsets are kept below what a Buffer can address, so any slice can be read back
// with one positioned read per record, whatever slice_max_bytes says.
const HARD_SLICE_BYTES = 2 ** 31 - 2 ** 26;

export class FileMsgStore extends MsgStoreBase {
  private slices: Slice[];
  private nextNum: number;
  // Recently stored messages, seq in [ringFirst, last], as columns indexed by
  // seq & mask: the buffer holding the marshaled bytes, their offset and length, the
  // timestamp's halves. Not the StoredMsg objects: a StoredMsg, its Long and its view
  // are some 150 bytes per message that every young-generation collection copied
  // until they reached the old generation (scavenges were 0.5 us of each stored
  // message under stan-pub); lookup() makes one for the moment it is used.
  private ringBufs: (ArrayBufferLike | undefined)[] = new Array<ArrayBufferLike | undefined>(
    RING_MIN,
  );
  private ringOffsets = new Float64Array(RING_MIN);
  private ringLengths = new Int32Array(RING_MIN);
  private ringTsLow = new Int32Array(RING_MIN);
  private ringTsHigh = new Int32Array(RING_MIN);
  private mask = RING_MIN - 1;
  private ringFirst = 1;
  private ringCount = 0;
  private ringBytes = 0;
  private blocks: ReadBlock[] = [];
  private reads: BlockRead[] = [];
  private useClock = 0;
  private readonly used = new WeakMap<Slice, number>();
  private deleted = false;

  constructor(
    channel: string,
    readonly dir: string,
    limits: ChannelLimits,
    private readonly ctx: FileMsgContext,
    recovered: RecoveredMsgs | undefined,
  ) {
    super(channel, limits, ctx.isClosed, ctx.warn);
    this.rangeStart = 0;
    this.rangeEnd = 0;
    this.slices = recovered?.slices ?? [];
    this.nextNum = recovered?.nextNum ?? 1;
    const tail = this.slices[this.slices.length - 1];
    if (tail !== undefined) {
      this.last = tail.lastSeq;
      // The ring holds what is stored from now on.
      this.ringFirst = this.last + 1;
      this.first = Math.min(Math.max(recovered!.first, this.slices[0]!.firstSeq), this.last + 1);
      for (const s of this.slices) this.size += s.liveBytes;
      this.total = this.countLive();
      this.enforceCountAndSize();
      this.preloadHeads();
      if (this.maxAgeNanos !== undefined && this.total > 0) this.expire();
    }
  }

  /** Messages and payload bytes held by the read cache (tests and monitoring). */
  get cached(): { readonly msgs: number; readonly bytes: number } {
    return { msgs: this.ringCount, bytes: this.ringBytes };
  }

  /** Blocks read back from disk, held or being read (tests). */
  get readBlocks(): number {
    return this.blocks.length + this.reads.length;
  }

  /** Slices on disk (tests and monitoring). */
  get sliceCount(): number {
    return this.slices.length;
  }

  store(msg: StoredMsg): boolean {
    const e = msg.encoded;
    const ts = msg.timestamp;
    const src = Buffer.isBuffer(e) ? e : Buffer.from(e.buffer, e.byteOffset, e.byteLength);
    return this.storeRange(msg.sequence, ts.low, ts.high, src, 0, src.length);
  }

  /**
   * The publish path's store(): the message is `buf[start, end)`, kept as given (the
   * read cache refers to it), with no StoredMsg, Long or view made for it.
   */
  storeRange(
    seq: number,
    tsLow: number,
    tsHigh: number,
    buf: Buffer,
    start: number,
    end: number,
  ): boolean {
    this.checkOpen();
    // After a write error nothing is durable any more: refuse rather than pile up.
    if (this.ctx.io.failure !== undefined) throw this.ctx.io.failure;
    if (!this.isNewSequence(seq)) return false;
    let tail = this.slices[this.slices.length - 1];
    if (this.startsOver(seq)) {
      // Every message of the tail is dropped: it is kept only if this one continues it.
      if (tail !== undefined && (seq !== this.last + 1 || tail.count === 0)) {
        this.dropSlice(tail);
        tail = undefined;
      }
      this.clearRing();
      this.ringFirst = seq;
    }
    if (tail === undefined || this.isFull(tail)) {
      tail = this.newSlice();
    }
    // As int32 halves, as the slices and the ring keep them (callers give either form).
    const low = tsLow | 0;
    const high = tsHigh | 0;
    tail.append(seq, low, high, buf, start, end);
    this.remember(seq, buf.buffer, buf.byteOffset + start, end - start, low, high);
    this.added(seq, end - start + MSG_OVERHEAD);
    this.ctx.onStored?.();
    return true;
  }

  lookup(sequence: number): StoredMsg | undefined | Promise<StoredMsg | undefined> {
    if (sequence < this.first || sequence > this.last || this.total === 0) return undefined;
    if (sequence >= this.ringFirst && this.ringCount > 0) {
      const i = sequence & this.mask;
      return new ReadMsg(
        sequence,
        Buffer.from(this.ringBufs[i]!, this.ringOffsets[i], this.ringLengths[i]),
        this.ringTsLow[i]!,
        this.ringTsHigh[i]!,
      );
    }
    for (const b of this.blocks) {
      const i = sequence - b.from;
      if (i >= 0 && i < b.count) {
        // A block read ahead is now being delivered: the next one is read meanwhile,
        // so a subscription catching up never waits for a read it could have started.
        if (i === 0 && isWhole(b)) this.readAhead(b.to + 1);
        return msgAt(b, sequence);
      }
    }
    const slice = this.sliceOf(sequence);
    if (slice === undefined) return undefined;
    return this.readFrom(slice, sequence);
  }

  /** Where bytesOf() found its message. */
  // -1 until the constructor: written twice, variables to V8 from the start (their
  // first change in bytesOf() threw away the delivery code that read them).
  rangeStart = -1;
  rangeEnd = -1;
  /** A Buffer over the whole ArrayBuffer of the cache's last message sent (bytesOf). */
  private wholeOf: ArrayBufferLike | undefined = undefined;
  private whole: Buffer | undefined = undefined;

  /**
   * lookup() for a delivery, without a message object or a view per message (a
   * catch-up sends hundreds of thousands): the bytes where the cache or a block read
   * back holds them; null when neither does (lookup() reads them).
   */
  bytesOf(sequence: number): Buffer | undefined | null {
    if (sequence < this.first || sequence > this.last || this.total === 0) return undefined;
    if (sequence >= this.ringFirst && this.ringCount > 0) {
      const i = sequence & this.mask;
      const ab = this.ringBufs[i]!;
      // Messages stored one after the other share a slab: one Buffer per slab.
      if (ab !== this.wholeOf) {
        this.wholeOf = ab;
        this.whole = Buffer.from(ab);
      }
      // A Float64Array element is read as a heap number even when whole: as a small
      // integer while it fits, or the first delivery from the cache turns the delivery
      // path's offset fields (the outbound layout's, the connection's) into doubles and
      // throws away their compiled code (as in memory-msgs.ts).
      const offset = this.ringOffsets[i]!;
      const start = offset <= 0x7fff_ffff ? offset | 0 : offset;
      this.rangeStart = start;
      this.rangeEnd = start + this.ringLengths[i]!;
      return this.whole!;
    }
    const blocks = this.blocks;
    for (let n = 0; n < blocks.length; n++) {
      const b = blocks[n]!;
      const i = sequence - b.from;
      if (i >= 0 && i < b.count) {
        if (i === 0 && isWhole(b)) this.readAhead(b.to + 1);
        this.rangeStart = b.starts[i]!;
        this.rangeEnd = b.starts[i + 1]! - RECORD_HEADER_SIZE;
        return b.buf;
      }
    }
    return null;
  }

  protected seekTimestamp(timestamp: Long): number | Promise<number> {
    const { high, low } = timestamp;
    // Slices are in time order: the first whose last message is not older holds it.
    let lo = this.headIndex();
    let hi = this.slices.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.slices[mid]!;
      if (compareTs(s.lastTsHigh, s.lastTsLow, high, low) < 0) lo = mid + 1;
      else hi = mid;
    }
    const slice = this.slices[lo];
    if (slice === undefined) return this.last + 1;
    const from = Math.max(this.first, slice.firstSeq);
    if (compareTs(slice.firstTsHigh, slice.firstTsLow, high, low) >= 0) return from;
    if (slice.index !== undefined) return slice.seqAtOrAfter(from, high, low);
    return this.loadIndex(slice).then(() => slice.seqAtOrAfter(from, high, low));
  }

  empty(): void {
    this.reset();
    for (const s of this.slices.splice(0)) this.dropSlice(s);
    this.clearRing();
    this.blocks = [];
  }

  /** The channel is deleted: queued file work on its (old) paths is skipped. */
  markDeleted(): void {
    this.deleted = true;
    this.stopTimer();
    this.clearRing();
  }

  /** Every file of the log, for a channel deletion. */
  files(): StoreFile[] {
    return this.slices.flatMap((s) => [s.dat, s.idx]);
  }

  // ---- slices ------------------------------------------------------------------

  // The reference's test, before each store: the slice is full once it holds the
  // limit (messages, or bytes counted as +40 each, dropped ones included) or its
  // first message is that old.
  private isFull(tail: Slice): boolean {
    if (tail.count === 0) return false;
    const l = this.ctx.sliceLimits;
    return (
      (l.maxMsgs > 0 && tail.count >= l.maxMsgs) ||
      (l.maxBytes > 0 && tail.totalBytes >= l.maxBytes) ||
      tail.dat.size >= HARD_SLICE_BYTES ||
      (l.maxAge > 0 && Date.now() - tail.createdAt >= l.maxAge)
    );
  }

  private newSlice(): Slice {
    const slice = new Slice(this.nextNum++, this.dir, this.ctx.io, 0, 0, this.ctx.crc);
    this.slices.push(slice);
    this.trimResident();
    return slice;
  }

  /** Removes a slice's files (after the writes already queued). */
  private dropSlice(slice: Slice): void {
    const i = this.slices.indexOf(slice);
    if (i >= 0) this.slices.splice(i, 1);
    this.blocks = this.blocks.filter((b) => b.slice !== slice);
    slice.dat.dead = true;
    slice.idx.dead = true;
    const io = this.ctx.io;
    io.addTask(async () => {
      // A deleted channel's directory was renamed away: its path may be a new
      // channel's by now, and the whole old directory is removed anyway.
      if (this.deleted) return;
      try {
        for (const f of [slice.dat, slice.idx]) await io.pool.close(f);
        const script = this.ctx.tuning.sliceArchiveScript;
        if (script === '' || !(await archiveSlice(script, this.channel, slice, this.ctx.warn))) {
          for (const f of [slice.dat, slice.idx]) await unlinkQuietly(f.path);
        }
        io.dirChanged(this.dir);
      } catch (err) {
        // Housekeeping: a slice left behind is removed at the next start.
        this.ctx.warn(`file store: cannot remove ${slice.dat.path}: ${String(err)}`);
      }
    });
  }

  private sliceOf(seq: number): Slice | undefined {
    let lo = 0;
    let hi = this.slices.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.slices[mid]!;
      if (seq < s.firstSeq) hi = mid - 1;
      else if (seq > s.lastSeq) lo = mid + 1;
      else return s;
    }
    return undefined;
  }

  /** Index of the slice holding `first` (the head), 0 if none. */
  private headIndex(): number {
    const head = this.slices[0];
    return head !== undefined && this.first > head.lastSeq && this.slices.length > 1 ? 1 : 0;
  }

  private countLive(): number {
    let n = 0;
    for (const s of this.slices) n += s.lastSeq - Math.max(s.firstSeq, this.first) + 1;
    return Math.max(0, n);
  }

  private async loadIndex(slice: Slice): Promise<Buffer> {
    const index = await slice.loadIndex();
    this.used.set(slice, ++this.useClock);
    this.trimResident();
    return index;
  }

  // The indexes of the head, of the slice after it (the next head: limits read it
  // without waiting) and of the tail stay in memory; of the others, the RESIDENT_EXTRA
  // most recently used. No copy or sort: evicts the least recently used until few
  // enough remain (the list is short, and this runs per slice, not per message).
  private trimResident(): void {
    const slices = this.slices;
    const end = slices.length - 1;
    let resident = 0;
    for (let i = 2; i < end; i++) if (slices[i]!.index !== undefined) resident++;
    while (resident > RESIDENT_EXTRA) {
      let oldest: Slice | undefined;
      let oldestUse = Infinity;
      for (let i = 2; i < end; i++) {
        const s = slices[i]!;
        if (s.index === undefined || s.loading !== undefined || s.hasUnwrittenIndex) continue;
        const use = this.used.get(s) ?? 0;
        if (use < oldestUse) {
          oldestUse = use;
          oldest = s;
        }
      }
      if (oldest === undefined || !oldest.evictIndex()) return;
      resident--;
    }
  }

  // A new head (or next head) whose index was evicted or never loaded (recovery) is
  // read ahead, off the event loop, so removals by limits rarely find it missing.
  private preloadHeads(): void {
    for (let i = 0; i < 2 && i < this.slices.length; i++) {
      const s = this.slices[i]!;
      if (s.index === undefined && s.loading === undefined) {
        s.loadIndex().catch(() => undefined);
      }
    }
  }

  /** Drops from the read cache the messages that limits removed. */
  private forgetRemoved(): void {
    while (this.ringCount > 0 && this.ringFirst < this.first) this.forgetOldest();
  }

  // ---- reads -------------------------------------------------------------------

  private remember(
    seq: number,
    bytes: ArrayBufferLike,
    offset: number,
    n: number,
    tsLow: number,
    tsHigh: number,
  ): void {
    if (this.ringCount > this.mask) {
      if (this.mask + 1 < RING_MAX) this.growRing();
      else this.forgetOldest();
    }
    const i = seq & this.mask;
    this.ringBufs[i] = bytes;
    this.ringOffsets[i] = offset;
    this.ringLengths[i] = n;
    this.ringTsLow[i] = tsLow;
    this.ringTsHigh[i] = tsHigh;
    this.ringCount++;
    this.ringBytes += n;
    const cache = this.ctx.cache;
    cache.bytes += n;
    const max = this.ctx.tuning.cacheBytes;
    while ((this.ringBytes > max || cache.bytes > cache.limit) && this.ringCount > 1) {
      this.forgetOldest();
    }
  }

  private forgetOldest(): void {
    const i = this.ringFirst & this.mask;
    const n = this.ringLengths[i]!;
    this.ringBytes -= n;
    this.ctx.cache.bytes -= n;
    this.ringBufs[i] = undefined;
    this.ringFirst++;
    this.ringCount--;
  }

  private clearRing(): void {
    this.wholeOf = undefined;
    this.whole = undefined;
    this.ctx.cache.bytes -= this.ringBytes;
    this.ringBytes = 0;
    this.ringCount = 0;
    this.ringBufs.fill(undefined);
  }

  private growRing(): void {
    const size = (this.mask + 1) * 2;
    const bufs = new Array<ArrayBufferLike | undefined>(size);
    const offsets = new Float64Array(size);
    const lengths = new Int32Array(size);
    const tsLow = new Int32Array(size);
    const tsHigh = new Int32Array(size);
    for (let s = this.ringFirst; s < this.ringFirst + this.ringCount; s++) {
      const from = s & this.mask;
      const to = s & (size - 1);
      bufs[to] = this.ringBufs[from];
      offsets[to] = this.ringOffsets[from]!;
      lengths[to] = this.ringLengths[from]!;
      tsLow[to] = this.ringTsLow[from]!;
      tsHigh[to] = this.ringTsHigh[from]!;
    }
    this.ringBufs = bufs;
    this.ringOffsets = offsets;
    this.ringLengths = lengths;
    this.ringTsLow = tsLow;
    this.ringTsHigh = tsHigh;
    this.mask = size - 1;
  }

  private async readFrom(slice: Slice, seq: number, ahead = false): Promise<StoredMsg | undefined> {
    for (const r of this.reads) {
      if (r.slice === slice && seq >= r.from && seq <= r.to) {
        const b = await r.done;
        return seq - b.from < b.count ? msgAt(b, seq) : undefined;
      }
    }
    if (slice.index === undefined) await this.loadIndex(slice);
    const t = this.ctx.tuning;
    const to = blockEnd(slice, seq, t.readBufferSize);
    const done = readBlock(
      this.ctx.io,
      slice,
      seq,
      to,
      t.crc ? this.ctx.crc : undefined,
      this.ctx.warn,
      t.readBufferSize,
    );
    // Lookups of the following messages wait for this read instead of starting theirs.
    const entry = new BlockRead(slice, seq, to, done);
    this.reads.push(entry);
    // A subscription starting to catch up: the blocks after this one are read at the
    // same time (the thread pool has threads to spare), not once this one is back,
    // which left delivery waiting for the second block after the first was sent.
    if (!ahead) this.readAhead(to + 1);
    let block: ReadBlock;
    try {
      block = await done;
    } finally {
      this.reads.splice(this.reads.indexOf(entry), 1);
    }
    if (!slice.dat.dead) {
      this.blocks.unshift(block);
      // Sent from synchronously only (bytesOf), copied by lookup(): the oldest block's
      // buffer serves a block read later.
      if (this.blocks.length > READ_BLOCKS) releaseBlock(this.blocks.pop()!, t.readBufferSize);
      // A subscription catching up reads on: the next blocks are read while this one
      // is delivered (READ_AHEAD blocks ahead, started above; a block read ahead reads
      // on when its first message is looked up, see lookup()).
    }
    return block.count > 0 ? msgAt(block, seq) : undefined;
  }

  /** Starts reading the READ_AHEAD blocks from `seq` on that are neither read nor being read. */
  private readAhead(seq: number): void {
    for (let n = 0; n < READ_AHEAD; n++) {
      if (seq > this.last || (this.ringCount > 0 && seq >= this.ringFirst)) return;
      const slice = this.sliceOf(seq) ?? this.slices.find((s) => s.firstSeq > seq);
      if (slice === undefined) return;
      const from = Math.max(seq, slice.firstSeq);
      if (!this.isRead(slice, from)) this.readFrom(slice, from, true).catch(() => undefined);
      // Where the next block starts is known once the slice's index is.
      if (slice.index === undefined) return;
      seq = blockEnd(slice, from, this.ctx.tuning.readBufferSize) + 1;
    }
  }

  private isRead(slice: Slice, seq: number): boolean {
    for (const b of this.blocks) if (seq >= b.from && seq < b.from + b.count) return true;
    for (const r of this.reads) if (r.slice === slice && seq >= r.from && seq <= r.to) return true;
    return false;
  }

  // ---- limits ------------------------------------------------------------------

  // All of the head slice would go one by one: drop it whole, without reading its index.
  protected override dropOverLimit(): void {
    const { maxMsgs, maxBytes } = this.limits;
    const head = this.slices[0]!;
    const headLive = head.lastSeq - this.first + 1;
    if (
      this.slices.length > 1 &&
      headLive < this.total &&
      ((maxMsgs > 0 && this.total - headLive >= maxMsgs) ||
        (maxBytes > 0 && this.size - head.liveBytes >= maxBytes))
    ) {
      this.dropHead(head, headLive);
    } else {
      this.dropOldest();
    }
  }

  private dropHead(head: Slice, live: number): void {
    this.total -= live;
    this.size -= head.liveBytes;
    this.dropSlice(head);
    this.first = this.slices[0]!.firstSeq;
    this.forgetRemoved();
    this.preloadHeads();
  }

  // Dropping a message moves first_seq; once all are gone first = last + 1.
  protected dropOldest(): void {
    const head = this.slices[0]!;
    // Normally resident (kept, or read ahead when it became the head); read here only
    // when the read ahead has not finished yet (just after recovery).
    if (head.index === undefined) head.loadIndexSync();
    const bytes = head.sizeOf(this.first) + MSG_OVERHEAD;
    this.first++;
    this.total--;
    this.size -= bytes;
    head.liveBytes -= bytes;
    if (this.ringCount > 0 && this.ringFirst < this.first) this.forgetOldest();
    if (this.first > head.lastSeq && this.slices.length > 1) {
      this.dropSlice(head);
      this.first = this.slices[0]!.firstSeq;
      this.forgetRemoved();
      this.preloadHeads();
    }
  }

  private headTs(): { high: number; low: number } {
    const head = this.slices[0]!;
    if (this.first > head.lastSeq) return { high: head.lastTsHigh, low: head.lastTsLow };
    if (head.index === undefined) head.loadIndexSync();
    return { high: head.tsHighOf(this.first), low: head.tsLowOf(this.first) };
  }

  protected oldestTimestamp(): Long {
    const { high, low } = this.headTs();
    return Long.fromBits(low, high);
  }

  // As the base's, but a whole slice goes at once when all of its messages are expired
  // (without reading its index), and timestamps are compared as the int64 halves the
  // slices keep, without a Long per message.
  protected override expire(): void {
    const cutoff = nowNanos().subtract(this.maxAgeNanos!);
    while (this.total > 0) {
      const head = this.slices[0]!;
      const live = head.lastSeq - this.first + 1;
      if (
        this.slices.length > 1 &&
        live < this.total &&
        compareTs(head.lastTsHigh, head.lastTsLow, cutoff.high, cutoff.low) <= 0
      ) {
        this.dropHead(head, live);
        continue;
      }
      const { high, low } = this.headTs();
      if (compareTs(high, low, cutoff.high, cutoff.low) > 0) {
        this.scheduleExpiry();
        return;
      }
      this.dropOldest();
    }
  }
}

/** A block being read (a class: see file-read.ts, Block). */
class BlockRead {
  constructor(
    readonly slice: Slice,
    readonly from: number,
    readonly to: number,
    readonly done: Promise<ReadBlock>,
  ) {}
}

async function unlinkQuietly(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
