// The messages of one channel held in memory: a queue indexed by sequence - first,
// with max_msgs / max_bytes enforced on every store and max_age by a timer, as the
// reference's MemoryMsgStore does (msg-store-base.ts).
import type Long from 'long';
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

// Dropped slots are compacted away once they are this many and half the array.
const COMPACT_MIN = 1024;

export class MemoryMsgStore extends MsgStoreBase {
  /** msgs[head + (seq - first)] is message `seq`; slots before head are dropped. */
  private msgs: (StoredMsg | undefined)[] = [];
  private head = 0;

  constructor(
    channel: string,
    limits: ChannelLimits,
    private readonly ctx: MsgStoreContext,
  ) {
    super(channel, limits, ctx.isClosed, ctx.warn);
  }

  store(msg: StoredMsg): boolean {
    this.checkOpen();
    const seq = msg.sequence;
    if (!this.isNewSequence(seq)) return false;
    if (this.startsOver(seq)) {
      this.msgs = [];
      this.head = 0;
    }
    this.msgs.push(msg);
    this.added(seq, msg.encoded.length);
    this.ctx.onStored?.();
    return true;
  }

  lookup(sequence: number): StoredMsg | undefined {
    if (sequence < this.first || sequence > this.last) return undefined;
    return this.msgs[this.head + (sequence - this.first)];
  }

  empty(): void {
    this.reset();
    this.msgs = [];
    this.head = 0;
  }

  protected seekTimestamp(timestamp: Long): number {
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

  protected oldestTimestamp(): Long {
    return this.msgs[this.head]!.timestamp;
  }

  // Dropping a message moves first_seq; once all are gone first = last + 1.
  protected dropOldest(): void {
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
}
