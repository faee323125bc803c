// One streaming subscription: where its messages go, what it has sent and not had
// acked, MaxInflight (stalled), AckWait and redelivery.
//
// Pending messages are a SeqSet (a sliding window of bits: a Map from sequence to
// expiration, under a catch-up's churn of one insertion and one deletion per message,
// cost 150-450 ns of each). Their expirations are not kept per message: first
// deliveries go out in rising sequence order and share `now + AckWait` with everything
// sent in the same millisecond, so a mark (first sequence, expiration) per
// millisecond of sending says when each expires. Redeliveries, messages taken over from
// a member that left and recovered ones expire at their own times (`odd`).

import { markRedelivered } from './protocol/msgproto.js';
import { SeqSet } from './store/seq-set.js';
import type { StoredMsg, SubRecord } from './store/types.js';
import type { BusSubscription } from './bus.js';
import type { Channel } from './channel.js';
import type { StanClient } from './client.js';
import type { QueueGroup } from './queue.js';

export class Sub {
  /** Store record ID (per channel). */
  id: number;
  clientID: string;
  inbox: string;
  ackInbox: string;
  /** Durable name of a plain durable (empty for queue members, as in monitoring). */
  readonly durableName: string;
  /** Queue group as monitoring shows it ("dur:group" for durable groups), or ''. */
  readonly queueName: string;
  readonly isDurable: boolean;
  maxInflight: number;
  ackWaitSecs: number;
  ackWaitMs: number;
  /** Highest sequence sent to this subscription. */
  lastSent: number;
  /** Offline durable or durable queue shadow: kept, nothing is sent. */
  offline = false;
  stalled = false;
  /** Sent and not acked: read it here, change it through the methods below. */
  readonly pending = new SeqSet();
  /**
   * First deliveries' expirations: sequences from markSeq[k] up to the next mark
   * expire at markExp[k] (ms since epoch); both rise. expired() drops spent ones.
   */
  private readonly markSeq: number[] = [];
  private readonly markExp: number[] = [];
  /** One past the last sequence the marks cover. */
  private markEnd = 0;
  /** Pending sequences that expire at their own time, not at their mark's. */
  private odd: Map<number, number> | null = null;
  /** The odd ones were added in expiration order (true unless adopted or recovered). */
  private oddOrdered = true;
  /** Redelivery counts by sequence, for a subscription outside a queue group. */
  private redeliveries: Map<number, number> | null = null;
  group: QueueGroup | null = null;
  client: StanClient | null = null;
  ackSub: BusSubscription | null = null;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = 0;
  /** A message fetch from the store is in progress (stores that read asynchronously). */
  fetching = false;
  /** Messages sent since its connection's backlog was last looked at (channel.ts mustWait). */
  sentSinceCheck = 0;
  /** Delivery paused for a congested connection (channel.ts retryLater). */
  waiting = false;
  /**
   * Answered only once its record is durable (handlers/subscribe.ts, clustered):
   * nothing is sent before the SubscriptionResponse.
   */
  starting = false;

  constructor(
    readonly channel: Channel,
    record: SubRecord,
    /** The original durable name (also for durable queue members); store key parts. */
    readonly durable: string,
  ) {
    this.id = record.id;
    this.clientID = record.clientID;
    this.inbox = record.inbox;
    this.ackInbox = record.ackInbox;
    this.queueName = record.qGroup;
    this.isDurable = record.isDurable;
    this.durableName = record.qGroup === '' ? record.durableName : '';
    this.maxInflight = record.maxInFlight;
    this.ackWaitSecs = record.ackWaitInSecs;
    this.ackWaitMs = record.ackWaitInSecs * 1000;
    this.lastSent = record.lastSent;
    this.offline = record.isClosed;
  }

  record(): SubRecord {
    return {
      id: this.id,
      clientID: this.clientID,
      qGroup: this.queueName,
      inbox: this.inbox,
      ackInbox: this.ackInbox,
      maxInFlight: this.maxInflight,
      ackWaitInSecs: this.ackWaitSecs,
      // As the reference stores a queue member: its durable name is in qGroup only.
      durableName: this.queueName === '' ? this.durable : '',
      lastSent: this.lastSent,
      isDurable: this.isDurable,
      isClosed: this.offline,
    };
  }

  /** The pending sequences in ascending order. */
  pendingSorted(): number[] {
    return [...this.pending];
  }

  /** A pending message from the store (recovery): due for redelivery at once. */
  restorePending(seq: number): void {
    this.pending.add(seq);
    this.setOdd(seq, 0);
    this.oddOrdered = false;
  }

  /** Drops every pending message (they went to other members). */
  clearPending(): void {
    this.pending.clear();
    this.clearExpirations();
  }

  /** First delivery of message `seq`. */
  send(seq: number, msg: StoredMsg, now: number): void {
    this.sending(seq, now);
    this.channel.server.sendMsg(this.inbox, msg.encoded);
    this.sent(now);
  }

  /** send() of a message held at `buf[start, end)` (a memory store's bytes, no view). */
  sendRange(seq: number, buf: Buffer, start: number, end: number, now: number): void {
    this.sending(seq, now);
    this.channel.server.sendMsgRange(this.inbox, buf, start, end);
    this.sent(now);
  }

