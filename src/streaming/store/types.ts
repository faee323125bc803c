// The Store interface: what the streaming server persists, behind which the memory,
// file (append-only log) and SQL (PostgreSQL) stores sit. Modelled on the reference's
// stores.Store / MsgStore / SubStore, adapted to one thread and async I/O:
//
// - Writes are synchronous calls that take effect at once in the store's own view
//   (lookups, counts, limits see them immediately) and become durable at the next
//   flush(). The server stores a batch of publishes, awaits one flush(), then delivers
//   and sends the PubAcks: one promise per batch, never one per message, and a memory
//   store's flush is an already-resolved promise. A file store appends to a buffer and
//   writes + fsyncs on flush; a SQL store queues rows and runs one transaction.
// - Checks that can fail (limits, sequence order, closed store) throw StoreError
//   synchronously, with the reference's texts. I/O failures reject flush().
// - Reads that a file or SQL store may have to fetch return MaybePromise: the memory
//   store answers synchronously and callers only await when given a promise.
// - Sequences are numbers (safe integers, see protocol/int64.ts), timestamps Long ns.
import type Long from 'long';
import type { ChannelLimits, ResolvedLimits } from './limits.js';

export type MaybePromise<T> = T | Promise<T>;

/** The `type` /streaming/storez reports. */
export type StoreType = 'MEMORY' | 'FILE' | 'SQL' | 'JETSTREAM';

/**
 * A stored message: the marshaled MsgProto (see protocol/msgproto.ts; redelivered
 * unset) plus the two fields a store indexes. The store keeps the object and its bytes
 * as given: never reuse the buffer. makeStoredMsg() builds one consistently.
 */
export interface StoredMsg {
  readonly sequence: number;
  /** Unix nanoseconds, non-decreasing within a channel (the server enforces it). */
  readonly timestamp: Long;
  readonly encoded: Uint8Array;
}

/** spb.ServerInfo: the subjects chosen on first start, reused after a restart. */
export interface ServerInfoRecord {
  readonly clusterID: string;
  readonly discovery: string;
  readonly publish: string;
  readonly subscribe: string;
  readonly unsubscribe: string;
  readonly close: string;
  readonly subClose: string;
  readonly acksSubs: string;
  readonly nodeID: string;
}

/** spb.ClientInfo. */
export interface ClientRecord {
  readonly id: string;
  readonly hbInbox: string;
  readonly connID: Uint8Array;
  readonly protocol: number;
  /** Seconds. */
  readonly pingInterval: number;
  readonly pingMaxOut: number;
}

/** spb.SubState without its ID, as given to SubStore.create. */
export interface SubInit {
  readonly clientID: string;
  /** "<durableName>:<qGroup>" for a durable queue group. */
  readonly qGroup: string;
  readonly inbox: string;
  readonly ackInbox: string;
  readonly maxInFlight: number;
  readonly ackWaitInSecs: number;
  readonly durableName: string;
  /** Highest sequence sent; the start position sets its first value. */
  readonly lastSent: number;
  readonly isDurable: boolean;
  /** An offline durable or durable queue shadow: kept, but not an active subscription. */
  readonly isClosed: boolean;
}

/** spb.SubState: a subscription record, ID assigned by the store (per channel, from 1). */
export interface SubRecord extends SubInit {
  readonly id: number;
}

/** A subscription with the sequences sent to it and not acked yet. */
export interface StoredSub {
  readonly record: SubRecord;
  readonly pending: ReadonlySet<number>;
}

export interface MsgStore {
  /** Sequence of the first stored message; 0 if none was ever stored, last+1 once all expired. */
  readonly firstSequence: number;
  /** Sequence of the last stored message; 0 if none was ever stored. */
  readonly lastSequence: number;
  /** Messages stored now. */
  readonly count: number;
  /** Bytes stored now, as this store type counts them (memory: marshaled MsgProto). */
  readonly bytes: number;
  /**
   * Stores a message, then drops the oldest while max_msgs or max_bytes is exceeded
   * (never the message just stored). A sequence <= lastSequence is ignored and false
   * returned (a replay); otherwise it must be lastSequence + 1, or anything higher when
   * the channel holds no message. Durable at the next Store.flush().
   */
  store(msg: StoredMsg): boolean;
  /** The message with this sequence, undefined if it is not stored (never was, or dropped). */
  lookup(sequence: number): MaybePromise<StoredMsg | undefined>;
  /**
   * Sequence of the first message with timestamp >= `timestamp`: 0 if nothing was ever
   * stored, lastSequence + 1 if every message is older (or all expired).
   */
  sequenceFromTimestamp(timestamp: Long): MaybePromise<number>;
  /** Drops every message; first and last sequences go back to 0. */
  empty(): void;
  /**
   * Optional (the publish path uses it when present: MEMORY, FILE): store() of the
   * message marshaled at `buf[start, end)`, its timestamp given as unsigned 32-bit
   * halves, without a StoredMsg. The bytes are kept as given.
   */
  storeRange?(
    sequence: number,
    tsLow: number,
    tsHigh: number,
    buf: Buffer,
    start: number,
    end: number,
  ): boolean;
  /**
   * Optional: lookup() without a StoredMsg, for messages held in memory. The buffer
   * holding message `sequence`, which is `buf[rangeStart, rangeEnd)`; undefined if it
   * is not stored; null if it is stored but not in memory now (a FILE store's message
   * neither in its cache nor in a block read back): lookup() reads it.
   */
  bytesOf?(sequence: number): Buffer | undefined | null;
  /** Where the message of the last bytesOf() is in its buffer. */
  readonly rangeStart?: number;
  readonly rangeEnd?: number;
}

