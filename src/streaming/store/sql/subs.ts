// The subscriptions of one channel in the SQL store: an in-memory mirror (what the
// server reads, synchronously) plus what the next batches must write, in the
// reference's tables:
//
// - Subscriptions(id = channel, subid, lastsent, proto = marshaled SubState, deleted).
//   Subscription IDs are unique in the whole store, not per channel (SubsPending rows
//   carry no channel), as in the reference. Deleting the subscription with the highest
//   ID only marks its row deleted, so that the highest ID survives a restart; marked
//   rows go when the channel gets its next subscription.
// - SubsPending(subid, row, seq, lastsent, pending, acks): the sequences sent and not
//   acked. By default (the reference's caching mode) one row per subscription and
//   batch, its `pending` a JSON list of sequences; with `--sql_no_caching` one row per
//   sequence (`seq`). Acks delete a sequence's own row; a JSON row is deleted once
//   all its sequences are acked, and rewritten without the acked ones once half of
//   them are (so a slow subscriber's rows cost O(n) writes, not one per ack: after a
//   crash, sequences acked since the last rewrite come again, at-least-once). Rows
//   the reference left with `acks` lists are rewritten once after recovery.
//
// Delivery state is written lazily, and consistently: a sequence sent is written
// only if it is still unacked ACK_WINDOW_MS later (a healthy subscriber acks long
// before, and then no row is ever written nor deleted), and the lastsent written
// stays just below the oldest sequence not written yet. After a crash a subscription
// therefore resumes at most ACK_WINDOW_MS of deliveries early: those messages come
// again (at-least-once), none is lost. close() writes everything.
import { encodeSub } from '../records.js';
import { SubStoreBase, type Mutable, type SubEntry } from '../sub-store-base.js';
import type { SubInit, SubRecord } from '../types.js';
import type { SqlDialect } from './db.js';
import { encodeSeqs, int } from './literal.js';

/** How long a sent sequence may wait for its ack before it gets a row. */
export const ACK_WINDOW_MS = 100;

/** A SubsPending row with a JSON list of pending sequences. */
interface ListRow {
  readonly id: number;
  readonly seqs: Set<number>;
  /** Sequences in the list as written. */
  written: number;
}

interface Entry extends SubEntry {
  /** Sent sequences not written yet, in sending order, with when they were sent. */
  qSeq: number[];
  qTime: number[];
  qHead: number;
  /** Sequences to write at the next batch (sent out of order, or rewritten). */
  now: number[];
  /** The row of each written pending sequence: its list row, or null for its own row. */
  readonly rows: Map<number, ListRow | null>;
  /** lastsent as written; -1 when unknown. */
  writtenLastSent: number;
}

/** The store-wide highest subscription ID (shared by every channel). */
export interface SubIds {
  max: number;
}

/** What a subscription store needs from its channel. */
export interface SqlSubContext {
  readonly isClosed: () => boolean;
  readonly dialect: SqlDialect;
  /** `--sql_no_caching`: one SubsPending row per sequence. */
  readonly noCaching: boolean;
  readonly ids: SubIds;
  /** Something changed: the channel joins the next batch. */
  readonly changed: () => void;
  /** Sequences wait to be written: call changed() again in `ms`. */
  readonly later: (ms: number) => void;
  /** A subscription was created, updated or deleted (max_inactivity). */
  readonly onChange: (() => void) | undefined;
}

/** Recovery: a subscription's SubsPending rows, as read. */
export interface RecoveredPending {
  readonly pending: Set<number>;
  /** Each pending sequence's list row id, or null for a row of its own. */
  readonly rows: Map<number, number | null>;
  /** The rows are not of a kind we keep (acks lists, repeats): rewrite them. */
  readonly rewrite: boolean;
}

export class SqlSubStore extends SubStoreBase<Entry> {
  /** Subscriptions with something to write. */
  private readonly touched = new Set<number>();
  /** Statements due in the order of the calls that made them. */
  private ops: string[] = [];
  /** Own rows of acked sequences, to delete: (subid, seq) pairs. */
  private delPairs: string[] = [];
  /** List rows whose list changed. */
  private readonly dirtyRows = new Map<ListRow, number>();
  private hasMarkedAsDeleted = false;
  /** The highest SubsPending row id of this channel's subscriptions. */
  private curRow = 0;

