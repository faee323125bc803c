// The subscriptions of one channel held in memory, with their pending sets.
//
// The reference's memory store keeps only a count here (the server has the state);
// this one keeps records and pending sequences too, so that every store answers the
// same reads and one conformance suite checks them all. The cost is a Set add and
// delete per delivered message.
import { StoreError } from './errors.js';
import type { StoredSub, SubInit, SubRecord, SubStore } from './types.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

interface Entry {
  record: Mutable<SubRecord>;
  readonly pending: Set<number>;
}

export class MemorySubStore implements SubStore {
  private readonly subs = new Map<number, Entry>();
  private maxId = 0;

  constructor(
    private readonly maxSubscriptions: number,
    private readonly isClosed: () => boolean,
    /** Called when a subscription is created, updated or deleted (max_inactivity). */
    private readonly onChange: (() => void) | undefined,
  ) {}

  get count(): number {
    return this.subs.size;
  }

  create(init: SubInit): SubRecord {
    this.checkOpen();
    if (this.maxSubscriptions > 0 && this.subs.size >= this.maxSubscriptions) {
      throw new StoreError('TOO_MANY_SUBS');
    }
    const record = { ...init, id: ++this.maxId };
    this.subs.set(record.id, { record, pending: new Set() });
    this.onChange?.();
    return record;
  }

  update(record: SubRecord): void {
    this.checkOpen();
    const entry = this.subs.get(record.id);
    if (entry === undefined) {
      // As the reference's file store: an update for an unknown ID records it.
      this.subs.set(record.id, { record: { ...record }, pending: new Set() });
      if (record.id > this.maxId) this.maxId = record.id;
    } else {
      entry.record = { ...record };
    }
    this.onChange?.();
  }

  delete(id: number): void {
    this.checkOpen();
    if (this.subs.delete(id)) this.onChange?.();
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

  private checkOpen(): void {
    if (this.isClosed()) throw new StoreError('CLOSED');
  }
}
