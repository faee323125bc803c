// The messages of one channel in the SQL store, one Messages row each, as the
// reference writes them: (channel id, seq, timestamp, size, data = marshaled
// MsgProto). Writes are synchronous and visible at once: the message is kept in
// `recent` (every message not yet committed, plus the newest committed ones: what
// live subscribers read next) and the next batch inserts what was stored since the
// last one, as multi-row INSERTs.
//
// Subscribers get new messages once their batch committed, and a subscriber behind
// by up to its MaxInflight (often thousands) reads them later: `recent` keeps the
// messages of the last committed batch whatever its size, and older committed ones
// within a channel's caps and the store's budget, so that live subscribers seldom
// read back from the database.
//
// Older messages are read back READ_AHEAD at a time for subscribers catching up.
// Limits (msg-store-base.ts) work on the in-memory MsgIndex; rows below first_seq
// are deleted in the next batch. When limits leave no message at all (max_age), the
// channel row's maxseq keeps the last sequence, as the reference's does.
import type Long from 'long';
import { StoreError } from '../errors.js';
import type { ChannelLimits } from '../limits.js';
import { MsgStoreBase } from '../msg-store-base.js';
import type { StoredMsg } from '../types.js';
import type { MessageRow, SqlDialect, Statement } from './db.js';
import { int, long } from './literal.js';
import { MsgIndex } from './msg-index.js';

/** Committed messages kept in memory per channel: at most this many, and bytes. */
const RECENT_MAX = 32_768;
const RECENT_MAX_BYTES = 16 * 1024 * 1024;
/** ... and in the whole store (over it, a channel that commits keeps its last batch only). */
export const RECENT_STORE_BYTES = 64 * 1024 * 1024;

/** The bytes of messages held in memory by all the channels of one store. */
export interface RecentBudget {
  bytes: number;
  readonly limit: number;
}
/** Sequences fetched by one read. */
const READ_AHEAD = 512;
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
  /** Reads the messages `from` to `to` (those stored), in order. */
  readonly fetch: (from: number, to: number) => Promise<FetchedMsg[]>;
  readonly dialect: SqlDialect;
  /** Rows per INSERT at most (`--sql_bulk_insert_limit` in effect; 0: no limit). */
  readonly insertMaxRows: number;
  readonly budget: RecentBudget;
}

/** A Messages row as read back: the timestamp comes from the MsgIndex. */
export interface FetchedMsg {
  readonly seq: number;
  readonly data: Buffer;
}

/** This channel's messages part of a batch. */
export interface MsgChanges {
  readonly statements: Statement[];
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
  /** Channels.maxseq as written (kept only when no message is left). */
  private writtenMaxSeq = 0;
  /** Highest sequence committed. */
  private committed = 0;
  /** Highest sequence committed by the batch before the last one: `recent` may forget up to it. */
  private committedBefore = 0;

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
    this.ctx.budget.bytes += len;
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
    this.clearRecent();
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

  /**
   * Recovery, after restoreEntry: `maxSeq` is the highest sequence the channel row and
   * the subscriptions know. As in the reference, when it is past the last stored
   * message, the channel starts after it (first = maxSeq + 1: every message is gone).
   * Then the limits as configured now apply (they may have been lowered).
   */
  restoreSequences(maxSeq: number, writtenMaxSeq: number): void {
    if (maxSeq > this.last) {
      this.index.clear();
      this.total = 0;
      this.size = 0;
      this.first = maxSeq + 1;
      this.last = maxSeq;
    }
    this.taken = this.last;
    this.writtenFirst = this.first;
    this.writtenMaxSeq = writtenMaxSeq;
    this.committed = this.last;
    this.committedBefore = this.last;
    this.enforceCountAndSize();
    if (this.maxAgeNanos !== undefined && this.total > 0) this.scheduleExpiry();
  }

  /** Takes the changes since the last call, as SQL. */
  takeChanges(): MsgChanges {
    const id = this.channelId;
    const out: Statement[] = [];
    const d = this.ctx.dialect;
    if (this.emptied) {
      out.push(`DELETE FROM Messages WHERE id = ${id}`);
      this.emptied = false;
      this.writtenFirst = 0;
    }
    // Messages already dropped by limits are not written at all.
    const rows: MessageRow[] = [];
    for (
      let seq = Math.max(this.taken + 1, this.first);
      this.total > 0 && seq <= this.last;
      seq++
    ) {
      const m = this.recent.get(seq)!;
      rows.push({ seq, timestamp: long(m.timestamp), data: m.encoded });
    }
    if (rows.length > 0) out.push(...d.insertMessages(id, rows, this.ctx.insertMaxRows));
    this.taken = this.last;
    if (this.first > this.writtenFirst && this.writtenFirst > 0) {
      out.push(`DELETE FROM Messages WHERE id = ${id} AND seq < ${int(this.first)}`);
    }
    this.writtenFirst = this.first;
    // No message left: the reference finds the sequence to go on from in maxseq.
    const maxSeq = this.total === 0 ? this.last : this.writtenMaxSeq;
    if (maxSeq !== this.writtenMaxSeq) {
      out.push(`UPDATE Channels SET maxseq = ${int(maxSeq)} WHERE id = ${id}`);
      this.writtenMaxSeq = maxSeq;
    }
    return { statements: out, upTo: this.last };
  }

  /** The batch that wrote up to `upTo` committed: `recent` may shrink. */
  markCommitted(upTo: number): void {
    if (upTo <= this.committed) return;
    this.committedBefore = this.committed;
    this.committed = upTo;
    // Oldest first (a Map iterates in insertion order); never one of the last batch,
    // which subscribers are about to get, nor an uncommitted one.
    const budget = this.ctx.budget;
    for (const [seq, m] of this.recent) {
      if (
        this.recent.size <= RECENT_MAX &&
        this.recentBytes <= RECENT_MAX_BYTES &&
        budget.bytes <= budget.limit
      )
        break;
      if (seq > this.committedBefore) break;
      this.forget(seq, m);
    }
  }

  /** Deleted or emptied: its messages leave memory (and the store's budget). */
  clearRecent(): void {
    this.recent.clear();
    this.ctx.budget.bytes -= this.recentBytes;
    this.recentBytes = 0;
  }

  private forget(seq: number, m: StoredMsg): void {
    this.recent.delete(seq);
    this.recentBytes -= m.encoded.length;
    this.ctx.budget.bytes -= m.encoded.length;
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
    const pending = this.ctx.fetch(sequence, to).then((rows) => {
      this.cacheRows(rows);
    });
    this.reads.set(sequence, pending);
    try {
      await pending;
    } finally {
      this.reads.delete(sequence);
    }
    return this.afterRead(sequence);
  }

  private cacheRows(rows: FetchedMsg[]): void {
    if (this.cache.size + rows.length > CACHE_MAX) this.cache = new Map();
    for (const r of rows) {
      if (r.seq < this.first || r.seq > this.last) continue;
      this.cache.set(r.seq, {
        sequence: r.seq,
        timestamp: this.index.timestamp(r.seq - this.first),
        encoded: r.data,
      });
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
    if (m !== undefined) this.forget(seq, m);
    this.cache.delete(seq);
  }

  // Messages that expire join the next batch, as stored ones do.
  protected override expire(): void {
    const before = this.total;
    super.expire();
    if (this.total !== before) this.ctx.changed();
  }
}
