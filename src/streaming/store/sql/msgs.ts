// The messages of one channel in the SQL store. Writes are synchronous and visible
// at once: the message is kept in `recent` (every message not yet committed, plus
// the newest committed ones: what live subscribers read next) and the next batch
// writes what was stored since the last one as blocks: one wb_msg_blocks row holds
// up to BLOCK_MAX consecutive messages (their bytes concatenated, with their sizes
// and timestamps), so a batch of a thousand publishes is one row, not a thousand:
// PostgreSQL's cost is per row far more than per byte.
//
// Older messages are read back a block at a time, with read-ahead, for subscribers
// catching up. Limits (msg-store-base.ts) work on the in-memory MsgIndex;
// blocks entirely below first_seq are deleted in the next batch (a block partly
// below it stays until its last message goes: the channel row's first_seq, written
// in the same transaction, says where the channel starts).
import type Long from 'long';
import { StoreError } from '../errors.js';
import type { ChannelLimits } from '../limits.js';
import { MsgStoreBase } from '../msg-store-base.js';
import type { StoredMsg } from '../types.js';
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

export class SqlMsgStore extends MsgStoreBase {
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

  constructor(
    channel: string,
    private readonly channelId: number,
    limits: ChannelLimits,
    private readonly ctx: SqlMsgContext,
  ) {
    super(channel, limits, ctx.isClosed, ctx.warn);
  }

  store(msg: StoredMsg): boolean {
    this.checkOpen();
    const seq = msg.sequence;
    if (!this.isNewSequence(seq)) return false;
    // Refused rather than acknowledged later: the publisher gets this text at once.
    const down = this.ctx.unavailable();
    if (down !== undefined)
      throw new StoreError('UNAVAILABLE', `store unavailable: ${down.message}`);
    if (this.startsOver(seq)) this.index.clear();
    const len = msg.encoded.length;
    this.recent.set(seq, msg);
    this.recentBytes += len;
    this.index.push(len, msg.timestamp);
    this.added(seq, len);
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

  empty(): void {
    this.reset();
    this.index.clear();
    this.recent.clear();
    this.recentBytes = 0;
    this.cache.clear();
    this.taken = 0;
    this.emptied = true;
    this.ctx.changed();
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

  protected seekTimestamp(timestamp: Long): number {
    return this.first + this.index.firstAtOrAfter(timestamp);
  }

  protected oldestTimestamp(): Long {
    return this.index.timestamp(0);
  }

  protected dropOldest(): void {
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

  // Messages that expire join the next batch, as stored ones do.
  protected override expire(): void {
    const before = this.total;
    super.expire();
    if (this.total !== before) this.ctx.changed();
  }
}