  constructor(
    private readonly channelId: number,
    maxSubscriptions: number,
    private readonly ctx: SqlSubContext,
  ) {
    super(maxSubscriptions, ctx.isClosed);
  }

  create(init: SubInit): SubRecord {
    this.maxId = this.ctx.ids.max;
    const { record } = this.addNew(init);
    this.ctx.ids.max = this.maxId;
    if (this.hasMarkedAsDeleted) {
      this.ops.push(`DELETE FROM Subscriptions WHERE id = ${this.channelId} AND deleted = TRUE`);
      this.hasMarkedAsDeleted = false;
    }
    this.writeProto(record, record.lastSent);
    this.touch(record.id);
    return record;
  }

  update(record: SubRecord): void {
    this.maxId = this.ctx.ids.max;
    const e = this.replace(record);
    if (this.maxId > this.ctx.ids.max) this.ctx.ids.max = this.maxId;
    this.writeProto(e.record, safeLastSent(e));
    this.touch(record.id);
  }

  delete(id: number): void {
    const e = this.remove(id);
    if (e === undefined) return;
    this.touched.delete(id);
    for (const row of new Set(e.rows.values())) if (row !== null) this.dirtyRows.delete(row);
    const ch = this.channelId;
    if (id === this.ctx.ids.max) {
      this.ops.push(`UPDATE Subscriptions SET deleted = TRUE WHERE id = ${ch} AND subid = ${id}`);
      this.hasMarkedAsDeleted = true;
    } else {
      this.ops.push(`DELETE FROM Subscriptions WHERE id = ${ch} AND subid = ${id}`);
    }
    // Its rows go with it; pairs queued for it are harmless (they match nothing).
    this.ops.push(`DELETE FROM SubsPending WHERE subid = ${id}`);
    this.ctx.changed();
    this.ctx.onChange?.();
  }

