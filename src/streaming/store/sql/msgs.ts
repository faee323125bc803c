// The messages of one channel in the SQL store. Writes are synchronous and visible
// at once: the message is kept in `recent` (every message not yet committed, plus
// the newest committed ones: what live subscribers read next) and the next batch
// writes what was stored since the last one as blocks: one wb_msg_blocks row holds
// up to BLOCK_MAX consecutive messages (their bytes concatenated, with their sizes
// and timestamps), so a batch of a thousand publishes is one row, not a thousand:
// PostgreSQL's cost is per row far more than per byte.
//
// Older messages are read back a block at a time, with read-ahead, for subscribers
// catching up. Limits work on the in-memory MsgIndex, as the memory store's do;
// blocks entirely below first_seq are deleted in the next batch (a block partly
// below it stays until its last message goes: the channel row's first_seq, written
// in the same transaction, says where the channel starts).
import type Long from 'long';
import { MAX_SEQUENCE, millisToNanos, nowNanos } from '../../protocol/int64.js';
import { StoreError } from '../errors.js';
import type { ChannelLimits } from '../limits.js';
import { droppingMsgsWarning } from '../log.js';
import { startTimer } from '../timers.js';
import type { MsgStore, StoredMsg } from '../types.js';
import { int, long } from './literal.js';
import { MsgIndex } from './msg-index.js';

/** Committed messages kept in memory per channel: at most this many, and bytes. */
const RECENT_MAX = 4096;
const RECENT_MAX_BYTES = 4 * 1024 * 1024;
/** Sequences fetched by one read. */
const READ_AHEAD = 512;
/** Messages and bytes in one block at most (bounds what a read fetches for one message). */
export const BLOCK_MAX = 1024;
const BLOCK_MAX_BYTES = 1024 * 1024;
/** Read-ahead cache entries per channel before it is cleared. */
const CACHE_MAX = 4 * READ_AHEAD;

export interface SqlMsgContext {
  readonly isClosed: () => boolean;
  /** Why the database cannot take writes now, if it cannot. */
  readonly unavailable: () => Error | undefined;
  readonly warn: ((message: string) => void) | undefined;
  /** Called after each stored message (max_inactivity bookkeeping). */
  readonly onStored: (() => void) | undefined;
  /** Something changed: the channel joins the next batch. */
  readonly changed: () => void;
  /** Reads the blocks holding sequences `from` to `to` (some at least), in order. */
  readonly fetch: (from: number, to: number) => Promise<StoredBlock[]>;
}

/** A wb_msg_blocks row as read back: the timestamps come from the MsgIndex. */
export interface StoredBlock {
  readonly first: number;
  readonly sizes: number[];
  readonly data: Buffer;
}

/** Consecutive messages written as one wb_msg_blocks row. */
export interface Block {
  readonly first: number;
  readonly last: number;
  /** Timestamps as decimal texts (long()). */
  readonly stamps: string[];
  readonly sizes: number[];
  readonly data: Buffer;
}

/** This channel's messages part of a batch. */
export interface MsgChanges {
  readonly pre: string[];
  readonly blocks: Block[];
  readonly post: string[];
  /** The highest sequence the batch writes: committed once it commits. */
  readonly upTo: number;
}

export class SqlMsgStore implements MsgStore {
  private first = 0;
  private last = 0;
  private total = 0;
  private size = 0;
  private readonly index = new MsgIndex();
  private readonly recent = new Map<number, StoredMsg>();
  private recentBytes = 0;
  private cache = new Map<number, StoredMsg>();
  private readonly reads = new Map<number, Promise<void>>();
  /** Messages after this one were not taken by a batch yet (they are all in `recent`). */
  private taken = 0;
  /** first_seq as the batches taken so far leave it in the database. */
  private writtenFirst = 0;
  private emptied = false;
  /** Highest sequence committed: `recent` may forget messages up to it. */
  private committed = 0;
  private ageTimer: NodeJS.Timeout | undefined;
  private readonly maxAgeNanos: Long | undefined;
  private hitLimit = false;

