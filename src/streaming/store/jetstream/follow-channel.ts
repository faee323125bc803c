// One channel of a Follower's warm view. The Follower hears the Leader's publishes to
// the channel's subject and the Leader's confirmations (core NATS, follow.ts): "JetStream
// stored my publishes up to sequence N", sent once a turn from JetStream's PubAcks
// (writer.ts). A message is applied once its publish arrived and a confirmation of the
// same Leader term (the same ack subject) covers its sequence, in either order. A
// Leader confirms only what JetStream acknowledged, so a write it refused (a deposed
// Leader's, answered with an error) is never applied, and what is applied is exactly
// the stream, sequence for sequence.
//
// The stream itself is read (an ordered consumer) only when the live view cannot be
// trusted to be whole: when the channel is first seen, after a gap (a stored message
// was missed: a later sequence was confirmed first), when a lone publish or
// confirmation stays unmatched (its other half was missed), and after a reconnect. The read runs
// until the mirror holds the stream's last sequence (as of the read's start) and every
// message confirmed meanwhile; then the live view carries on alone.
import { DeliverPolicy, type ConsumerMessages, type JsMsg } from 'nats';
import type { StoredMsg } from '../types.js';
import type { JsChannel } from './channel.js';
import { storedFromStream } from './codec.js';
import type { JsEngine } from './engine.js';
import { REPLY_HEADER, TIMESTAMP_HEADER } from './names.js';

const RETRY_MS = 500;
/**
 * Ticks (of follow.ts, every 500 ms) without progress before an unmatched publish or
 * confirmation makes the stream read: long enough that a confirmation slow to come under load
 * does not cause a read, short enough that a missed last message is soon read.
 */
const STALE_TICKS = 4;
/**
 * A confirmation covering more unapplied sequences than this (a Leader has at most
 * 2048 out per channel, writer.ts) means the Follower missed most of them: it reads
 * the stream instead of noting every sequence as confirmed.
 */
const MAX_CONFIRM_SPAN = 8192;

/** A publish heard for a sequence, waiting for its confirmation. */
interface Candidate {
  readonly ack: string;
  msg: StoredMsg;
  /** Another Leader's publish for the same sequence (rare: a deposed Leader's). */
  next: Candidate | undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A message of a channel stream as the store keeps it. */
export function storedFromJs(ch: JsChannel, m: JsMsg): StoredMsg {
  const h = m.headers;
  const reply = h?.get(REPLY_HEADER);
  return storedFromStream(
    m.seq,
    ch.name,
    h?.get(TIMESTAMP_HEADER),
    reply === '' ? undefined : reply,
    m.data,
  );
}

export class ChannelFollow {
  /** Publishes heard, by sequence, not yet acknowledged. */
  private readonly candidates = new Map<number, Candidate>();
  /** Sequences confirmed (sequence → ack subject) whose publish was not heard yet. */
  private readonly acks = new Map<number, string>();
  /** Highest sequence each Leader term (by its ack subject) confirmed. */
  private readonly through = new Map<string, number>();
  /** Confirmed messages beyond a gap, applied once the gap is read. */
  private readonly ready = new Map<number, StoredMsg>();
  private reading = false;
  /** The stream's last sequence when the current read started. */
  private readTarget = 0;
  private reader: ConsumerMessages | undefined;
  /** Which reader's messages count: a stopped one may still deliver a few. */
  private readerToken = 0;
  private stopped = false;
  /** A publish heard that no Leader will confirm (unconfirmable()). */
  private unmatched = false;
  private tickApplied = -1;
  private idleTicks = 0;
  /** Stream reads started (what the live view could not cover), for tests. */
  reads = 0;

  constructor(
    readonly ch: JsChannel,
    private readonly engine: JsEngine,
  ) {}

  /** Highest sequence in the mirror. */
  get applied(): number {
    return this.ch.msgs.lastSequence;
  }

  /** The Leader published `msg` (sequence `seq`) with PubAcks to `ack`. */
  published(seq: number, ack: string, msg: StoredMsg): void {
    if (seq <= this.applied) return;
    if (this.acks.get(seq) === ack || seq <= (this.through.get(ack) ?? 0)) {
      this.acks.delete(seq);
      this.confirmed(seq, msg);
      return;
    }
    const first = this.candidates.get(seq);
    for (let c = first; c !== undefined; c = c.next) {
      if (c.ack === ack) {
        c.msg = msg; // sent again by the same Leader: the same message
        return;
      }
    }
    this.candidates.set(seq, { ack, msg, next: first });
  }

  /**
   * The Leader whose publishes carry `ack` says JetStream stored them up to `through`
   * (those before its first write are another term's: never matched to its ack).
   */
  confirmedThrough(through: number, ack: string): void {
    const before = this.through.get(ack) ?? 0;
    if (through <= before) return;
    this.through.set(ack, through);
    const from = Math.max(this.applied, before) + 1;
    if (through - from >= MAX_CONFIRM_SPAN) {
      void this.read();
      return;
    }
    for (let seq = from; seq <= through; seq++) this.acked(seq, ack);
  }

