// The messages of one channel held in memory: a queue indexed by sequence - first,
// with max_msgs / max_bytes enforced on every store and max_age by a timer, as the
// reference's MemoryMsgStore does.
import type Long from 'long';
import { MAX_SEQUENCE, millisToNanos, nowNanos } from '../protocol/int64.js';
import { StoreError } from './errors.js';
import type { ChannelLimits } from './limits.js';
import { droppingMsgsWarning } from './log.js';
import { startTimer } from './timers.js';
import type { MsgStore, StoredMsg } from './types.js';

/** What a channel's message store needs from its store. */
export interface MsgStoreContext {
  readonly isClosed: () => boolean;
  readonly warn: ((message: string) => void) | undefined;
  /** Called after each stored message (max_inactivity bookkeeping). */
  readonly onStored: (() => void) | undefined;
}

// Dropped slots are compacted away once they are this many and half the array.
const COMPACT_MIN = 1024;

export class MemoryMsgStore implements MsgStore {
  private first = 0;
  private last = 0;
  private total = 0;
  private size = 0;
  /** msgs[head + (seq - first)] is message `seq`; slots before head are dropped. */
  private msgs: (StoredMsg | undefined)[] = [];
  private head = 0;
  private ageTimer: NodeJS.Timeout | undefined;
  private readonly maxAgeNanos: Long | undefined;
  private hitLimit = false;

  constructor(
    private readonly channel: string,
    private readonly limits: ChannelLimits,
    private readonly ctx: MsgStoreContext,
  ) {
    this.maxAgeNanos = limits.maxAge > 0 ? millisToNanos(limits.maxAge) : undefined;
  }

  get firstSequence(): number {
    return this.first;
  }

  get lastSequence(): number {
    return this.last;
  }

  get count(): number {
    return this.total;
  }

  get bytes(): number {
    return this.size;
  }

  store(msg: StoredMsg): boolean {
    if (this.ctx.isClosed()) throw new StoreError('CLOSED');
    const seq = msg.sequence;
    if (seq <= this.last) return false;
    if (!Number.isSafeInteger(seq) || seq > MAX_SEQUENCE) {
      throw new StoreError('INVALID_SEQUENCE', `invalid sequence ${seq}`);
    }
    if (this.total === 0) {
      // Empty (never used, or everything expired): the channel may resume anywhere
      // after its last sequence, e.g. from a replicated snapshot.
      this.first = seq;
      this.msgs = [];
      this.head = 0;
    } else if (seq !== this.last + 1) {
      throw new StoreError('INVALID_SEQUENCE', `sequence ${seq} does not follow ${this.last}`);
    }
    this.msgs.push(msg);
    this.last = seq;
    this.total++;
    this.size += msg.encoded.length;
    if (this.maxAgeNanos !== undefined && this.ageTimer === undefined) this.scheduleExpiry();
    this.enforceCountAndSize();
    this.ctx.onStored?.();
    return true;
  }

  lookup(sequence: number): StoredMsg | undefined {
    if (sequence < this.first || sequence > this.last) return undefined;
    return this.msgs[this.head + (sequence - this.first)];
  }

  sequenceFromTimestamp(timestamp: Long): number {
    if (this.first === 0) return 0;
    if (this.total === 0) return this.last + 1;
    const msgs = this.msgs;
    if (timestamp.lessThanOrEqual(msgs[this.head]!.timestamp)) return this.first;
    if (timestamp.greaterThan(msgs[msgs.length - 1]!.timestamp)) return this.last + 1;
    // Timestamps never decrease within a channel: find the first one >= timestamp.
    let lo = this.head;
    let hi = msgs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (msgs[mid]!.timestamp.lessThan(timestamp)) lo = mid + 1;
      else hi = mid;
    }
    return this.first + (lo - this.head);
  }

  empty(): void {
    this.stopTimer();
    this.first = 0;
    this.last = 0;
    this.total = 0;
    this.size = 0;
    this.msgs = [];
    this.head = 0;
    this.hitLimit = false;
  }

  /** Stops the max_age timer (channel deleted or store closed). */
  stopTimer(): void {
    if (this.ageTimer !== undefined) clearTimeout(this.ageTimer);
    this.ageTimer = undefined;
  }

  // The newest message always stays, even when it alone exceeds max_bytes.
  private enforceCountAndSize(): void {
    const { maxMsgs, maxBytes } = this.limits;
    if (maxMsgs <= 0 && maxBytes <= 0) return;
    while (
      this.total > 1 &&
      ((maxMsgs > 0 && this.total > maxMsgs) || (maxBytes > 0 && this.size > maxBytes))
    ) {
      this.removeFirst();
      if (!this.hitLimit) {
        this.hitLimit = true;
        this.ctx.warn?.(
          droppingMsgsWarning(this.channel, this.total, maxMsgs, this.size, maxBytes),
        );
      }
    }
  }

  // Dropping a message moves first_seq; once all are gone first = last + 1.
  private removeFirst(): void {
    const msg = this.msgs[this.head]!;
    this.msgs[this.head] = undefined;
    this.head++;
    this.first++;
    this.total--;
    this.size -= msg.encoded.length;
    if (this.head >= COMPACT_MIN && this.head * 2 >= this.msgs.length) {
      this.msgs.splice(0, this.head);
      this.head = 0;
    }
  }

  private scheduleExpiry(): void {
    const oldest = this.msgs[this.head]!;
    const waitNanos = oldest.timestamp.add(this.maxAgeNanos!).subtract(nowNanos());
    this.ageTimer = startTimer(waitNanos.toNumber() / 1e6, () => {
      this.expire();
    });
  }

  private expire(): void {
    this.ageTimer = undefined;
    if (this.ctx.isClosed() || this.maxAgeNanos === undefined) return;
    const now = nowNanos();
    while (this.total > 0) {
      const oldest = this.msgs[this.head]!;
      if (oldest.timestamp.add(this.maxAgeNanos).greaterThan(now)) {
        this.scheduleExpiry();
        return;
      }
      this.removeFirst();
    }
  }
}
