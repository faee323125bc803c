// The subscriptions of one channel held in memory, with their pending sets.
//
// The reference's memory store keeps only a count here (the server has the state);
// this one keeps records and pending sequences too, so that every store answers the
// same reads and one conformance suite checks them all. The cost is an add and a
// delete per delivered message, in a SeqSet (a sliding window of bits, as the FILE
// store's): a JS Set under that churn cost some 350 ns per message.
import { SeqSet } from './seq-set.js';
import { SubStoreBase, type Mutable, type SubEntry } from './sub-store-base.js';
import type { SubInit, SubRecord } from './types.js';

export class MemorySubStore extends SubStoreBase<SubEntry> {
  constructor(
    maxSubscriptions: number,
    isClosed: () => boolean,
    /** Called when a subscription is created, updated or deleted (max_inactivity). */
    private readonly onChange: (() => void) | undefined,
  ) {
    super(maxSubscriptions, isClosed);
  }

  create(init: SubInit): SubRecord {
    const { record } = this.addNew(init);
    this.onChange?.();
    return record;
  }

  update(record: SubRecord): void {
    this.replace(record);
    this.onChange?.();
  }

  delete(id: number): void {
    if (this.remove(id) !== undefined) this.onChange?.();
  }

  addPending(id: number, sequence: number): void {
    const entry = this.subs.get(id);
    if (entry === undefined) return;
    entry.pending.add(sequence);
    if (sequence > entry.record.lastSent) entry.record.lastSent = sequence;
  }

  ack(id: number, sequence: number): void {
    this.subs.get(id)?.pending.delete(sequence);
  }

  protected newEntry(record: Mutable<SubRecord>): SubEntry {
    return { record, pending: new SeqSet() };
  }
}
