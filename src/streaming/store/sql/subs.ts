// The subscriptions of one channel in the SQL store: an in-memory mirror (what the
// server reads, synchronously) plus the changes since the last flush, coalesced per
// row so that a batch writes each subscription and each pending sequence once: a
// message sent and acked within one batch costs no row at all.
import { StoreError } from '../errors.js';
import type { StoredSub, SubInit, SubRecord, SubStore } from '../types.js';
import { bool, int, text } from './literal.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

interface Entry {
  record: Mutable<SubRecord>;
  readonly pending: Set<number>;
}

/** What a subscription store needs from its channel. */
export interface SqlSubContext {
  readonly isClosed: () => boolean;
  /** Something changed: the channel joins the next batch. */
  readonly changed: () => void;
  /** A subscription was created, updated or deleted (max_inactivity). */
  readonly onChange: (() => void) | undefined;
}

/** This channel's part of a batch. */
export interface SubChanges {
  /** Statements to run before the others (deletions). */
  readonly pre: string[];
  /** Rows `(channel, id, client, ...)` for the upsert into wb_subs. */
  readonly upserts: string[];
  /** Rows `(channel, sub, seq)` to insert into / delete from wb_pending. */
  readonly pendingAdds: string[];
  readonly pendingDels: string[];
}

export class SqlSubStore implements SubStore {
  private readonly subs = new Map<number, Entry>();
  private maxId = 0;
  private readonly dirty = new Set<number>();
  private readonly deleted = new Set<number>();
  /** Per subscription: sequence -> true (row to insert) or false (row to delete). */
  private readonly pendingChanges = new Map<number, Map<number, boolean>>();

  constructor(
    private readonly channelId: number,
    private readonly maxSubscriptions: number,
    private readonly ctx: SqlSubContext,
  ) {}

  get count(): number {
    return this.subs.size;
  }

  /** The highest ID ever given, persisted so that IDs are never reused. */
  get maxSubId(): number {
    return this.maxId;
  }

  create(init: SubInit): SubRecord {
    this.checkOpen();
    if (this.maxSubscriptions > 0 && this.subs.size >= this.maxSubscriptions) {
      throw new StoreError('TOO_MANY_SUBS');
    }
    const record = { ...init, id: ++this.maxId };
    this.subs.set(record.id, { record, pending: new Set() });
    this.touch(record.id);
    return record;
  }

  update(record: SubRecord): void {
    this.checkOpen();
    const entry = this.subs.get(record.id);
    if (entry === undefined) {
      // As the reference's stores: an update for an unknown ID records it.
      this.subs.set(record.id, { record: { ...record }, pending: new Set() });
      if (record.id > this.maxId) this.maxId = record.id;
    } else {
      entry.record = { ...record };
    }
    this.touch(record.id);
  }

  delete(id: number): void {
    this.checkOpen();
    if (!this.subs.delete(id)) return;
    this.dirty.delete(id);
    this.pendingChanges.delete(id);
    this.deleted.add(id);
    this.ctx.changed();
    this.ctx.onChange?.();
  }

  addPending(id: number, sequence: number): void {
    const entry = this.subs.get(id);
    if (entry === undefined) return;
    if (!entry.pending.has(sequence)) {
      entry.pending.add(sequence);
      this.change(id, sequence, true);
    }
    if (sequence > entry.record.lastSent) {
      entry.record.lastSent = sequence;
      this.dirty.add(id);
      this.ctx.changed();
    }
  }

  ack(id: number, sequence: number): void {
    const entry = this.subs.get(id);
    if (entry !== undefined && entry.pending.delete(sequence)) this.change(id, sequence, false);
  }

  /** A live view: it follows later changes to the subscription. */
  get(id: number): StoredSub | undefined {
    return this.subs.get(id);
  }

  all(): IterableIterator<StoredSub> {
    return this.subs.values();
  }

  /** True while some subscription is not closed (max_inactivity). */
  hasActive(): boolean {
    for (const { record } of this.subs.values()) if (!record.isClosed) return true;
    return false;
  }

  /** Recovery: a subscription as the database has it. */
  restore(record: SubRecord, pending: Iterable<number>): void {
    this.subs.set(record.id, { record: { ...record }, pending: new Set(pending) });
    if (record.id > this.maxId) this.maxId = record.id;
  }

  /** Recovery: the highest ID given before, deleted subscriptions included. */
  restoreMaxId(maxId: number): void {
    if (maxId > this.maxId) this.maxId = maxId;
  }

  /** Takes the changes since the last call, as SQL. */
  takeChanges(): SubChanges {
    const ch = this.channelId;
    const pre: string[] = [];
    if (this.deleted.size > 0) {
      const ids = [...this.deleted].map(int).join(',');
      pre.push(`DELETE FROM wb_subs WHERE channel_id = ${ch} AND id IN (${ids})`);
      pre.push(`DELETE FROM wb_pending WHERE channel_id = ${ch} AND sub_id IN (${ids})`);
      this.deleted.clear();
    }
    const upserts: string[] = [];
    for (const id of this.dirty) {
      const r = this.subs.get(id)?.record;
      if (r === undefined) continue;
      upserts.push(
        `(${ch},${int(r.id)},${text(r.clientID)},${text(r.qGroup)},${text(r.inbox)},` +
          `${text(r.ackInbox)},${int(r.maxInFlight)},${int(r.ackWaitInSecs)},` +
          `${text(r.durableName)},${int(r.lastSent)},${bool(r.isDurable)},${bool(r.isClosed)})`,
      );
    }
    this.dirty.clear();
    const pendingAdds: string[] = [];
    const pendingDels: string[] = [];
    for (const [id, seqs] of this.pendingChanges) {
      for (const [seq, add] of seqs) (add ? pendingAdds : pendingDels).push(`(${ch},${id},${seq})`);
    }
    this.pendingChanges.clear();
    return { pre, upserts, pendingAdds, pendingDels };
  }

  /** Forgets unwritten changes (the channel is deleted). */
  dropChanges(): void {
    this.dirty.clear();
    this.deleted.clear();
    this.pendingChanges.clear();
  }

  private touch(id: number): void {
    this.dirty.add(id);
    this.ctx.changed();
    this.ctx.onChange?.();
  }

  // A row inserted then deleted (or the reverse) before a flush cancels out.
  private change(id: number, seq: number, add: boolean): void {
    let seqs = this.pendingChanges.get(id);
    if (seqs === undefined) {
      seqs = new Map();
      this.pendingChanges.set(id, seqs);
    }
    const before = seqs.get(seq);
    if (before === undefined) seqs.set(seq, add);
    else if (before !== add) seqs.delete(seq);
    this.ctx.changed();
  }

  private checkOpen(): void {
    if (this.ctx.isClosed()) throw new StoreError('CLOSED');
  }
}
