// One streaming subscription: where its messages go, what it has sent and not had
// acked (pending.ts), MaxInflight (stalled), AckWait and redelivery.

import { markRedelivered } from './protocol/msgproto.js';
import { Pending } from './pending.js';
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
  offline: boolean;
  // The fields below that change while messages flow get their start value in the
  // constructor, after a declaration or a placeholder of the same kind (a small
  // integer, a double): each is written twice, and V8 holds it as a variable from the
  // first subscription on. A field written once is
  // a constant to V8, and its first change (the first stall, the first ack timer, the
  // first congestion pause) threw away the delivery code compiled around it in the
  // middle of a fresh server's first catch-up.
  stalled: boolean;
  /** Sent and not acked, and when each is due again (changed through the methods below). */
  readonly pending = new Pending();
  /** Redelivery counts by sequence, for a subscription outside a queue group. */
  private redeliveries: Map<number, number> | null = null;
  group: QueueGroup | null = null;
  client: StanClient | null = null;
  ackSub: BusSubscription | null = null;
  private timer: NodeJS.Timeout | null;
  /** A clock time: a double (NaN, then -0 in the constructor; see above). */
  private timerAt = NaN;
  /** A message fetch from the store is in progress (stores that read asynchronously). */
  fetching: boolean;
  /** Messages sent since its connection's backlog was last looked at (channel.ts mustWait). */
  sentSinceCheck = -1;
  /** Delivery paused for a congested connection (channel.ts retryLater). */
  waiting: boolean;
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
    this.stalled = false;
    this.timer = null;
    this.timerAt = -0;
    this.fetching = false;
    this.sentSinceCheck = 0;
    this.waiting = false;
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
    // Recovery restores before anything is sent: no own time is later than 0 yet.
    this.pending.setOwn(seq, 0, true);
  }

  /** Drops every pending message (they went to other members). */
  clearPending(): void {
    this.pending.clear();
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
    this.pending.sent(seq, now + this.ackWaitMs);
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
    this.pending.setOwn(seq, now + this.ackWaitMs, true);
    if (this.pending.size >= this.maxInflight) this.stalled = true;
    this.channel.server.sendMsg(this.inbox, markRedelivered(msg.encoded, count));
    if (this.timer === null) this.armTimer(now + this.ackWaitMs, now);
  }

  /** Takes `seq` as pending, to be redelivered at `expiry` (messages of a member that left). */
  adopt(seq: number, expiry: number, now: number): void {
    this.pending.setOwn(seq, expiry, false);
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
    // The ack timer stays armed: when it fires with nothing (or nothing expired)
    // pending it only looks at the first entry. Clearing it here cost a clearTimeout
    // and a setTimeout per message whenever acks kept up with deliveries.
    return true;
  }

  /** Removes `seq` from the pending set without an ack record (it moves to another member). */
  dropPending(seq: number): void {
    this.pending.delete(seq);
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

  /** Sequences whose AckWait has passed, ascending, and the next expiration (0 if none). */
  expired(now: number): { seqs: number[]; next: number } {
    return this.pending.expired(now);
  }
}