export interface SubStore {
  /** Subscriptions recorded, closed (offline) ones included: what max_subscriptions counts. */
  readonly count: number;
  /** Records a new subscription and returns it with its ID; throws TOO_MANY_SUBS. */
  create(init: SubInit): SubRecord;
  /** Replaces the record with this ID (client, inboxes, closed flag...); keeps its pending set. */
  update(record: SubRecord): void;
  /** Forgets the subscription and its pending set. */
  delete(id: number): void;
  /** `sequence` was sent and awaits an ack; raises lastSent to it when higher. */
  addPending(id: number, sequence: number): void;
  /** `sequence` was acked. Unknown IDs and sequences are ignored, as in the reference. */
  ack(id: number, sequence: number): void;
  get(id: number): StoredSub | undefined;
  all(): IterableIterator<StoredSub>;
}

export interface ChannelStore {
  readonly name: string;
  /** The limits this channel was created with (after inheritance; 0 = unlimited). */
  readonly limits: ChannelLimits;
  readonly msgs: MsgStore;
  readonly subs: SubStore;
}

export interface RecoveredState {
  readonly info: ServerInfoRecord;
  readonly clients: readonly ClientRecord[];
  /** Also reachable through Store.channels(); listed here for convenience. */
  readonly channels: readonly ChannelStore[];
}

/** Calls a store makes to its owner. */
export interface StoreHooks {
  /**
   * A channel with max_inactivity > 0 had no publish, no subscription change and no
   * active (not closed) subscription for that long. Called once per idle period; the
   * server decides whether to delete it (Store.deleteChannel).
   */
  readonly onChannelInactive?: (channel: string) => void;
  /** Operational warnings (limits reached), with the reference's texts. */
  readonly warn?: (message: string) => void;
}

export interface Store {
  readonly type: StoreType;
  readonly limits: ResolvedLimits;
  /**
   * Loads what a previous run persisted; call once, before anything else. A store that
   * persists nothing (memory) returns undefined.
   */
  recover(): Promise<RecoveredState | undefined>;
  /** Records the server info; durable at the next flush. */
  init(info: ServerInfoRecord): void;
  /** Records (or replaces) a client. */
  addClient(client: ClientRecord): void;
  /** Forgets a client; unknown IDs are ignored. */
  deleteClient(id: string): void;
  clients(): IterableIterator<ClientRecord>;
  /** Creates a channel with its limits; throws ALREADY_EXISTS or TOO_MANY_CHANNELS. */
  createChannel(name: string): ChannelStore;
  lookupChannel(name: string): ChannelStore | undefined;
  channels(): IterableIterator<ChannelStore>;
  readonly channelCount: number;
  /** Removes a channel with its messages and subscriptions; throws NOT_FOUND. */
  deleteChannel(name: string): void;
  /** Messages and bytes stored over all channels (serverz/storez total_msgs, total_bytes). */
  totals(): { readonly msgs: number; readonly bytes: number };
  /** Resolves once every write made before the call is durable. */
  flush(): Promise<void>;
  /**
   * Optional, for stores whose channels become durable each on its own (JETSTREAM: a
   * stream per channel): resolves once every message this channel stored before the
   * call is durable. The server then batches each channel's publishes apart
   * (publish-lane.ts), so that a slow channel holds back only its own PubAcks.
   */
  flushChannel?(channel: ChannelStore): Promise<void>;
  /**
   * Stores whose records (clients, subscriptions) become durable later than their
   * messages (the clustered JetStream store writes them to a bucket, coalesced):
   * resolves once every record written before the call is durable. The server
   * answers a connect only then, as the reference answers it once replicated.
   */
  recordsDurable?(): Promise<void>;
  /**
   * Takes the fault-tolerance lock (the store is shared by an active and standby
   * servers): true if taken, false if another server holds it. Memory: NOT_SUPPORTED.
   */
  tryExclusiveLock(): Promise<boolean>;
  /** Stops timers, flushes, releases the lock; later calls throw CLOSED. */
  close(): Promise<void>;
}
