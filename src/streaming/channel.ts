// A channel: its store, its subscriptions (plain, durable, queue groups) and the
// delivery of its messages to them. Sequences and timestamps are assigned here.

import type Long from 'long';
import { type Halves, newHalves, nowNanos, nowNanosInto } from './protocol/int64.js';
import { Slabs } from './protocol/slabs.js';
import type { ChannelStore, MaybePromise, StoredMsg } from './store/types.js';
import type { PublishLane } from './publish-lane.js';
import type { QueueGroup } from './queue.js';
import type { StreamingServer } from './server.js';
import type { Sub } from './subscription.js';

/**
 * Messages sent to one subscription between two looks at its connection's backlog.
 * Counted on the subscription across calls: once MaxInflight is reached each ack
 * sends one message, and a count per call never reached its check (a catch-up of
 * 16,384 x 1 KiB in flight then queued past max_pending and was cut off).
 */
const CHECK_EVERY = 128;
/** How long a congested subscriber gets to drain before delivery resumes. */
const RETRY_MS = 2;

/**
 * Where stamp() reads the clock, once per publish batch: the publishes of one turn
 * (one read of a connection holds hundreds) arrived together and share a timestamp,
 * as they share a store flush. A clock read per message was 4% of a publish.
 */
const clock = newHalves();
let clockRead = false;

/** The next stamp() reads the clock again (a new publish batch begins). */
export function newStampTurn(): void {
  clockRead = false;
}

/** pb.StartPosition's values. */
const START = {
  NewOnly: 0,
  LastReceived: 1,
  TimeDeltaStart: 2,
  SequenceStart: 3,
  First: 4,
} as const;

export class Channel {
  /** Online subscriptions outside queue groups (durables included), in add order. */
  readonly plain: Sub[] = [];
  /** Durables by `clientID + "-" + durableName`, online or offline. */
  readonly durables = new Map<string, Sub>();
  readonly groups = new Map<string, QueueGroup>();
  /**
   * The last timestamp given (stamp()), as unsigned halves: timestamps never go
   * backwards within a channel.
   */
  readonly ts: Halves = newHalves();
  /** New messages were stored since the last delivery pass. */
  dirty = false;
  /** Subscribe requests in progress: they keep max_inactivity from deleting the channel. */
  subscribing = 0;
  /**
   * The last sequence made durable by a store flush: only messages up to it are
   * delivered (a PubAck and a delivery both mean "persisted").
   */
  deliverable: number;
  /** The store's name, read on every publish (a field, not a call through the store). */
  readonly name: string;
  /** The name in UTF-8, as MsgProto.subject and Ack.subject carry it. */
  readonly nameBytes: Buffer;
  /** Where this channel's stored messages are marshaled (oldest leave first). */
  readonly slabs = new Slabs();
  /** Where its publishes are batched and acknowledged (publish-lane.ts). */
  readonly lane: PublishLane;

  constructor(
    readonly server: StreamingServer,
    readonly store: ChannelStore,
  ) {
    this.deliverable = store.msgs.lastSequence;
    this.name = store.name;
    this.nameBytes = Buffer.from(store.name);
    this.lane = server.laneFor(store);
  }

  /** The next sequence to assign. */
  get nextSequence(): number {
    return this.store.msgs.lastSequence + 1;
  }

  /**
   * Sets `ts` to the timestamp of a new message: this batch's clock reading, or the
   * previous one if the clock went back. No Long is made (one per message showed in GC).
   */
  stamp(): void {
    if (!clockRead) {
      nowNanosInto(clock);
      clockRead = true;
    }
    const last = this.ts;
    if (clock.high < last.high || (clock.high === last.high && clock.low < last.low)) return;
    last.low = clock.low;
    last.high = clock.high;
  }

  /** Subscriptions as serverz/channelsz count them: online, offline durables, members, shadows. */
  get subsCount(): number {
    let n = this.plain.length;
    for (const d of this.durables.values()) if (d.offline) n++;
    for (const g of this.groups.values()) n += g.members.length + (g.shadow !== null ? 1 : 0);
    return n;
  }

  /** True while some subscription is online (max_inactivity). */
  hasActiveSubs(): boolean {
    if (this.plain.length > 0) return true;
    for (const g of this.groups.values()) if (g.members.length > 0) return true;
    return false;
  }

  /** Every subscription, in the order monitoring lists them. */
  allSubs(): Sub[] {
    const out = [...this.plain];
    for (const d of this.durables.values()) if (d.offline) out.push(d);
    for (const g of this.groups.values()) {
      out.push(...g.members);
      if (g.shadow !== null) out.push(g.shadow);
    }
    return out;
  }

  /** Sends new messages to every subscription that can take them. */
  deliverNew(): void {
    this.dirty = false;
    const plain = this.plain;
    for (let i = 0; i < plain.length; i++) this.sendAvailable(plain[i]!);
    if (this.groups.size > 0) for (const g of this.groups.values()) this.sendGroup(g);
  }

