// The subscriptions of one channel in the FILE store: kept in memory as the memory
// store keeps them, and logged to subs.dat with the reference's record types:
//   1 new (SubState)   2 update (SubState)   3 delete (SubStateDelete)
//   4 ack (SubStateUpdate{ID, seqno})        5 sent, now pending (SubStateUpdate)
// Replaying the log restores offline durables with their last sent sequence and
// unacked messages, which the server redelivers after a restart. Pending sets are
// SeqSets: a JS Set cost some 350 ns per delivery and ack under a sliding window.
import { seqFromLong, seqToLong } from '../protocol/int64.js';
import { SubStateDelete, SubStateUpdate } from '../protocol/index.js';
import type Long from 'long';
import type { IoScheduler } from './file-io.js';
import { TypedLog, replayLog, type RecordSink } from './file-log.js';
import type { FileStoreTuning } from './file-options.js';
import { decodeSub, encodeSub } from './records.js';
import { SeqSet } from './seq-set.js';
import { SubStoreBase, type Mutable, type SubEntry } from './sub-store-base.js';
import type { SubInit, SubRecord } from './types.js';

export const SUBS_FILE = 'subs.dat';

const NEW = 1;
const UPDATE = 2;
const DELETE = 3;
const ACK = 4;
const SENT = 5;

export interface RecoveredSubs {
  readonly subs: Map<number, SubEntry>;
  readonly maxId: number;
  readonly size: number;
  readonly records: number;
}

export interface SubStoreContext {
  readonly io: IoScheduler;
  readonly tuning: FileStoreTuning;
  readonly isClosed: () => boolean;
  /** Called when a subscription is created, updated or deleted (max_inactivity). */
  readonly onChange: (() => void) | undefined;
}

export class FileSubStore extends SubStoreBase<SubEntry> {
  // Set in the constructor: written twice, a variable to V8 from the start (see
  // SeqSet's constructor).
  private pendingCount = -1;
  readonly log: TypedLog;

  constructor(
    path: string,
    maxSubscriptions: number,
    private readonly ctx: SubStoreContext,
    recovered: RecoveredSubs | undefined,
  ) {
    super(maxSubscriptions, ctx.isClosed, recovered);
    this.pendingCount = 0;
    for (const e of this.subs.values()) this.pendingCount += e.pending.size;
    this.log = new TypedLog(
      path,
      recovered?.size ?? 0,
      recovered?.records ?? 0,
      ctx.io,
      ctx.tuning,
      (out) => {
        this.snapshot(out);
      },
      () => this.subs.size + this.pendingCount + 1,
    );
  }

  create(init: SubInit): SubRecord {
    const { record } = this.addNew(init);
    this.log.record(NEW, encodeSub(record));
    this.ctx.onChange?.();
    return record;
  }

  update(record: SubRecord): void {
    this.replace(record);
    this.log.record(UPDATE, encodeSub(record));
    this.ctx.onChange?.();
  }

  delete(id: number): void {
    const entry = this.remove(id);
    if (entry === undefined) return;
    this.pendingCount -= entry.pending.size;
    this.log.record(DELETE, SubStateDelete.encode({ ID: seqToLong(id) }).finish());
    this.ctx.onChange?.();
  }

  addPending(id: number, sequence: number): void {
    const entry = this.subs.get(id);
    if (entry === undefined || this.ctx.isClosed()) return;
    const size = entry.pending.size;
    entry.pending.add(sequence);
    if (entry.pending.size !== size) this.pendingCount++;
    if (sequence > entry.record.lastSent) entry.record.lastSent = sequence;
    this.log.update(SENT, id, sequence);
  }

  ack(id: number, sequence: number): void {
    const entry = this.subs.get(id);
    if (entry === undefined || this.ctx.isClosed() || !entry.pending.delete(sequence)) return;
    this.pendingCount--;
    this.log.update(ACK, id, sequence);
  }

  protected newEntry(record: Mutable<SubRecord>): SubEntry {
    return { record, pending: new SeqSet() };
  }

  // Live state as records. A delete of the highest ID ever given, first, keeps that ID
  // from being reused after a restart, whatever was deleted before the compaction.
  private snapshot(out: RecordSink): void {
    out.record(DELETE, SubStateDelete.encode({ ID: seqToLong(this.maxId) }).finish());
    for (const { record, pending } of this.subs.values()) {
      out.record(NEW, encodeSub(record));
      for (const seq of pending) out.update(SENT, record.id, seq);
    }
  }
}

function num(v: Long | number | null | undefined): number {
  if (v === null || v === undefined) return 0;
  return typeof v === 'number' ? v : seqFromLong(v);
}

/** Replays subs.dat (missing: no subscriptions). */
export async function recoverSubs(
  path: string,
  tuning: FileStoreTuning,
  warn: (text: string) => void,
): Promise<RecoveredSubs> {
  const subs = new Map<number, SubEntry>();
  let maxId = 0;
  const { size, records } = await replayLog(path, tuning, warn, (type, payload) => {
    try {
      switch (type) {
        case NEW:
        case UPDATE: {
          const record = decodeSub(payload);
          const entry = subs.get(record.id);
          if (type === UPDATE && entry !== undefined) entry.record = record;
          else subs.set(record.id, { record, pending: new SeqSet() });
          if (record.id > maxId) maxId = record.id;
          return undefined;
        }
        case DELETE: {
          const id = num(SubStateDelete.decode(payload).ID);
          subs.delete(id);
          if (id > maxId) maxId = id;
          return undefined;
        }
        case ACK:
        case SENT: {
          const u = SubStateUpdate.decode(payload);
          const entry = subs.get(num(u.ID));
          if (entry === undefined) return undefined;
          const seq = num(u.seqno);
          if (type === ACK) entry.pending.delete(seq);
          else {
            entry.pending.add(seq);
            if (seq > entry.record.lastSent) entry.record.lastSent = seq;
          }
          return undefined;
        }
        default:
          return `unknown record type ${type}`;
      }
    } catch (err) {
      return `undecodable record of type ${type} (${String(err)})`;
    }
  });
  return { subs, maxId, size, records };
}
