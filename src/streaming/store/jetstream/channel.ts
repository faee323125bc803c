// One channel of the JetStream store: the memory store's message and subscription
// stores (the mirror every read is served from, with the same limits as STANDALONE),
// plus what the Leader still has to write to JetStream. A Follower fills the same
// mirror from the stream and the state bucket with apply*(), which write nothing.
import Long from 'long';
import type { PublishOptions } from 'nats';
import { watchChannelInactivity, type InactivityWatch } from '../inactivity.js';
import type { ChannelLimits } from '../limits.js';
import { MemoryMsgStore, type MsgStoreContext } from '../memory-msgs.js';
import { MemorySubStore } from '../memory-subs.js';
import type { ChannelStore, StoreHooks, StoredMsg, SubInit, SubRecord } from '../types.js';
import { channelKey, channelStreamName, channelSubject } from './names.js';

/** What a channel tells its store (the Leader's write path). */
export interface ChannelSink {
  /** A message was stored by the server (not by apply). */
  stored(ch: JsChannel, msg: StoredMsg): void;
  /** A subscription's record or delivery state changed. */
  subChanged(ch: JsChannel, id: number, recordChanged: boolean): void;
}

export class JsMsgStore extends MemoryMsgStore {
  constructor(
    name: string,
    limits: ChannelLimits,
    ctx: MsgStoreContext,
    private readonly owner: { readonly ch: JsChannel | null; readonly sink: ChannelSink },
  ) {
    super(name, limits, ctx);
  }

  override store(msg: StoredMsg): boolean {
    if (!super.store(msg)) return false;
    this.owner.sink.stored(this.owner.ch!, msg);
    return true;
  }

  /** The publish path's store(): the Leader's write path takes the message as a StoredMsg. */
  override storeRange(
    sequence: number,
    tsLow: number,
    tsHigh: number,
    buf: Buffer,
    start: number,
    end: number,
  ): boolean {
    return this.store({
      sequence,
      timestamp: Long.fromBits(tsLow, tsHigh),
      encoded: buf.subarray(start, end),
    });
  }

  /**
   * A message read from the stream (Follower, catch-up): ignored if already held; a
   * gap (the stream dropped messages by limits before we read them) starts over.
   */
  apply(msg: StoredMsg): void {
    if (msg.sequence <= this.last) return;
    if (this.total > 0 && msg.sequence !== this.last + 1) this.empty();
    super.store(msg);
  }

  /** Drops the messages before `seq` (the stream's first sequence at a promotion). */
  dropBefore(seq: number): void {
    while (this.total > 0 && this.first < seq) this.dropOldest();
  }
}

export class JsSubStore extends MemorySubStore {
  constructor(
    maxSubscriptions: number,
    isClosed: () => boolean,
    onChange: (() => void) | undefined,
    private readonly owner: { readonly ch: JsChannel | null; readonly sink: ChannelSink },
  ) {
    super(maxSubscriptions, isClosed, onChange);
  }

  override create(init: SubInit): SubRecord {
    const record = super.create(init);
    this.owner.sink.subChanged(this.owner.ch!, record.id, true);
    return record;
  }

  override update(record: SubRecord): void {
    super.update(record);
    this.owner.sink.subChanged(this.owner.ch!, record.id, true);
  }

  override delete(id: number): void {
    super.delete(id);
    this.owner.sink.subChanged(this.owner.ch!, id, true);
  }

  override addPending(id: number, sequence: number): void {
    super.addPending(id, sequence);
    this.owner.sink.subChanged(this.owner.ch!, id, false);
  }

  override ack(id: number, sequence: number): void {
    super.ack(id, sequence);
    this.owner.sink.subChanged(this.owner.ch!, id, false);
  }

  /** The state bucket's value of a subscription (Follower). */
  apply(record: SubRecord, pending: readonly number[]): void {
    const entry = this.replace(record);
    entry.pending.clear();
    for (const seq of pending) entry.pending.add(seq);
  }

  /** The subscription's key was deleted (Follower). */
  applyDelete(id: number): void {
    this.remove(id);
  }
}

export class JsChannel implements ChannelStore {
  readonly msgs: JsMsgStore;
  readonly subs: JsSubStore;
  readonly stream: string;
  readonly subject: string;
  readonly key: string;
  private readonly watch: InactivityWatch | undefined;

  // ---- the Leader's writes -----------------------------------------------------------
  /** The stream exists: messages go out as they are stored. */
  ready = false;
  /** Stored before the stream was ready, in order. */
  unsent: StoredMsg[] = [];
  /**
   * Stored, not acknowledged yet, in order: inflight[inflightHead..]; those before
   * inflight[sentUpTo] were published (writer.ts keeps at most a window out).
   */
  inflight: StoredMsg[] = [];
  inflightHead = 0;
  sentUpTo = 0;
  /** Highest sequence published / acknowledged by JetStream. */
  sent = 0;
  acked = 0;
  /** performance.now() of the last acknowledgement (or of the first publish after idle). */
  progressAt = 0;
  retriedAt = 0;
  /** A resend is under way: only the first unacknowledged message is out. */
  retrying = false;
  /** The first unacknowledged sequence is being read back (writer.ts). */
  verifying = false;
  lastError = '';
  /** The last answer was "no responders": the stream is electing its raft leader. */
  leaderless = false;
  /** Flushes waiting for `acked` to reach a sequence, in sequence order. */
  waiters: { seq: number; done: () => void; fail: (err: Error) => void }[] = [];
  /** Subscriptions to write to the bucket; true when their record changed. */
  readonly dirtySubs = new Map<number, boolean>();
  /** Messages before this sequence were purged from the stream (limits). */
  purgedTo = 0;
  /** Index in the store's ack subject (`<ack prefix>.<index>`, names.ts ackSubjectPrefix). */
  index = 0;
  /** The Leader's publish options for this channel (writer.ts), made on its first message. */
  publishOptions: PublishOptions | null = null;
  /** `HPUB <subject> <ack inbox> ` (frames.ts), made on its first message. */
  framePrefix: Buffer | null = null;
  /** Acknowledgements came this turn: the Followers are told how far (writer.ts). */
  confirmDue = false;
  /** Where they are told (`<confirm prefix>.<index>`), made on the first. */
  confirmSubject: string | null = null;

  constructor(
    readonly clusterId: string,
    readonly name: string,
    readonly limits: ChannelLimits,
    isClosed: () => boolean,
    hooks: StoreHooks,
    sink: ChannelSink,
  ) {
    this.stream = channelStreamName(clusterId, name);
    this.subject = channelSubject(clusterId, name);
    this.key = channelKey(name);
    this.watch = watchChannelInactivity(name, limits, hooks, () => this.subs.hasActive());
    const touch = this.watch?.touch;
    const owner = { ch: this as JsChannel | null, sink };
    this.msgs = new JsMsgStore(
      name,
      limits,
      { isClosed, warn: hooks.warn, onStored: touch },
      owner,
    );
    this.subs = new JsSubStore(limits.maxSubscriptions, isClosed, touch, owner);
  }

  get inflightCount(): number {
    return this.inflight.length - this.inflightHead;
  }

  dispose(): void {
    this.msgs.stopTimer();
    this.watch?.stop();
  }
}