  /** Sends a subscription the messages after its last sent one, up to MaxInflight. */
  sendAvailable(sub: Sub): void {
    if (sub.group !== null) {
      this.sendGroup(sub.group);
      return;
    }
    const msgs = this.store.msgs;
    const now = Date.now();
    while (
      !sub.stalled &&
      !sub.offline &&
      !sub.fetching &&
      !sub.waiting &&
      !sub.starting &&
      sub.lastSent < this.deliverable
    ) {
      if (this.mustWait(sub)) return;
      let seq = sub.lastSent + 1;
      // Messages removed by limits are skipped: delivery jumps to the first available.
      if (seq < msgs.firstSequence) seq = msgs.firstSequence;
      if (msgs.bytesOf !== undefined) {
        // Held in memory: its bytes, without a message object or a view.
        const buf = msgs.bytesOf(seq);
        if (buf !== null) {
          if (buf === undefined) sub.lastSent = seq;
          else sub.sendRange(seq, buf, msgs.rangeStart!, msgs.rangeEnd!, now);
          continue;
        }
      }
      const found = msgs.lookup(seq);
      if (found instanceof Promise) {
        this.fetchFor(sub, seq, found);
        return;
      }
      if (found === undefined) sub.lastSent = seq;
      else sub.send(seq, found, now);
    }
  }

  /** Sends a queue group's next messages, each to its best member. */
  sendGroup(g: QueueGroup): void {
    const msgs = this.store.msgs;
    const now = Date.now();
    while (g.lastSent < this.deliverable) {
      const member = g.pick();
      if (member === null || member.fetching || member.waiting) return;
      if (this.mustWait(member)) return;
      let seq = g.lastSent + 1;
      if (seq < msgs.firstSequence) seq = msgs.firstSequence;
      if (msgs.bytesOf !== undefined) {
        const buf = msgs.bytesOf(seq);
        if (buf !== null) {
          g.lastSent = seq;
          if (buf !== undefined) member.sendRange(seq, buf, msgs.rangeStart!, msgs.rangeEnd!, now);
          continue;
        }
      }
      const found = msgs.lookup(seq);
      if (found instanceof Promise) {
        this.fetchForGroup(g, member, seq, found);
        return;
      }
      g.lastSent = seq;
      if (found !== undefined) member.send(seq, found, now);
    }
  }

  /**
   * Every CHECK_EVERY messages to `sub`, a look at its connection: while much output
   * waits there, delivery pauses (true) and tries again RETRY_MS later.
   */
  private mustWait(sub: Sub): boolean {
    if (++sub.sentSinceCheck < CHECK_EVERY) return false;
    sub.sentSinceCheck = 0;
    if (!this.server.bus.congested(sub.inbox)) return false;
    this.retryLater(sub);
    return true;
  }

  /** Delivery to a congested subscriber goes on once its output had time to drain. */
  private retryLater(sub: Sub): void {
    if (sub.waiting) return;
    sub.waiting = true;
    setTimeout(() => {
      sub.waiting = false;
      if (sub.offline || this.server.channels.get(this.name) !== this) return;
      // Look again before the first message.
      sub.sentSinceCheck = CHECK_EVERY - 1;
      if (sub.group !== null) this.sendGroup(sub.group);
      else this.sendAvailable(sub);
    }, RETRY_MS);
  }

  // The store reads message `seq` for `sub` (or a group's member), which waits for it.
  // Apart from the sending loops: a closure there made V8 allocate a context for the
  // captured variables on every call, that is on every ack once MaxInflight is reached.
  private fetchFor(sub: Sub, seq: number, found: Promise<StoredMsg | undefined>): void {
    sub.fetching = true;
    this.later(found, sub, (m) => {
      if (sub.lastSent < seq && m !== undefined) sub.send(seq, m, Date.now());
      else if (sub.lastSent < seq) sub.lastSent = seq;
    });
  }

  private fetchForGroup(
    g: QueueGroup,
    member: Sub,
    seq: number,
    found: Promise<StoredMsg | undefined>,
  ): void {
    member.fetching = true;
    this.later(found, member, (m) => {
      if (g.lastSent >= seq) return;
      g.lastSent = seq;
      if (m !== undefined) member.send(seq, m, Date.now());
    });
  }

  private later(
    found: Promise<StoredMsg | undefined>,
    sub: Sub,
    use: (m: StoredMsg | undefined) => void,
  ): void {
    found.then(
      (m) => {
        sub.fetching = false;
        if (sub.offline) return;
        use(m);
        this.sendAvailable(sub);
      },
      (err: unknown) => {
        sub.fetching = false;
        this.server.logger.error(
          `STAN: Unable to lookup message in channel "${this.name}": ${String(err)}`,
        );
      },
    );
  }

  /**
   * The initial last-sent sequence for a start position (the reference's
   * setSubStartSequence); the first message delivered is the one after it.
   */
  async startSequence(position: number, startSeq: number, deltaNanos: Long): Promise<number> {
    const msgs = this.store.msgs;
    const first = msgs.firstSequence;
    const last = msgs.lastSequence;
    switch (position) {
      case START.NewOnly:
        return last;
      case START.LastReceived:
        return last > 0 ? last - 1 : 0;
      case START.TimeDeltaStart: {
        if (last === 0) return 0;
        const from = nowNanos().subtract(deltaNanos);
        const seq = await maybe(msgs.sequenceFromTimestamp(from));
        return seq > 0 ? seq - 1 : 0;
      }
      case START.SequenceStart:
        if (last === 0) return 0;
        if (startSeq > last) return last;
        if (startSeq < first) return first - 1;
        return startSeq - 1;
      case START.First:
        return first > 0 ? first - 1 : 0;
      default:
        return last;
    }
  }
}

function maybe<T>(v: MaybePromise<T>): Promise<T> {
  return v instanceof Promise ? v : Promise.resolve(v);
}
