// The messages of one channel held in memory: a ring indexed by sequence - first,
// with max_msgs / max_bytes enforced on every store and max_age by a timer, as the
// reference's MemoryMsgStore does (msg-store-base.ts).
//
// A message is kept as columns, not as the StoredMsg it came in: its bytes' buffer,
// offset and length and its timestamp's two halves. A StoredMsg, its Long and its
// Buffer view are three objects of some 150 bytes that every stored message kept
// alive, and that each young-generation collection copied (twice, before they reached
// the old generation): under stan-pub the scavenges grew to tens of milliseconds and
// a fifth of the server's time. lookup() makes them again, for the moment they are used.
import Long from 'long';
import type { ChannelLimits } from './limits.js';
import { MsgStoreBase } from './msg-store-base.js';
import type { StoredMsg } from './types.js';

/** What a channel's message store needs from its store. */
export interface MsgStoreContext {
  readonly isClosed: () => boolean;
  readonly warn: ((message: string) => void) | undefined;
  /** Called after each stored message (max_inactivity bookkeeping). */
  readonly onStored: (() => void) | undefined;
}

const MIN_CAPACITY = 64;

/** A message as lookup() gives it: deliveries read only its bytes, so its Long is made when asked. */
class HeldMsg implements StoredMsg {
  constructor(
    readonly sequence: number,
    readonly encoded: Buffer,
    private readonly low: number,
    private readonly high: number,
  ) {}

  get timestamp(): Long {
    return Long.fromBits(this.low, this.high);
  }
}

export class MemoryMsgStore extends MsgStoreBase {
  // Message `first + k` is in slot (head + k) & mask of every column. A message's
  // buffer is the slab it was written into (shared by many), or a Buffer over the
  // whole ArrayBuffer of a message stored as a view; its offset is within that buffer.
  // The column holds the buffer's number in `held buffers`, not the buffer: a column
  // of a million references is what every full collection traced (a tenth of the
  // server's time under stan-pub at the default limits), a typed array is not traced.
  private bufferIds = new Int32Array(0);
  private readonly heldBuffers = new HeldBuffers();
  private offsets = new Float64Array(0);
  private lengths = new Int32Array(0);
  private tsLow = new Int32Array(0);
  private tsHigh = new Int32Array(0);
  private mask = -1;
  private head = 0;
  private held = 0;

  constructor(
    channel: string,
    limits: ChannelLimits,
    private readonly ctx: MsgStoreContext,
  ) {
    super(channel, limits, ctx.isClosed, ctx.warn);
    this.rangeStart = 0;
    this.rangeEnd = 0;
  }

  /** Whole-ArrayBuffer Buffers by their ArrayBuffer, for store(): the last one made. */
  private lastArrayBuffer: ArrayBufferLike | null = null;
  private lastWhole: Buffer | null = null;
  /** Where bytesOf() found its message. */
  // -1 until the constructor: written twice, variables to V8 from the start (their
  // first change in bytesOf() threw away the delivery code that read them).
  rangeStart = -1;
  rangeEnd = -1;

  store(msg: StoredMsg): boolean {
    const encoded = msg.encoded;
    const ab = encoded.buffer;
    // Keeping the view would keep an object per message alive; messages encoded one
    // after the other mostly share an ArrayBuffer (Node's pool, a slab).
    if (ab !== this.lastArrayBuffer) {
      this.lastArrayBuffer = ab;
      this.lastWhole = Buffer.from(ab);
    }
    const ts = msg.timestamp;
    return this.put(
      msg.sequence,
      ts.low,
      ts.high,
      this.lastWhole!,
      encoded.byteOffset,
      encoded.byteOffset + encoded.length,
    );
  }

  storeRange(
    sequence: number,
    tsLow: number,
    tsHigh: number,
    buf: Buffer,
    start: number,
    end: number,
  ): boolean {
    return this.put(sequence, tsLow, tsHigh, buf, start, end);
  }

  private put(
    seq: number,
    tsLow: number,
    tsHigh: number,
    buf: Buffer,
    start: number,
    end: number,
  ): boolean {
    this.checkOpen();
    if (!this.isNewSequence(seq)) return false;
    if (this.startsOver(seq)) this.clear();
    if (this.held === this.mask + 1) this.resize(Math.max(MIN_CAPACITY, this.held * 2));
    const slot = (this.head + this.held) & this.mask;
    this.bufferIds[slot] = this.heldBuffers.add(buf);
    this.offsets[slot] = start;
    this.lengths[slot] = end - start;
    this.tsLow[slot] = tsLow;
    this.tsHigh[slot] = tsHigh;
    this.held++;
    // After the columns: added() may drop the oldest to keep the limits.
    this.added(seq, end - start);
    this.ctx.onStored?.();
    return true;
  }

  lookup(sequence: number): StoredMsg | undefined {
    const buf = this.bytesOf(sequence);
    if (buf === undefined) return undefined;
    const slot = (this.head + (sequence - this.first)) & this.mask;
    return new HeldMsg(
      sequence,
      buf.subarray(this.rangeStart, this.rangeEnd),
      this.tsLow[slot]!,
      this.tsHigh[slot]!,
    );
  }

