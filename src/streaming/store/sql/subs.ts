// The subscriptions of one channel in the SQL store: an in-memory mirror (what the
// server reads, synchronously) plus what the next batches must write.
//
// Delivery state is written lazily, and consistently: a sequence sent to a
// subscription is written as a wb_pending row only if it is still unacked
// ACK_WINDOW_MS later (a healthy subscriber acks long before, and then no row is
// ever written nor deleted), and the subscription's last_sent in the database stays
// just below the oldest sequence not written yet. After a crash the subscription
// therefore resumes at most ACK_WINDOW_MS of deliveries early: those messages come
// again (at-least-once), none is lost. close() writes everything.
import { SubStoreBase, type Mutable, type SubEntry } from '../sub-store-base.js';
import type { SubInit, SubRecord } from '../types.js';
import { bool, int, text } from './literal.js';

/** How long a sent sequence may wait for its ack before it gets a row. */
export const ACK_WINDOW_MS = 100;

interface Entry extends SubEntry {
  /** Sent sequences not written yet, in sending order, with when they were sent. */
  qSeq: number[];
  qTime: number[];
  qHead: number;
  /** last_sent as written; -1 when the row must be written whatever it holds. */
  writtenLastSent: number;
}

/** What a subscription store needs from its channel. */
export interface SqlSubContext {
  readonly isClosed: () => boolean;
  /** Something changed: the channel joins the next batch. */
  readonly changed: () => void;
  /** Sequences wait to be written: call changed() again in `ms`. */
  readonly later: (ms: number) => void;
  /** A subscription was created, updated or deleted (max_inactivity). */
  readonly onChange: (() => void) | undefined;
}

/** This channel's part of a batch: wb_pending rows as (sub, seq) pairs. */
export interface SubChanges {
  readonly pre: string[];
  readonly upserts: string[];
  readonly addSubs: number[];
  readonly addSeqs: number[];
  readonly delSubs: number[];
  readonly delSeqs: number[];
}

export class SqlSubStore extends SubStoreBase<Entry> {
  /** Subscriptions with something to write. */
  private readonly touched = new Set<number>();
  private readonly deleted = new Set<number>();
  private delSubs: number[] = [];
  private delSeqs: number[] = [];
  /** Sequences to write at once (sent out of order: a queue member took them over). */
  private addSubs: number[] = [];
  private addSeqs: number[] = [];

  constructor(
    private readonly channelId: number,
    maxSubscriptions: number,
    private readonly ctx: SqlSubContext,
  ) {
    super(maxSubscriptions, ctx.isClosed);
  }

  /** The highest ID ever given, persisted so that IDs are never reused. */
  get maxSubId(): number {
    return this.maxId;
  }

  create(init: SubInit): SubRecord {
    const { record } = this.addNew(init);
    this.touch(record.id);
    return record;
  }

  update(record: SubRecord): void {
    // The row is written again, whatever last_sent it holds.
    this.replace(record).writtenLastSent = -1;
    this.touch(record.id);
  }

  delete(id: number): void {
    if (this.remove(id) === undefined) return;
    this.touched.delete(id);
    this.deleted.add(id);
    // Its rows go with it (deleted first in the batch): none may be written after.
    if (this.addSubs.includes(id))
      [this.addSubs, this.addSeqs] = without(id, this.addSubs, this.addSeqs);
    if (this.delSubs.includes(id))
      [this.delSubs, this.delSeqs] = without(id, this.delSubs, this.delSeqs);
    this.ctx.changed();
    this.ctx.onChange?.();
  }

  addPending(id: number, sequence: number): void {
    const e = this.subs.get(id);
    if (e === undefined || e.pending.has(sequence)) return;
    e.pending.add(sequence);
    const n = e.qSeq.length;
    if (n > e.qHead && sequence < e.qSeq[n - 1]!) {
      // Out of order: written at once, so the queue stays sorted.
      this.addSubs.push(id);
      this.addSeqs.push(sequence);
    } else {
      e.qSeq.push(sequence);
      e.qTime.push(Date.now());
    }
    if (sequence > e.record.lastSent) e.record.lastSent = sequence;
    if (!this.touched.has(id)) {
      this.touched.add(id);
      this.ctx.changed();
    }
  }

  ack(id: number, sequence: number): void {
    const e = this.subs.get(id);
    if (e === undefined || !e.pending.delete(sequence)) return;
    // Not written yet (still queued): nothing to delete, the queue entry is skipped.
    if (e.qHead < e.qSeq.length && sequence >= e.qSeq[e.qHead]!) return;
    this.delSubs.push(id);
    this.delSeqs.push(sequence);
    this.ctx.changed();
  }

