// The contract between the JetStream engine (streams, consumers, the $JS.API handlers) and
// its storage (memory and file). It follows nats-server 2.9's StreamStore and ConsumerStore
// (server/store.go): the engine decides what to store and when to acknowledge; a store keeps
// the log, enforces the stream's limits and keeps the consumers' positions. Every store must
// pass the one conformance suite in test/jetstream/storage/.

/** Where a stream's messages live: nats-server's `storage` field. */
export type StorageType = 'file' | 'memory';

/** What a store needs of a stream's configuration; the engine maps the API's JSON onto it. */
export interface StreamStoreConfig {
  /** The stream's name, unique within its account. */
  readonly name: string;
  readonly storage: StorageType;
  /** -1: no limit (as the API's JSON). */
  readonly maxMsgs: number;
  /** -1: no limit. */
  readonly maxBytes: number;
  /** Nanoseconds, as the API's JSON; 0: no limit. */
  readonly maxAgeNs: number;
  /** -1 or 0: no limit. */
  readonly maxMsgsPerSubject: number;
  /** DiscardNew makes storeMsg refuse a message past maxMsgs/maxBytes instead of dropping the oldest. */
  readonly discard: 'old' | 'new';
  /** With discard new: refuse a message that would pass maxMsgsPerSubject. */
  readonly discardNewPerSubject: boolean;
}

/**
 * Whether an update applies a lower max_msgs_per_subject at once. As both of the
 * reference's stores: only when it lowers a limit there was; a limit set where there
 * was none applies to each subject at its next message.
 */
export function lowersPerSubject(old: StreamStoreConfig, next: StreamStoreConfig): boolean {
  return next.maxMsgsPerSubject > 0 && next.maxMsgsPerSubject < old.maxMsgsPerSubject;
}

/** A filter or subject that names every subject: empty, or the full wildcard `>`. */
export function isAllSubjects(filter: string): boolean {
  return filter === '' || filter === '>';
}

/**
 * A stored message where it lies: its header block is `buf[hdrStart, dataStart)` (empty
 * for none), its data `buf[dataStart, dataEnd)`, in the store's own memory (a slab, a
 * block's chunk or a page read back), valid until the next load or write. What a
 * consumer's delivery loop reads: no view and no copy is made per message. `ts` is
 * nanoseconds since the Unix epoch held in a double (exact to 256 ns): enough for
 * ordering-free timestamps, and no bigint on the hot path.
 */
export interface StoredSpan {
  subject: string;
  seq: number;
  ts: number;
  buf: Buffer;
  hdrStart: number;
  dataStart: number;
  dataEnd: number;
}

/**
 * A stored message, its header block and data as views. Loads fill a caller-supplied
 * object when one is given, so that a reader allocates no object per message.
 */
export interface StoredMsg {
  subject: string;
  seq: number;
  ts: number;
  /** The raw header block (`NATS/1.0\r\n...\r\n\r\n`), or an empty buffer. */
  hdr: Buffer;
  data: Buffer;
}

const NOTHING = Buffer.alloc(0);

/**
 * A StoredSpan to load into (loadSpan/loadNextSpan): one per reader, reused. `ts` starts
 * as -0, a double to V8, as the nanosecond times stored in it are: a field that starts as
 * a small integer changes representation at the first load, which retires the object's
 * hidden class and deoptimizes the code compiled for it.
 */
export function blankStoredSpan(): StoredSpan {
  return { subject: '', seq: 0, ts: -0, buf: NOTHING, hdrStart: 0, dataStart: 0, dataEnd: 0 };
}

/** A StoredMsg to load into (loadMsg/loadNextMsg `into`); `ts` as in blankStoredSpan. */
export function blankStoredMsg(): StoredMsg {
  return { subject: '', seq: 0, ts: -0, hdr: NOTHING, data: NOTHING };
}

/** The message a span locates, with views of its bytes: in `into`, else a new object. */
export function msgOf(span: StoredSpan, into?: StoredMsg): StoredMsg {
  const { buf, hdrStart, dataStart } = span;
  const hdr = dataStart > hdrStart ? buf.subarray(hdrStart, dataStart) : NOTHING;
  const data = buf.subarray(dataStart, span.dataEnd);
  if (into === undefined) return { subject: span.subject, seq: span.seq, ts: span.ts, hdr, data };
  into.subject = span.subject;
  into.seq = span.seq;
  into.ts = span.ts;
  into.hdr = hdr;
  into.data = data;
  return into;
}

