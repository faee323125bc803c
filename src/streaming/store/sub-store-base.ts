// What the subscription stores of the three store types share. Each keeps a channel's
// subscription records and their pending sets in a Map: the MEMORY store as its only
// copy, FILE and SQL as the mirror the server reads synchronously. IDs, the
// max_subscriptions check and the reference's rules for update and delete are the
// same for all three, and live here. A subclass adds what it persists (FILE: subs.dat
// records; SQL: rows for the next batch) and its own addPending and ack, which differ
// in what each must remember for a restart.
import { StoreError } from './errors.js';
import type { StoredSub, SubInit, SubRecord, SubStore } from './types.js';

export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A subscription as a store keeps it: its record is replaced on update, its pending set kept. */
export interface SubEntry extends StoredSub {
  record: Mutable<SubRecord>;
  readonly pending: Set<number>;
}

export abstract class SubStoreBase<E extends SubEntry> implements SubStore {
  protected readonly subs: Map<number, E>;
  /** The highest ID given: the next subscription gets the one after. */
  protected maxId: number;

  constructor(
    private readonly maxSubscriptions: number,
    protected readonly isClosed: () => boolean,
    recovered?: { readonly subs: Map<number, E>; readonly maxId: number },
  ) {
    this.subs = recovered?.subs ?? new Map<number, E>();
    this.maxId = recovered?.maxId ?? 0;
  }

  get count(): number {
    return this.subs.size;
  }

  abstract create(init: SubInit): SubRecord;
  abstract update(record: SubRecord): void;
  abstract delete(id: number): void;
  abstract addPending(id: number, sequence: number): void;
  abstract ack(id: number, sequence: number): void;

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

  /** A new entry for `record`, with nothing pending. */
  protected abstract newEntry(record: Mutable<SubRecord>): E;

  /**
   * create(): throws CLOSED or TOO_MANY_SUBS, else records the subscription under the
   * next ID and returns its entry.
   */
  protected addNew(init: SubInit): E {
    this.checkOpen();
    if (this.maxSubscriptions > 0 && this.subs.size >= this.maxSubscriptions) {
      throw new StoreError('TOO_MANY_SUBS');
    }
    const entry = this.newEntry({ ...init, id: ++this.maxId });
    this.subs.set(entry.record.id, entry);
    return entry;
  }

  /**
   * update(): throws CLOSED, else replaces the record with this ID and keeps its
   * pending set. As in the reference's file store, an update for an unknown ID records
   * it (max_subscriptions is not checked: the subscription existed).
   */
  protected replace(record: SubRecord): E {
    this.checkOpen();
    let entry = this.subs.get(record.id);
    if (entry === undefined) {
      entry = this.newEntry({ ...record });
      this.subs.set(record.id, entry);
      if (record.id > this.maxId) this.maxId = record.id;
    } else {
      entry.record = { ...record };
    }
    return entry;
  }

  /** delete(): throws CLOSED, else forgets the subscription and returns it (undefined if unknown). */
  protected remove(id: number): E | undefined {
    this.checkOpen();
    const entry = this.subs.get(id);
    if (entry !== undefined) this.subs.delete(id);
    return entry;
  }

  protected checkOpen(): void {
    if (this.isClosed()) throw new StoreError('CLOSED');
  }
}