  constructor(
    private readonly channel: string,
    private readonly channelId: number,
    private readonly limits: ChannelLimits,
    private readonly ctx: SqlMsgContext,
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
    // Refused rather than acknowledged later: the publisher gets this text at once.
    const down = this.ctx.unavailable();
    if (down !== undefined)
      throw new StoreError('UNAVAILABLE', `store unavailable: ${down.message}`);
    if (this.total === 0) {
      this.first = seq;
      this.index.clear();
    } else if (seq !== this.last + 1) {
      throw new StoreError('INVALID_SEQUENCE', `sequence ${seq} does not follow ${this.last}`);
    }
    const len = msg.encoded.length;
    this.recent.set(seq, msg);
    this.recentBytes += len;
    this.index.push(len, msg.timestamp);
    this.last = seq;
    this.total++;
    this.size += len;
    if (this.maxAgeNanos !== undefined && this.ageTimer === undefined) this.scheduleExpiry();
    this.enforceCountAndSize();
    this.ctx.changed();
    this.ctx.onStored?.();
    return true;
  }

  lookup(sequence: number): StoredMsg | undefined | Promise<StoredMsg | undefined> {
    if (this.total === 0 || sequence < this.first || sequence > this.last) return undefined;
    const m = this.recent.get(sequence) ?? this.cache.get(sequence);
    if (m !== undefined) return m;
    return this.read(sequence);
  }

  sequenceFromTimestamp(timestamp: Long): number {
    if (this.first === 0) return 0;
    if (this.total === 0) return this.last + 1;
    return this.first + this.index.firstAtOrAfter(timestamp);
  }

  empty(): void {
    this.stopTimer();
    this.first = 0;
    this.last = 0;
    this.total = 0;
    this.size = 0;
    this.index.clear();
    this.recent.clear();
    this.recentBytes = 0;
    this.cache.clear();
    this.taken = 0;
    this.emptied = true;
    this.hitLimit = false;
    this.ctx.changed();
  }

  stopTimer(): void {
    if (this.ageTimer !== undefined) clearTimeout(this.ageTimer);
    this.ageTimer = undefined;
  }

  /** Recovery: one stored message's index entry (in sequence order). */
  restoreEntry(seq: number, size: number, timestamp: Long): void {
    if (this.total === 0) this.first = seq;
    this.index.push(size, timestamp);
    this.last = seq;
    this.total++;
    this.size += size;
  }

  /** Recovery: the channel row's sequences (authoritative), after restoreEntry. */
  restoreSequences(first: number, last: number): void {
    this.taken = last;
    if (this.total === 0) {
      this.first = first;
      this.last = last;
    } else if (last > this.last) {
      this.last = last;
    }
    this.writtenFirst = this.first;
    this.committed = this.last;
    if (this.maxAgeNanos !== undefined && this.total > 0) this.scheduleExpiry();
  }

  /** Takes the changes since the last call, as SQL. */
  takeChanges(): MsgChanges {
    const id = this.channelId;
    const pre: string[] = [];
    const post: string[] = [];
    if (this.emptied) {
      pre.push(`DELETE FROM wb_msg_blocks WHERE channel_id = ${id}`);
      this.emptied = false;
      this.writtenFirst = 0;
    }
    const blocks: Block[] = [];
    // Messages already dropped by limits are not written at all.
    let seq = Math.max(this.taken + 1, this.first);
    while (this.total > 0 && seq <= this.last) {
      const first = seq;
      const stamps: string[] = [];
      const sizes: number[] = [];
      const parts: Uint8Array[] = [];
      let bytes = 0;
      while (seq <= this.last && sizes.length < BLOCK_MAX && bytes < BLOCK_MAX_BYTES) {
        const m = this.recent.get(seq)!;
        stamps.push(long(m.timestamp));
        sizes.push(m.encoded.length);
        parts.push(m.encoded);
        bytes += m.encoded.length;
        seq++;
      }
      blocks.push({ first, last: seq - 1, stamps, sizes, data: Buffer.concat(parts, bytes) });
    }
    this.taken = this.last;
    if (this.first > this.writtenFirst && this.writtenFirst > 0) {
      post.push(
        `DELETE FROM wb_msg_blocks WHERE channel_id = ${id} AND last_seq < ${int(this.first)}`,
      );
    }
    this.writtenFirst = this.first;
    return { pre, blocks, post, upTo: this.last };
  }