  /** JetStream stored sequence `seq` of the stream, published with PubAcks to `ack`. */
  private acked(seq: number, ack: string): void {
    if (seq <= this.applied) return;
    for (let c = this.candidates.get(seq); c !== undefined; c = c.next) {
      if (c.ack === ack) {
        this.candidates.delete(seq);
        this.confirmed(seq, c.msg);
        return;
      }
    }
    this.acks.set(seq, ack);
  }

  /** A publish no confirmation can match was heard: the stream is read after a moment. */
  unconfirmable(): void {
    this.unmatched = true;
  }

  private confirmed(seq: number, msg: StoredMsg): void {
    const next = this.applied + 1;
    if (seq === next) {
      this.apply(msg);
      this.drain();
    } else if (seq > next) {
      this.ready.set(seq, msg);
      if (!this.reading) void this.read();
    }
  }

  private apply(msg: StoredMsg): void {
    const seq = msg.sequence;
    this.ch.msgs.apply(msg);
    this.candidates.delete(seq);
    this.acks.delete(seq);
    this.ready.delete(seq);
  }

  /** Applies the confirmed messages that follow; ends a read that caught up. */
  private drain(): void {
    for (let m = this.ready.get(this.applied + 1); m !== undefined;) {
      this.apply(m);
      m = this.ready.get(this.applied + 1);
    }
    if (this.reading && this.applied >= this.readTarget && this.ready.size === 0) this.endRead();
  }

  /**
   * Reads the stream from after what the mirror holds until it holds the stream's
   * last sequence and every message confirmed meanwhile.
   */
  read(): Promise<void> {
    if (this.reading || this.stopped) return Promise.resolve();
    this.reading = true;
    this.reads++;
    this.unmatched = false; // what it stood for is in the stream by now: read below

    return this.startReader();
  }

  private async startReader(): Promise<void> {
    while (this.readingNow()) {
      try {
        const state = await this.engine.streamState(this.ch.stream);
        // The stream is created after the channel's key: not yet.
        if (state === null) throw new Error('no stream');
        if (!this.readingNow()) return;
        // Messages purged from the stream (limits) are not waited for.
        this.readTarget = state.last >= state.first ? state.last : 0;
        this.drain();
        if (!this.readingNow()) return;
        const consumer = await this.engine.js.consumers.get(this.ch.stream, {
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: this.applied + 1,
        });
        if (!this.readingNow()) return;
        const token = ++this.readerToken;
        const reader = await consumer.consume({ callback: (m) => this.fromStream(token, m) });
        if (!this.readingNow() || token !== this.readerToken) {
          reader.stop();
          return;
        }
        this.reader = reader;
        return;
      } catch {
        await sleep(RETRY_MS);
      }
    }
  }

  /** A read is wanted (checked after every await: it may have ended meanwhile). */
  private readingNow(): boolean {
    return this.reading && !this.stopped;
  }

  private fromStream(token: number, m: JsMsg): void {
    if (token !== this.readerToken || !this.readingNow()) return;
    if (m.seq > this.applied) this.apply(storedFromJs(this.ch, m));
    this.drain();
  }

  private endRead(): void {
    this.reading = false;
    this.readerToken++;
    this.reader?.stop();
    this.reader = undefined;
    // What the read passed over (the stream dropped it by limits) is no longer wanted.
    const applied = this.applied;
    for (const seq of this.ready.keys()) if (seq <= applied) this.ready.delete(seq);
    for (const seq of this.candidates.keys()) if (seq <= applied) this.candidates.delete(seq);
    for (const seq of this.acks.keys()) if (seq <= applied) this.acks.delete(seq);
  }

  /**
   * Called every few hundred milliseconds: a publish or confirmation left unmatched while
   * nothing was applied for STALE_TICKS ticks had its other half missed (or was a
   * refused write): the stream is read, and the unmatched halves are forgotten.
   */
  tick(): void {
    if (this.reading || this.stopped) return;
    if (this.applied !== this.tickApplied) {
      this.tickApplied = this.applied;
      this.idleTicks = 0;
      return;
    }
    if (this.candidates.size + this.acks.size + this.ready.size === 0 && !this.unmatched) {
      this.idleTicks = 0;
      return;
    }
    if (++this.idleTicks < STALE_TICKS) return;
    this.idleTicks = 0;
    this.candidates.clear();
    this.acks.clear();
    void this.read();
  }

  stop(): void {
    this.stopped = true;
    this.reading = false;
    this.readerToken++;
    this.reader?.stop();
    this.reader = undefined;
    this.candidates.clear();
    this.acks.clear();
    this.through.clear();
    this.ready.clear();
  }
}
