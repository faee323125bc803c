// A subscription's pending messages (sent, not acked yet) and when each one's AckWait
// ends. The sequences are a SeqSet (a sliding window of bits): a Map from sequence
// to expiration, under a catch-up's churn of one insertion and one deletion per
// message, cost 150-450 ns of each (bench/file-store.ts, "pending").
//
// Expirations are not kept per message. First deliveries go out in rising sequence
// order and share `now + AckWait` with everything sent in the same millisecond, so
// one mark (first sequence, expiration) per millisecond of sending says when each of
// them expires. Redeliveries, messages taken over from a member that left and
// recovered ones expire at their own times (`own`, a Map in the order they were set).

import { SeqSet } from './store/seq-set.js';

export class Pending {
  private readonly seqs = new SeqSet();
  /**
   * First deliveries: sequences from markSeq[k] up to the next mark (the last one up
   * to markEnd) expire at markExp[k], in ms since the epoch; both rise.
   */
  private readonly markSeq: number[] = [];
  // Holds clock times: doubles from the start (the -0 leaves with clearTimes()), or the
  // first expiration pushed changes the array's elements kind under compiled code.
  private readonly markExp: number[] = [-0];
  // -1 until the constructor's clear(): written twice, a variable to V8 from the
  // start (see SeqSet's constructor).
  private markEnd = -1;
  /** Pending sequences that expire at their own time, not at their mark's. */
  private own: Map<number, number> | null = null;
  /** `own` was filled in expiration order (redeliveries only). */
  private ownOrdered = false;

  constructor() {
    this.clearTimes();
  }

  get size(): number {
    return this.seqs.size;
  }

  has(seq: number): boolean {
    return this.seqs.has(seq);
  }

  /** The sequences in ascending order. */
  [Symbol.iterator](): IterableIterator<number> {
    return this.seqs.values();
  }

  /** A first delivery of `seq`, due again at `expiry`. */
  sent(seq: number, expiry: number): void {
    const marks = this.markSeq;
    const n = marks.length;
    if (n > 0 && seq < this.markEnd) {
      // Inside the marks' ranges (not for first deliveries in order): its own time.
      this.setOwn(seq, expiry, true);
      return;
    }
    if (n === 0 || this.markExp[n - 1] !== expiry) {
      marks.push(seq);
      this.markExp.push(expiry);
    }
    this.markEnd = seq + 1;
    this.seqs.add(seq);
  }

  /**
   * `seq` is pending until `expiry`, whatever its mark says. `latest`: no other own
   * time is later (a redelivery now), so the Map stays in expiration order.
   */
  setOwn(seq: number, expiry: number, latest: boolean): void {
    this.seqs.add(seq);
    const own = (this.own ??= new Map<number, number>());
    own.delete(seq);
    own.set(seq, expiry);
    if (!latest) this.ownOrdered = false;
  }

  /** Removes `seq`; false if it was not pending. */
  delete(seq: number): boolean {
    if (!this.seqs.delete(seq)) return false;
    if (this.seqs.size === 0) this.clearTimes();
    else if (this.own !== null && this.own.size > 0) this.own.delete(seq);
    return true;
  }

  clear(): void {
    this.seqs.clear();
    this.clearTimes();
  }

  private clearTimes(): void {
    this.markSeq.length = 0;
    this.markExp.length = 0;
    this.markEnd = 0;
    if (this.own !== null && this.own.size > 0) this.own.clear();
    this.ownOrdered = true;
  }

  /**
   * The sequences whose AckWait has passed at `now`, ascending, and the next
   * expiration of the others (0 if none). Those returned stay pending: the caller
   * redelivers them (setOwn) or forgets them (delete).
   */
  expired(now: number): { seqs: number[]; next: number } {
    const seqs: number[] = [];
    let next = 0;
    const own = this.own;
    if (own !== null) {
      for (const [seq, expiry] of own) {
        if (expiry <= now) {
          seqs.push(seq);
        } else {
          if (next === 0 || expiry < next) next = expiry;
          if (this.ownOrdered) break;
        }
      }
    }
    // The marks, oldest first. An expired mark's pending messages are all due (once
    // redelivered they have their own time, and the mark is spent once none of its
    // messages waits on it any more), as is one whose messages were all acked. The
    // first mark still waiting on a pending message gives the next expiration. The
    // spent marks in front are dropped: each range is walked a few times at most.
    const marks = this.markSeq;
    const pending = this.seqs;
    let spent = 0;
    for (let k = 0; k < marks.length; k++) {
      const from = marks[k]!;
      const to = k + 1 < marks.length ? marks[k + 1]! : this.markEnd;
      const expiry = this.markExp[k]!;
      let waiting = false;
      if (expiry <= now) {
        for (let seq = from; seq < to; seq++) {
          if (pending.has(seq) && (own === null || !own.has(seq))) {
            seqs.push(seq);
            waiting = true;
          }
        }
      } else {
        for (let seq = from; seq < to && !waiting; seq++) {
          waiting = pending.has(seq) && (own === null || !own.has(seq));
        }
        if (waiting) {
          if (next === 0 || expiry < next) next = expiry;
          break;
        }
      }
      if (!waiting && spent === k) spent = k + 1;
    }
    if (spent > 0) {
      marks.splice(0, spent);
      this.markExp.splice(0, spent);
    }
    if (own !== null && own.size > 0) seqs.sort((a, b) => a - b);
    return { seqs, next };
  }
}