  private sending(seq: number, now: number): void {
    this.lastSent = seq;
    const expiry = now + this.ackWaitMs;
    const marks = this.markSeq;
    const n = marks.length;
    if (n > 0 && seq < this.markEnd) {
      // Inside the marks' ranges (never for first deliveries in order): its own time.
      this.setOdd(seq, expiry);
    } else {
      if (n === 0 || this.markExp[n - 1] !== expiry) {
        marks.push(seq);
        this.markExp.push(expiry);
      }
      this.markEnd = seq + 1;
    }
    this.pending.add(seq);
    this.channel.store.subs.addPending(this.id, seq);
  }

  private sent(now: number): void {
    if (this.pending.size >= this.maxInflight) this.stalled = true;
    if (this.timer === null) this.armTimer(now + this.ackWaitMs, now);
  }

  /** A redelivery (forced: MaxInflight does not apply), flagged and counted. */
  resend(seq: number, msg: StoredMsg, now: number): void {
    const counts = this.group !== null ? this.group.redeliveries : this.ownCounts();
    const count = (counts.get(seq) ?? 0) + 1;
    counts.set(seq, count);
    this.pending.add(seq);
    this.setOdd(seq, now + this.ackWaitMs);
    if (this.pending.size >= this.maxInflight) this.stalled = true;
    this.channel.server.sendMsg(this.inbox, markRedelivered(msg.encoded, count));
    if (this.timer === null) this.armTimer(now + this.ackWaitMs, now);
  }

  /** Takes `seq` as pending, to be redelivered at `expiry` (messages of a member that left). */
  adopt(seq: number, expiry: number, now: number): void {
    this.pending.add(seq);
    this.setOdd(seq, expiry);
    this.oddOrdered = false;
    this.channel.store.subs.addPending(this.id, seq);
    if (seq > this.lastSent) this.lastSent = seq;
    if (this.pending.size >= this.maxInflight) this.stalled = true;
    this.armTimer(expiry, now);
  }

  /** Removes `seq` from the pending set; false if it was not pending here. */
  forget(seq: number): boolean {
    if (!this.pending.delete(seq)) return false;
    this.channel.store.subs.ack(this.id, seq);
    if (this.group !== null) this.group.redeliveries.delete(seq);
    else this.redeliveries?.delete(seq);
    if (this.odd !== null && this.odd.size > 0) this.odd.delete(seq);
    // The ack timer stays armed: when it fires with nothing (or nothing expired)
    // pending it only looks at the first entry. Clearing it here cost a clearTimeout
    // and a setTimeout per message whenever acks kept up with deliveries.
    if (this.pending.size === 0) this.clearExpirations();
    return true;
  }

  /** Removes `seq` from the pending set without an ack record (it moves to another member). */
  dropPending(seq: number): void {
    this.pending.delete(seq);
    if (this.odd !== null && this.odd.size > 0) this.odd.delete(seq);
  }

  /** Appended, so that the Map's order stays expiration order when times rise. */
  private setOdd(seq: number, expiry: number): void {
    const odd = (this.odd ??= new Map<number, number>());
    odd.delete(seq);
    odd.set(seq, expiry);
  }

  private clearExpirations(): void {
    this.markSeq.length = 0;
    this.markExp.length = 0;
    if (this.odd !== null && this.odd.size > 0) this.odd.clear();
    this.oddOrdered = true;
  }

  private ownCounts(): Map<number, number> {
    this.redeliveries ??= new Map<number, number>();
    return this.redeliveries;
  }

  /** Arms the ack timer to fire at `at` unless it already fires sooner. */
  armTimer(at: number, now: number): void {
    if (this.offline) return;
    if (this.timer !== null) {
      if (this.timerAt <= at) return;
      clearTimeout(this.timer);
    }
    this.timerAt = at;
    this.timer = setTimeout(this.onTimer, Math.max(0, at - now));
    this.timer.unref();
  }

  stopTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    if (this.offline || this.pending.size === 0) return;
    this.channel.server.redeliverExpired(this);
  };

  /** Sequences whose AckWait has passed, in ascending order, and the next expiration (0 if none). */
  expired(now: number): { seqs: number[]; next: number } {
    const seqs: number[] = [];
    let next = 0;
    const odd = this.odd;
    if (odd !== null) {
      for (const [seq, expiry] of odd) {
        if (expiry <= now) {
          seqs.push(seq);
        } else {
          if (next === 0 || expiry < next) next = expiry;
          if (this.oddOrdered) break;
        }
      }
    }
    // The marks, oldest first. An expired mark's pending messages are all due; they
    // are redelivered (and so become odd ones), and the mark is spent once none of its
    // messages waits on it any more, as is one whose messages were all acked. The
    // first mark still waiting on a pending message gives the next expiration. The
    // spent marks in front are dropped: each range is walked a few times at most.
    const marks = this.markSeq;
    const pending = this.pending;
    let spent = 0;
    for (let k = 0; k < marks.length; k++) {
      const from = marks[k]!;
      const to = k + 1 < marks.length ? marks[k + 1]! : this.markEnd;
      const expiry = this.markExp[k]!;
      let waiting = false;
      if (expiry <= now) {
        for (let seq = from; seq < to; seq++) {
          if (pending.has(seq) && (odd === null || !odd.has(seq))) {
            seqs.push(seq);
            waiting = true;
          }
        }
      } else {
        for (let seq = from; seq < to && !waiting; seq++) {
          waiting = pending.has(seq) && (odd === null || !odd.has(seq));
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
    if (odd !== null && odd.size > 0) seqs.sort((a, b) => a - b);
    return { seqs, next };
  }
}