  /** Recovery: a subscription as the database has it. */
  restore(record: SubRecord, pending: Iterable<number>): void {
    const e = makeEntry({ ...record }, pending);
    e.writtenLastSent = record.lastSent;
    this.subs.set(record.id, e);
    if (record.id > this.maxId) this.maxId = record.id;
  }

  /** Recovery: the highest ID given before, deleted subscriptions included. */
  restoreMaxId(maxId: number): void {
    if (maxId > this.maxId) this.maxId = maxId;
  }

  /**
   * Takes what is due, as SQL: everything when `all` (close), else the sequences
   * sent at least ACK_WINDOW_MS ago.
   */
  takeChanges(all: boolean): SubChanges {
    const ch = this.channelId;
    const pre: string[] = [];
    if (this.deleted.size > 0) {
      const ids = [...this.deleted].map(int).join(',');
      pre.push(`DELETE FROM wb_subs WHERE channel_id = ${ch} AND id IN (${ids})`);
      pre.push(`DELETE FROM wb_pending WHERE channel_id = ${ch} AND sub_id IN (${ids})`);
      this.deleted.clear();
    }
    const upserts: string[] = [];
    const addSubs = this.addSubs;
    const addSeqs = this.addSeqs;
    const cutoff = all ? Infinity : Date.now() - ACK_WINDOW_MS;
    let wait = Infinity;
    for (const id of this.touched) {
      const e = this.subs.get(id);
      if (e === undefined) {
        this.touched.delete(id);
        continue;
      }
      let h = e.qHead;
      while (h < e.qSeq.length && e.qTime[h]! <= cutoff) {
        const seq = e.qSeq[h++]!;
        if (e.pending.has(seq)) {
          addSubs.push(id);
          addSeqs.push(seq);
        }
      }
      compact(e, h);
      const queued = e.qHead < e.qSeq.length;
      // Never ahead of a sequence not written: a crash must not skip it.
      const lastSent = queued
        ? Math.min(e.record.lastSent, e.qSeq[e.qHead]! - 1)
        : e.record.lastSent;
      if (lastSent !== e.writtenLastSent) {
        e.writtenLastSent = lastSent;
        upserts.push(row(ch, e.record, lastSent));
      }
      if (queued) wait = Math.min(wait, e.qTime[e.qHead]! + ACK_WINDOW_MS - Date.now());
      else this.touched.delete(id);
    }
    if (wait !== Infinity) this.ctx.later(Math.max(1, wait));
    const changes = {
      pre,
      upserts,
      addSubs,
      addSeqs,
      delSubs: this.delSubs,
      delSeqs: this.delSeqs,
    };
    this.addSubs = [];
    this.addSeqs = [];
    this.delSubs = [];
    this.delSeqs = [];
    return changes;
  }

  /** Forgets unwritten changes (the channel is deleted). */
  dropChanges(): void {
    this.touched.clear();
    this.deleted.clear();
    this.addSubs = [];
    this.addSeqs = [];
    this.delSubs = [];
    this.delSeqs = [];
  }

  protected newEntry(record: Mutable<SubRecord>): Entry {
    return makeEntry(record, []);
  }

  private touch(id: number): void {
    this.touched.add(id);
    this.ctx.changed();
    this.ctx.onChange?.();
  }
}

function without(id: number, subs: number[], seqs: number[]): [number[], number[]] {
  const keep = subs.map((s) => s !== id);
  return [subs.filter((_, i) => keep[i]), seqs.filter((_, i) => keep[i])];
}

function makeEntry(record: Mutable<SubRecord>, pending: Iterable<number>): Entry {
  return { record, pending: new Set(pending), qSeq: [], qTime: [], qHead: 0, writtenLastSent: -1 };
}

// Drops the consumed head of the queue once it is large and half the array.
function compact(e: Entry, head: number): void {
  if (head === e.qSeq.length) {
    e.qSeq = [];
    e.qTime = [];
    e.qHead = 0;
  } else if (head >= 1024 && head * 2 >= e.qSeq.length) {
    e.qSeq = e.qSeq.slice(head);
    e.qTime = e.qTime.slice(head);
    e.qHead = 0;
  } else {
    e.qHead = head;
  }
}

function row(ch: number, r: SubRecord, lastSent: number): string {
  return (
    `(${ch},${int(r.id)},${text(r.clientID)},${text(r.qGroup)},${text(r.inbox)},` +
    `${text(r.ackInbox)},${int(r.maxInFlight)},${int(r.ackWaitInSecs)},` +
    `${text(r.durableName)},${int(lastSent)},${bool(r.isDurable)},${bool(r.isClosed)})`
  );
}