  addPending(id: number, sequence: number): void {
    const e = this.subs.get(id);
    if (e === undefined || e.pending.has(sequence)) return;
    e.pending.add(sequence);
    const n = e.qSeq.length;
    if (n > e.qHead && sequence < e.qSeq[n - 1]!) {
      // Out of order: written at the next batch, so the queue stays sorted.
      e.now.push(sequence);
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
    // Not written yet: the batch skips sequences no longer pending.
    const row = e.rows.get(sequence);
    if (row === undefined) return;
    e.rows.delete(sequence);
    if (row === null) {
      this.delPairs.push(`(${id},${sequence})`);
    } else {
      row.seqs.delete(sequence);
      this.dirtyRows.set(row, id);
    }
    this.ctx.changed();
  }

  /** Recovery: a subscription as the database has it. */
  restore(record: SubRecord, rec: RecoveredPending, maxRow: number): void {
    const e = makeEntry({ ...record });
    for (const seq of rec.pending) e.pending.add(seq);
    e.writtenLastSent = record.lastSent;
    if (maxRow > this.curRow) this.curRow = maxRow;
    if (rec.rewrite) {
      this.ops.push(`DELETE FROM SubsPending WHERE subid = ${record.id}`);
      e.now = [...rec.pending].sort((a, b) => a - b);
      this.touched.add(record.id);
    } else {
      const lists = new Map<number, ListRow>();
      for (const [seq, rowId] of rec.rows) {
        if (rowId === null) {
          e.rows.set(seq, null);
          continue;
        }
        let row = lists.get(rowId);
        if (row === undefined) lists.set(rowId, (row = { id: rowId, seqs: new Set(), written: 0 }));
        row.seqs.add(seq);
        row.written++;
        e.rows.set(seq, row);
      }
    }
    this.subs.set(record.id, e);
  }

  /** Recovery: rows marked deleted are left in this channel (cleaned at the next create). */
  restoreMarked(): void {
    this.hasMarkedAsDeleted = true;
  }

  /**
   * Takes what is due, as SQL: everything when `all` (close), else the sequences
   * sent at least ACK_WINDOW_MS ago.
   */
  takeChanges(all: boolean): string[] {
    const d = this.ctx.dialect;
    const out = this.ops;
    this.ops = [];
    const ownRows: string[] = [];
    const listRows: string[] = [];
    const lastSents: [number, number, number][] = [];
    const cutoff = all ? Infinity : Date.now() - ACK_WINDOW_MS;
    let wait = Infinity;
    for (const id of this.touched) {
      const e = this.subs.get(id);
      if (e === undefined) {
        this.touched.delete(id);
        continue;
      }
      const due: number[] = [];
      for (const seq of e.now) if (e.pending.has(seq) && !e.rows.has(seq)) due.push(seq);
      e.now = [];
      let h = e.qHead;
      while (h < e.qSeq.length && e.qTime[h]! <= cutoff) {
        const seq = e.qSeq[h++]!;
        if (e.pending.has(seq)) due.push(seq);
      }
      compact(e, h);
      const lastSent = safeLastSent(e);
      if (due.length > 0) {
        if (this.ctx.noCaching) {
          for (const seq of due) {
            ownRows.push(`(${id},${++this.curRow},${seq})`);
            e.rows.set(seq, null);
          }
        } else {
          const row: ListRow = { id: ++this.curRow, seqs: new Set(due), written: due.length };
          for (const seq of due) e.rows.set(seq, row);
          listRows.push(`(${id},${row.id},${int(lastSent)},${d.bytes(encodeSeqs(due))})`);
        }
      }
      if (lastSent !== e.writtenLastSent) {
        e.writtenLastSent = lastSent;
        lastSents.push([this.channelId, id, lastSent]);
      }
      if (e.qHead < e.qSeq.length)
        wait = Math.min(wait, e.qTime[e.qHead]! + ACK_WINDOW_MS - Date.now());
      else this.touched.delete(id);
    }
    if (wait !== Infinity) this.ctx.later(Math.max(1, wait));
    const r = d.rowColumn;
    if (this.delPairs.length > 0) {
      out.push(`DELETE FROM SubsPending WHERE (subid, seq) IN (${this.delPairs.join(',')})`);
      this.delPairs = [];
    }
    for (const [row, subId] of this.dirtyRows) {
      if (row.seqs.size === 0) {
        out.push(`DELETE FROM SubsPending WHERE subid = ${subId} AND ${r} = ${row.id}`);
      } else if (all || row.seqs.size * 2 <= row.written) {
        out.push(
          `UPDATE SubsPending SET pending = ${d.bytes(encodeSeqs(row.seqs))}` +
            ` WHERE subid = ${subId} AND ${r} = ${row.id}`,
        );
        row.written = row.seqs.size;
      } else {
        continue;
      }
      this.dirtyRows.delete(row);
    }
    if (ownRows.length > 0) {
      out.push(
        `INSERT INTO SubsPending (subid, ${r}, seq) VALUES ${ownRows.join(',')}` +
          ` ${d.ignoreDuplicate('seq')}`,
      );
    }
    if (listRows.length > 0) {
      out.push(
        `INSERT INTO SubsPending (subid, ${r}, lastsent, pending) VALUES ${listRows.join(',')}` +
          ` ${d.ignoreDuplicate('seq')}`,
      );
    }
    out.push(...d.updateLastSent(lastSents));
    return out;
  }

  /** Forgets unwritten changes (the channel is deleted). */
  dropChanges(): void {
    this.touched.clear();
    this.ops = [];
    this.delPairs = [];
    this.dirtyRows.clear();
  }

  protected newEntry(record: Mutable<SubRecord>): Entry {
    return makeEntry(record);
  }

  private writeProto(record: SubRecord, lastSent: number): void {
    const proto = encodeSub({ ...record, lastSent });
    const d = this.ctx.dialect;
    this.ops.push(d.upsertSubs([`(${this.channelId},${record.id},${d.bytes(proto)})`]));
  }

  private touch(id: number): void {
    this.touched.add(id);
    this.ctx.changed();
    this.ctx.onChange?.();
  }
}

/** The lastSent a crash may resume from: never past a sequence not written yet. */
function safeLastSent(e: Entry): number {
  return e.qHead < e.qSeq.length
    ? Math.min(e.record.lastSent, e.qSeq[e.qHead]! - 1)
    : e.record.lastSent;
}

function makeEntry(record: Mutable<SubRecord>): Entry {
  return {
    record,
    pending: new Set(),
    qSeq: [],
    qTime: [],
    qHead: 0,
    now: [],
    rows: new Map(),
    writtenLastSent: -1,
  };
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