  /** The batch that wrote up to `upTo` committed: `recent` may shrink. */
  markCommitted(upTo: number): void {
    if (upTo > this.committed) this.committed = upTo;
    // Oldest first (a Map iterates in insertion order); never an uncommitted one.
    for (const [seq, m] of this.recent) {
      if (this.recent.size <= RECENT_MAX && this.recentBytes <= RECENT_MAX_BYTES) break;
      if (seq > this.committed) break;
      this.recent.delete(seq);
      this.recentBytes -= m.encoded.length;
    }
  }

  // One query for the next READ_AHEAD messages; concurrent lookups in that range wait for it.
  private async read(sequence: number): Promise<StoredMsg | undefined> {
    for (const [from, pending] of this.reads) {
      if (sequence >= from && sequence < from + READ_AHEAD) {
        await pending;
        return this.afterRead(sequence);
      }
    }
    const to = Math.min(sequence + READ_AHEAD - 1, this.last);
    const pending = this.ctx.fetch(sequence, to).then((blocks) => {
      this.cacheBlocks(blocks, sequence, to);
    });
    this.reads.set(sequence, pending);
    try {
      await pending;
    } finally {
      this.reads.delete(sequence);
    }
    return this.afterRead(sequence);
  }

  // Only the wanted range is kept: a block may hold far more than READ_AHEAD.
  private cacheBlocks(blocks: StoredBlock[], from: number, to: number): void {
    if (this.cache.size + (to - from + 1) > CACHE_MAX) this.cache = new Map();
    for (const b of blocks) {
      let offset = 0;
      for (let i = 0; i < b.sizes.length; i++) {
        const seq = b.first + i;
        const size = b.sizes[i]!;
        if (seq >= from && seq <= to && seq >= this.first && seq <= this.last) {
          this.cache.set(seq, {
            sequence: seq,
            timestamp: this.index.timestamp(seq - this.first),
            encoded: b.data.subarray(offset, offset + size),
          });
        }
        offset += size;
      }
    }
  }

  private afterRead(sequence: number): StoredMsg | undefined {
    if (this.total === 0 || sequence < this.first || sequence > this.last) return undefined;
    return this.recent.get(sequence) ?? this.cache.get(sequence);
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

  private removeFirst(): void {
    const seq = this.first;
    this.size -= this.index.shift();
    this.first++;
    this.total--;
    const m = this.recent.get(seq);
    if (m !== undefined) {
      this.recent.delete(seq);
      this.recentBytes -= m.encoded.length;
    }
    this.cache.delete(seq);
  }

  private scheduleExpiry(): void {
    const waitNanos = this.index.timestamp(0).add(this.maxAgeNanos!).subtract(nowNanos());
    this.ageTimer = startTimer(waitNanos.toNumber() / 1e6, () => {
      this.expire();
    });
  }

  private expire(): void {
    this.ageTimer = undefined;
    if (this.ctx.isClosed() || this.maxAgeNanos === undefined) return;
    const now = nowNanos();
    let dropped = false;
    while (this.total > 0) {
      if (this.index.timestamp(0).add(this.maxAgeNanos).greaterThan(now)) {
        this.scheduleExpiry();
        break;
      }
      this.removeFirst();
      dropped = true;
    }
    if (dropped) this.ctx.changed();
  }
}