/** Messages, first and last sequence of a subset of a stream (nats-server's SimpleState). */
export interface SimpleState {
  msgs: number;
  first: number;
  last: number;
}

/**
 * The firstTs of an empty file stream whose messages went by removal (delete, expiry,
 * purge by subject) or that came back empty from a restart: nats-server's file store
 * then reports time.Unix(0, 0), "1970-01-01T00:00:00Z", where a purge (and every memory
 * stream) reports the zero time. Its first sequence after a restart is last + 1.
 */
export const EMPTIED_FIRST_TS = -1;

/** The whole stream's state, as STREAM.INFO reports it (nats-server's StreamState). */
export interface StreamState {
  msgs: number;
  bytes: number;
  firstSeq: number;
  /** Nanoseconds since the epoch; 0 (or EMPTIED_FIRST_TS) when the stream is empty. */
  firstTs: number;
  lastSeq: number;
  lastTs: number;
  numSubjects: number;
  /** Interior gaps (deleted sequences between first and last). */
  numDeleted: number;
  /** Filled only when asked for (`deleted_details`). */
  deleted?: number[];
  consumers: number;
}

/** Why storeMsg refused a message; the engine turns each into the reference's API error. */
export type StoreRefusal = 'max-msgs' | 'max-bytes' | 'max-msgs-per-subject' | 'closed';

