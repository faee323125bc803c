// What the message stores of the three store types share: the four numbers the server
// reads (first and last sequence, count, bytes), the sequence rules of store(), and
// the reference's limits applied to them: max_msgs and max_bytes after every store
// (the oldest messages go, never the newest; the first drop is logged, once) and
// max_age by a timer set for the oldest message. A subclass holds the messages (an
// array in memory, a log in slices, an index of database rows), reads them back, and
// says how to drop the oldest one.
import type Long from 'long';
import { MAX_SEQUENCE, millisToNanos, nowNanos } from '../protocol/int64.js';
import { StoreError } from './errors.js';
import type { ChannelLimits } from './limits.js';
import { droppingMsgsWarning } from './log.js';
import { startTimer } from './timers.js';
import type { MaybePromise, MsgStore, StoredMsg } from './types.js';

export abstract class MsgStoreBase implements MsgStore {
  /** Sequence of the oldest message held; last + 1 once limits dropped them all. */
  protected first = 0;
  protected last = 0;
  /** Messages held. */
  protected total = 0;
  /** Their bytes, as this store type counts them. */
  protected size = 0;
  protected readonly maxAgeNanos: Long | undefined;
  private ageTimer: NodeJS.Timeout | undefined;
  private hitLimit = false;

  constructor(
    protected readonly channel: string,
    protected readonly limits: ChannelLimits,
    private readonly isClosed: () => boolean,
    private readonly warn: ((text: string) => void) | undefined,
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

  abstract store(msg: StoredMsg): boolean;
  abstract lookup(sequence: number): MaybePromise<StoredMsg | undefined>;
  abstract empty(): void;

  sequenceFromTimestamp(timestamp: Long): MaybePromise<number> {
    if (this.first === 0) return 0;
    if (this.total === 0) return this.last + 1;
    return this.seekTimestamp(timestamp);
  }

  /** Stops the max_age timer (channel deleted or store closed). */
  stopTimer(): void {
    if (this.ageTimer !== undefined) clearTimeout(this.ageTimer);
    this.ageTimer = undefined;
  }

  /** sequenceFromTimestamp() while at least one message is held. */
  protected abstract seekTimestamp(timestamp: Long): MaybePromise<number>;

  /** Timestamp of the oldest message held (called only while one is). */
  protected abstract oldestTimestamp(): Long;

  /** Drops the oldest message held: `first` moves on, `total` and `size` go down. */
  protected abstract dropOldest(): void;

  /**
   * Drops at least the oldest message, for max_msgs / max_bytes; a store may drop more
   * at once when the loop would drop them all anyway (FILE: a whole slice).
   */
  protected dropOverLimit(): void {
    this.dropOldest();
  }

  protected checkOpen(): void {
    if (this.isClosed()) throw new StoreError('CLOSED');
  }

  /**
   * store(), first: false for a replay (a sequence up to lastSequence is ignored);
   * INVALID_SEQUENCE for a number no sequence can be.
   */
  protected isNewSequence(seq: number): boolean {
    if (seq <= this.last) return false;
    if (!Number.isSafeInteger(seq) || seq > MAX_SEQUENCE) throw invalidSequence(seq);
    return true;
  }

  /**
   * store(), then: a channel that holds no message (never used, or everything dropped)
   * may resume anywhere after its last sequence, e.g. from a replicated snapshot: `seq`
   * becomes its first and true is returned, for the store to start its messages over.
   * Otherwise `seq` must be lastSequence + 1 (INVALID_SEQUENCE).
   */
  protected startsOver(seq: number): boolean {
    if (this.total === 0) {
      this.first = seq;
      return true;
    }
    if (seq !== this.last + 1) throw notFollowing(seq, this.last);
    return false;
  }

  /**
   * store(), last, once the store holds message `seq` of `bytes`: counts it, sets the
   * max_age timer if none is set, and applies max_msgs and max_bytes.
   */
  protected added(seq: number, bytes: number): void {
    this.last = seq;
    this.total++;
    this.size += bytes;
    if (this.maxAgeNanos !== undefined && this.ageTimer === undefined) this.scheduleExpiry();
    this.enforceCountAndSize();
  }

  /** empty(): no message, no timer, sequences back to 0, the limits warning due again. */
  protected reset(): void {
    this.stopTimer();
    this.first = 0;
    this.last = 0;
    this.total = 0;
    this.size = 0;
    this.hitLimit = false;
  }

  // The newest message always stays, even when it alone exceeds max_bytes.
  protected enforceCountAndSize(): void {
    const { maxMsgs, maxBytes } = this.limits;
    if (maxMsgs <= 0 && maxBytes <= 0) return;
    while (
      this.total > 1 &&
      ((maxMsgs > 0 && this.total > maxMsgs) || (maxBytes > 0 && this.size > maxBytes))
    ) {
      this.dropOverLimit();
      if (!this.hitLimit) {
        this.hitLimit = true;
        this.warn?.(droppingMsgsWarning(this.channel, this.total, maxMsgs, this.size, maxBytes));
      }
    }
  }

  /** Sets the max_age timer for when the oldest message expires. */
  protected scheduleExpiry(): void {
    const waitNanos = this.oldestTimestamp().add(this.maxAgeNanos!).subtract(nowNanos());
    this.ageTimer = startTimer(waitNanos.toNumber() / 1e6, () => {
      this.ageTimer = undefined;
      if (!this.isClosed()) this.expire();
    });
  }

  /** Drops the messages older than max_age, then sets the timer for the next one. */
  protected expire(): void {
    const now = nowNanos();
    while (this.total > 0) {
      if (this.oldestTimestamp().add(this.maxAgeNanos!).greaterThan(now)) {
        this.scheduleExpiry();
        return;
      }
      this.dropOldest();
    }
  }
}

// Out of line: V8 inlines the checks above into store() and store() into the publish
// path within a budget of bytecode; with these texts built inline, store() alone ran
// about a third slower (memory store, max_msgs reached: 31 against 46 M/s).
function invalidSequence(seq: number): StoreError {
  return new StoreError('INVALID_SEQUENCE', `invalid sequence ${seq}`);
}

function notFollowing(seq: number, last: number): StoreError {
  return new StoreError('INVALID_SEQUENCE', `sequence ${seq} does not follow ${last}`);
}