  bytesOf(sequence: number): Buffer | undefined {
    if (sequence < this.first || sequence > this.last || this.held === 0) return undefined;
    const slot = (this.head + (sequence - this.first)) & this.mask;
    // A Float64Array element is read as a heap number even when whole: as a small
    // integer while it fits (every offset but in a buffer past 2 GB), so that the range
    // does not turn the delivery path's offset fields into doubles (wire.ts).
    const offset = this.offsets[slot]!;
    const start = offset <= 0x7fff_ffff ? offset | 0 : offset;
    this.rangeStart = start;
    this.rangeEnd = start + this.lengths[slot]!;
    return this.heldBuffers.get(this.bufferIds[slot]!);
  }

  empty(): void {
    this.reset();
    this.clear();
  }

  protected seekTimestamp(timestamp: Long): number {
    if (this.compareAt(0, timestamp) >= 0) return this.first;
    if (this.compareAt(this.held - 1, timestamp) < 0) return this.last + 1;
    // Timestamps never decrease within a channel: find the first one >= timestamp.
    let lo = 0;
    let hi = this.held - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareAt(mid, timestamp) < 0) lo = mid + 1;
      else hi = mid;
    }
    return this.first + lo;
  }

  protected oldestTimestamp(): Long {
    return Long.fromBits(this.tsLow[this.head]!, this.tsHigh[this.head]!);
  }

  // Dropping a message moves first_seq; once all are gone first = last + 1.
  protected dropOldest(): void {
    const slot = this.head;
    this.heldBuffers.release(this.bufferIds[slot]!);
    this.size -= this.lengths[slot]!;
    this.head = (slot + 1) & this.mask;
    this.held--;
    this.first++;
    this.total--;
    // A channel that limits or expiry emptied does not keep the columns of its peak.
    const capacity = this.mask + 1;
    if (capacity > MIN_CAPACITY && this.held * 4 < capacity) this.resize(capacity / 2);
  }

  /** The timestamp of the k-th message held against `t`: negative, zero or positive. */
  private compareAt(k: number, t: Long): number {
    const slot = (this.head + k) & this.mask;
    const high = this.tsHigh[slot]!;
    if (high !== t.high) return high < t.high ? -1 : 1;
    const low = this.tsLow[slot]! >>> 0;
    const tLow = t.low >>> 0;
    return low === tLow ? 0 : low < tLow ? -1 : 1;
  }

  /** `capacity` slots (a power of two), the messages held moved to the front in order. */
  private resize(capacity: number): void {
    const bufferIds = new Int32Array(capacity);
    const offsets = new Float64Array(capacity);
    const lengths = new Int32Array(capacity);
    const tsLow = new Int32Array(capacity);
    const tsHigh = new Int32Array(capacity);
    for (let k = 0; k < this.held; k++) {
      const slot = (this.head + k) & this.mask;
      bufferIds[k] = this.bufferIds[slot]!;
      offsets[k] = this.offsets[slot]!;
      lengths[k] = this.lengths[slot]!;
      tsLow[k] = this.tsLow[slot]!;
      tsHigh[k] = this.tsHigh[slot]!;
    }
    this.bufferIds = bufferIds;
    this.offsets = offsets;
    this.lengths = lengths;
    this.tsLow = tsLow;
    this.tsHigh = tsHigh;
    this.mask = capacity - 1;
    this.head = 0;
  }

  private clear(): void {
    this.bufferIds = new Int32Array(0);
    this.heldBuffers.clear();
    this.offsets = new Float64Array(0);
    this.lengths = new Int32Array(0);
    this.tsLow = new Int32Array(0);
    this.tsHigh = new Int32Array(0);
    this.mask = -1;
    this.head = 0;
    this.held = 0;
  }
}

/**
 * The buffers messages are held in, by number, each with the count of messages in it:
 * a buffer is let go when its last message is dropped. Messages arrive in runs that
 * share a buffer (a slab), so the last one added is compared first.
 */
class HeldBuffers {
  private buffers: (Buffer | undefined)[] = [];
  private counts: number[] = [];
  private readonly free: number[] = [];
  private last: Buffer | undefined = undefined;
  private lastId = -1;

  add(buf: Buffer): number {
    let id = this.lastId;
    if (buf !== this.last) {
      id = this.free.length > 0 ? this.free.pop()! : this.buffers.length;
      this.buffers[id] = buf;
      this.counts[id] = 0;
      this.last = buf;
      this.lastId = id;
    }
    this.counts[id]!++;
    return id;
  }

  get(id: number): Buffer | undefined {
    return this.buffers[id];
  }

  release(id: number): void {
    if (--this.counts[id]! > 0) return;
    this.buffers[id] = undefined;
    this.free.push(id);
    if (id === this.lastId) {
      this.last = undefined;
      this.lastId = -1;
    }
  }

  clear(): void {
    this.buffers = [];
    this.counts = [];
    this.free.length = 0;
    this.last = undefined;
    this.lastId = -1;
  }
}