export class StoreError extends Error {
  constructor(
    readonly refusal: StoreRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

/** Called after every change of the stored totals (account limits, interest retention). */
export type StorageUpdateHandler = (
  msgsDelta: number,
  bytesDelta: number,
  seq: number,
  subject: string,
) => void;

/** onDurable's callback: `durable` is the appendMark() the write reached. */
export type DurableCallback = (err: Error | undefined, durable: number) => void;

export interface StreamStore {
  readonly type: StorageType;

  /**
   * Appends a message and returns its sequence. It is visible to loads at once and dropped
   * messages (limits, discard old) are gone when this returns. Throws StoreError when discard
   * new refuses it. Durability is separate: see onDurable. The store copies `hdr` and `data`
   * (they may be views of a connection's read buffer) and keeps no reference to them.
   */
  storeMsg(subject: string, hdr: Buffer, data: Buffer, ts: number): number;
  /** Takes the next sequence without a message (as nats-server's SkipMsg). */
  skipMsg(): number;
  /**
   * Calls `done` once every message stored before this call has reached the store's
   * durability (for the file store: written to the file at its sync level; for the memory
   * store: at once, synchronously). The engine sends PubAcks only from here: it asks
   * right after its first store of a turn, and the `durable` mark it is called back with
   * says which of the turn's later stores the same write covered (see appendMark).
   */
  onDurable(done: DurableCallback): void;
  /**
   * A mark that grows with the store's appends: a message stored before it was taken is
   * durable once an onDurable callback's `durable` is at least that mark (for the memory
   * store: always 0).
   */
  appendMark(): number;

  loadMsg(seq: number, into?: StoredMsg): StoredMsg | undefined;
  /** The first message at or after `start` whose subject matches `filter` ('' or '>' is all). */
  loadNextMsg(
    filter: string,
    wildcard: boolean,
    start: number,
    into?: StoredMsg,
  ): StoredMsg | undefined;
  /** loadMsg without the views: the bytes where they lie (a consumer's deliveries). */
  loadSpan(seq: number, into: StoredSpan): StoredSpan | undefined;
  /** loadNextMsg without the views. */
  loadNextSpan(
    filter: string,
    wildcard: boolean,
    start: number,
    into: StoredSpan,
  ): StoredSpan | undefined;
  /** The last message whose subject matches `filter` (may hold wildcards; '' or '>' is all). */
  loadLastMsg(filter: string, into?: StoredMsg): StoredMsg | undefined;

  removeMsg(seq: number): boolean;
  /** Removes and overwrites the message's bytes where it is stored (MSG.DELETE without no_erase). */
  eraseMsg(seq: number): boolean;
  /** Removes everything; returns how many messages went. The next sequence stays. */
  purge(): number;
  /**
   * PURGE with `filter`, `seq` (up to, not including) and `keep`, as nats-server's PurgeEx;
   * throws when both `seq` > 1 and `keep` > 0 are given (its ErrPurgeArgMismatch).
   */
  purgeEx(subject: string, seq: number, keep: number): number;
  /** Removes everything below `seq`; returns how many went. */
  compact(seq: number): number;
  /** Removes everything above `seq`; throws if `seq` (≠ 0) is not a stored message. */
  truncate(seq: number): void;

  /** The first sequence stored at or after `tsNs` (nanoseconds since the epoch). */
  getSeqFromTime(tsNs: number): number;
  filteredState(startSeq: number, filter: string): SimpleState;
  /** Per-subject state of the subjects matching `filter` (STREAM.INFO `subjects_filter`). */
  subjectsState(filter: string): Map<string, SimpleState>;
  state(withDeleted?: boolean): StreamState;

  registerStorageUpdates(handler: StorageUpdateHandler): void;
  /** Applies new limits (enforcing them at once) after STREAM.UPDATE. */
  updateConfig(cfg: StreamStoreConfig): void;

  /** Opens (or creates) a consumer's state; without `cfg`, the ack policy is explicit. */
  consumerStore(name: string, cfg?: ConsumerStoreConfig): ConsumerStore;
  /** Stops, keeping the data (server shutdown). */
  stop(): Promise<void>;
  /** Stops and removes everything, consumers included (STREAM.DELETE). */
  delete(): Promise<void>;
}

/** A (consumer sequence, stream sequence) pair as the API's JSON reports it. */
export interface SequencePair {
  consumer: number;
  stream: number;
}

/** One delivered but unacknowledged message: its delivery sequence and time (ns). */
export interface PendingAck {
  sequence: number;
  ts: number;
}

/** A consumer's durable position (nats-server's ConsumerState). */
export interface ConsumerState {
  delivered: SequencePair;
  ackFloor: SequencePair;
  /** Keyed by stream sequence; only with explicit acks. */
  pending: Map<number, PendingAck>;
  /**
   * Stream sequence → how many times it was delivered again (1 after the first
   * redelivery: the reference's delivery count less one), for messages still pending.
   */
  redelivered: Map<number, number>;
}

/**
 * What a consumer store needs of the consumer's configuration: the ack policy decides
 * how deliveries and acks move the ack floor (nats-server's UpdateDelivered/UpdateAcks).
 */
export interface ConsumerStoreConfig {
  readonly ackPolicy: 'none' | 'all' | 'explicit';
}

export interface ConsumerStore {
  setStarting(streamSeq: number): void;
  /** A delivery: consumer sequence, stream sequence, delivery count, time (ns). */
  updateDelivered(dseq: number, sseq: number, deliveryCount: number, ts: number): void;
  /** An acknowledgement of one delivery. */
  updateAcks(dseq: number, sseq: number): void;
  /**
   * Replaces the whole state (as nats-server's Update); throws on an inconsistent one (ack
   * floor above delivered, a pending sequence out of range, delivered going back).
   */
  update(state: ConsumerState): void;
  state(): ConsumerState;
  stop(): Promise<void>;
  delete(): Promise<void>;
}

/**
 * Opens the stores of one account: memory stores need nothing else; file stores live under
 * the account's directory and keep each stream's and consumer's configuration (the API's
 * JSON, opaque to the store) beside its data so the engine can recover them at start-up.
 */
export interface StreamStoreProvider {
  openStream(cfg: StreamStoreConfig, meta: Buffer): StreamStore;
  /** Saves a stream's new configuration JSON after STREAM.UPDATE. */
  writeStreamMeta(stream: string, meta: Buffer): void;
  /** Saves a consumer's configuration JSON (create or update). */
  writeConsumerMeta(stream: string, consumer: string, meta: Buffer): void;
  removeConsumerMeta(stream: string, consumer: string): void;
  /** Streams found at start-up: their configuration JSON and consumers' configuration JSON. */
  recover(): RecoveredStream[];
}

export interface RecoveredStream {
  meta: Buffer;
  consumers: Array<{ name: string; meta: Buffer }>;
}
