// The JetStream store: the clustered mode's channels, subscriptions and clients in
// the JetStream of the `-ns` NATS cluster (names.ts has the mapping), behind the same
// Store interface as MEMORY, FILE and SQL.
//
// Every node holds a mirror of the whole state, built from the memory store's parts
// (so limits behave exactly as in STANDALONE). A Follower fills it from JetStream
// (follow.ts); the Leader serves from it and writes through:
//
// - a stored message is published at once to its channel's stream, with
//   `Nats-Expected-Last-Sequence: seq-1` (writer.ts: no gap, no duplicate, no write
//   from a deposed Leader). flush() resolves once JetStream acknowledged every
//   message stored before the call: that is when the server sends PubAcks.
//   Publishes not acknowledged within a second are sent again; after `failAfterMs`
//   without progress the store fails (onFailure) and the node stops leading, for the
//   next Leader to read what JetStream really holds.
// - clients, channels and subscriptions (with their delivery state: last sent and
//   pending sequences) are written to the state bucket shortly after they change,
//   coalesced (records within 10 ms, delivery state within 100 ms). As with the SQL
//   store, deliveries of the last moments before a failover may come again.
// - messages dropped by the limits are purged from the stream.
import { nuid, type KV, type Subscription } from 'nats';
import { ChannelRegistry, RegistryStore } from '../channel-registry.js';
import { StoreError } from '../errors.js';
import type { StoreLimitsConfig } from '../limits.js';
import { ResolvedLimits } from '../limits.js';
import type {
  ChannelStore,
  ClientRecord,
  RecoveredState,
  ServerInfoRecord,
  Store,
  StoredMsg,
  StoreHooks,
} from '../types.js';
import { JsChannel, type ChannelSink } from './channel.js';
import { encodeClient, encodeInfo, encodeSub, toJson } from './codec.js';
import type { JsEngine } from './engine.js';
import { Follower, type FollowTarget } from './follow.js';
import { MessageWriter, type WriterHost } from './writer.js';
import {
  ackSubjectPrefix,
  clientKey,
  confirmSubjectPrefix,
  INFO_KEY,
  stateBucket,
  subKey,
} from './names.js';

export interface JetStreamStoreOptions extends StoreHooks {
  readonly engine: JsEngine;
  readonly clusterId: string;
  readonly limits?: StoreLimitsConfig | ResolvedLimits;
  /** The Leader's writes failed for good: it must stop leading. */
  readonly onFailure: (reason: string) => void;
  /** Time without any acknowledgement from JetStream before the store fails. */
  readonly failAfterMs: number;
}

const DONE: Promise<void> = Promise.resolve();
const RETRY_MS = 1000;
const CHECK_MS = 100;
const RECORD_DELAY_MS = 10;
const STATE_DELAY_MS = 100;
const KV_TIMEOUT_MS = 5000;

export class JetStreamStore
  extends RegistryStore<JsChannel>
  implements Store, ChannelSink, FollowTarget, WriterHost
{
  readonly type = 'JETSTREAM' as const;
  readonly limits: ResolvedLimits;
  protected readonly channelsByName: ChannelRegistry<JsChannel>;
  /** True on the Leader once promoted: changes are written to JetStream. */
  private writing = false;
  /**
   * The Leader is suspended (its lease ran out, cluster/lease.ts): no state writes and
   * no resends until resume(); what is stored meanwhile waits in the dirty sets.
   */
  private paused = false;
  private failed: string | null = null;
  private closed = false;
  private readonly isClosed = (): boolean => this.closed;
  private info: ServerInfoRecord | undefined;
  private readonly clientMap = new Map<string, ClientRecord>();
  readonly engine: JsEngine;
  private readonly writer: MessageWriter;
  private follower: Follower | null = null;

  // The Leader's write path.
  /** PubAcks come back on `<ackPrefix>.<channel index>` (the Followers hear confirmations). */
  private readonly ackPrefix: string;
  private ackSub: Subscription | undefined;
  private readonly byIndex = new Map<number, JsChannel>();
  private nextIndex = 1;
  private checkTimer: NodeJS.Timeout | undefined;
  private syncTimer: NodeJS.Timeout | undefined;
  private syncAt = 0;
  private infoDirty = false;
  private readonly dirtyClients = new Map<string, boolean>();
  private readonly deletedChannels: JsChannel[] = [];
  private kvDown = false;
  /** recordsDurable() callers, resolved by the next sync() whose writes all succeed. */
  private recordWaiters: (() => void)[] = [];

  private constructor(
    private readonly options: JetStreamStoreOptions,
    private readonly kv: KV,
  ) {
    super();
    this.engine = options.engine;
    this.limits = ResolvedLimits.from(options.limits);
    this.channelsByName = new ChannelRegistry(this.limits.global.maxChannels);
    const term = nuid.next();
    this.ackPrefix = ackSubjectPrefix(options.clusterId, term);
    this.writer = new MessageWriter(
      this,
      this.ackPrefix,
      confirmSubjectPrefix(options.clusterId, term),
      options.failAfterMs,
    );
  }

  /** Opens the state bucket and starts following it (the node is not Leader yet). */
  static async open(options: JetStreamStoreOptions): Promise<JetStreamStore> {
    const kv = await options.engine.bucket(stateBucket(options.clusterId), KV_TIMEOUT_MS);
    const store = new JetStreamStore(options, kv);
    store.follower = new Follower(store, options.engine, kv, options.clusterId);
    await store.follower.start();
    return store;
  }

  // ---- FollowTarget: the mirror, filled by the Follower ---------------------------------

  applyInfo(info: ServerInfoRecord): void {
    this.info = info;
  }

  applyClient(id: string, record: ClientRecord | null): void {
    if (record === null) this.clientMap.delete(id);
    else this.clientMap.set(id, record);
  }

  applyChannel(name: string, exists: boolean): JsChannel | undefined {
    const ch = this.channelsByName.get(name);
    if (!exists) {
      if (ch !== undefined) this.channelsByName.remove(name).dispose();
      return undefined;
    }
    if (ch !== undefined) return ch;
    const created = this.newChannel(name);
    this.channelsByName.add(created);
    return created;
  }

  mirrorChannel(name: string): JsChannel | undefined {
    return this.channelsByName.get(name);
  }

  mirrorChannels(): IterableIterator<JsChannel> {
    return this.channelsByName.values();
  }

  warn(text: string): void {
    this.options.warn?.(text);
  }

  /**
   * How many times a Follower read the channel's stream (the live view had a hole);
   * undefined when not following it. For tests: a steady stream of publishes reads nothing.
   */
  streamReads(channel: string): number | undefined {
    return this.follower?.channelFollow(channel)?.reads;
  }

  // ---- Store --------------------------------------------------------------------------

  /**
   * The promotion: waits until the mirror holds everything JetStream holds, stops
   * following, and from then on writes through. Returns the state to serve.
   */
  async recover(): Promise<RecoveredState | undefined> {
    this.checkOpen();
    const follower = this.follower;
    if (follower === null) throw new StoreError('CLOSED');
    const missing = await follower.catchUp();
    follower.stop();
    this.follower = null;
    this.checkOpen();
    for (const ch of this.channelsByName.values()) {
      ch.sent = ch.acked = ch.msgs.lastSequence;
      ch.ready = !missing.includes(ch);
    }
    this.writing = true;
    this.ackSub = this.engine.nc.subscribe(this.ackPrefix + '.*', {
      callback: (err, msg) => {
        if (err !== null || !this.writing) return;
        const ch = this.byIndex.get(lastTokenNumber(msg.subject));
        if (ch !== undefined) this.writer.onAck(ch, msg);
      },
    });
    this.checkTimer = setInterval(() => {
      if (this.writing && !this.paused) this.writer.check(this.channelsByName.values());
    }, CHECK_MS);
    for (const ch of missing) this.prepare(ch);
    if (this.info === undefined) return undefined;
    return {
      info: this.info,
      clients: [...this.clientMap.values()],
      channels: [...this.channelsByName.values()],
    };
  }

  init(info: ServerInfoRecord): void {
    this.checkOpen();
    this.info = { ...info };
    this.infoDirty = true;
    this.kick(0);
  }

  addClient(client: ClientRecord): void {
    this.checkOpen();
    this.clientMap.set(client.id, { ...client });
    this.dirtyClients.set(client.id, true);
    this.kick(RECORD_DELAY_MS);
  }

  deleteClient(id: string): void {
    this.checkOpen();
    if (!this.clientMap.delete(id)) return;
    this.dirtyClients.set(id, true);
    this.kick(RECORD_DELAY_MS);
  }

  clients(): IterableIterator<ClientRecord> {
    return this.clientMap.values();
  }

  createChannel(name: string): ChannelStore {
    this.checkOpen();
    this.channelsByName.checkCreate(name);
    const ch = this.newChannel(name);
    this.channelsByName.add(ch);
    if (this.writing) this.prepare(ch);
    return ch;
  }

  deleteChannel(name: string): void {
    this.checkOpen();
    const ch = this.channelsByName.remove(name);
    ch.dispose();
    this.byIndex.delete(ch.index);
    for (const w of ch.waiters) w.done();
    ch.waiters = [];
    if (!this.writing) return;
    this.deletedChannels.push(ch);
    this.kick(RECORD_DELAY_MS);
  }

  flush(): Promise<void> {
    if (this.failed !== null) return Promise.reject(new Error(this.failed));
    if (!this.writing) return DONE;
    let pending = 0;
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const done = (): void => {
      if (--pending === 0) resolve();
    };
    for (const ch of this.channelsByName.values()) {
      const target = ch.msgs.lastSequence;
      if (target <= ch.acked) continue;
      pending++;
      ch.waiters.push({ seq: target, done, fail: reject });
    }
    return pending === 0 ? DONE : promise;
  }

  /**
   * Resolves once JetStream acknowledged every message of this channel stored before
   * the call: the server sends each channel's PubAcks on its own, and a channel whose
   * stream is electing its raft leader does not hold back the others'.
   */
  flushChannel(channel: ChannelStore): Promise<void> {
    if (this.failed !== null) return Promise.reject(new Error(this.failed));
    if (!this.writing) return DONE;
    // A deleted channel's waiters were let go at its deletion: none may come after.
    const ch = this.channelsByName.get(channel.name);
    if (ch === undefined || ch !== channel) return DONE;
    const target = ch.msgs.lastSequence;
    if (target <= ch.acked) return DONE;
    return new Promise((done, fail) => {
      ch.waiters.push({ seq: target, done, fail });
    });
  }

  recordsDurable(): Promise<void> {
    if (this.failed !== null) return Promise.reject(new Error(this.failed));
    if (!this.writing) return DONE;
    return new Promise((resolve) => {
      this.recordWaiters.push(resolve);
      this.kick(0);
    });
  }

  /** Clustered nodes elect their Leader with a lease (cluster/lease.ts), not a store lock. */
  tryExclusiveLock(): Promise<boolean> {
    return Promise.reject(new StoreError('NOT_SUPPORTED'));
  }

  /**
   * Shuts down: a Leader writes the latest state of its subscriptions and clients
   * first (a graceful stop loses no delivery state), a Follower just stops reading.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.writing && this.failed === null) await this.sync().catch(() => undefined);
    this.stop();
  }

  /**
   * Stops at once, writing nothing more: the node lost the lease (or the store
   * failed) and someone else may be writing already.
   */
  abandon(): void {
    if (this.closed) return;
    this.failed ??= 'the store was abandoned (no longer Leader)';
    this.stop();
  }

  private stop(): void {
    this.closed = true;
    this.follower?.stop();
    this.follower = null;
    this.writing = false;
    this.ackSub?.unsubscribe();
    if (this.checkTimer !== undefined) clearInterval(this.checkTimer);
    if (this.syncTimer !== undefined) clearTimeout(this.syncTimer);
    const err = new Error(this.failed ?? 'store closed');
    for (const ch of this.channelsByName.values()) {
      ch.dispose();
      for (const w of ch.waiters) w.fail(err);
      ch.waiters = [];
    }
  }

  isWriting(): boolean {
    return this.writing;
  }

  /** The Leader is suspended: the state bucket is not written until resume(). */
  pause(): void {
    this.paused = true;
  }

  /** The Leader carries on: the state held back is written, unacknowledged messages sent again. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.writer.resumed(this.channelsByName.values());
    this.kick(0);
  }

  /**
   * The store's connection is back (on another server, when its own was killed): the
   * writes in flight on the old one get no answer, so what is unacknowledged goes out
   * again at the next check instead of a second after the last acknowledgement.
   */
  reconnected(): void {
    if (this.writing && !this.paused) this.writer.resumed(this.channelsByName.values());
  }

  private checkOpen(): void {
    if (this.closed) throw new StoreError('CLOSED');
  }

  private newChannel(name: string): JsChannel {
    const ch = new JsChannel(
      this.options.clusterId,
      name,
      this.limits.forChannel(name),
      this.isClosed,
      this.options,
      this,
    );
    ch.index = this.nextIndex++;
    this.byIndex.set(ch.index, ch);
    return ch;
  }

  // ---- the Leader's message writes --------------------------------------------------------

  /** A new channel: its key in the bucket, then its stream; then its messages go out. */
  private prepare(ch: JsChannel): void {
    const description = `NATS Streaming channel "${ch.name}" of cluster "${this.options.clusterId}"`;
    void (async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          await this.kv.put(
            ch.key,
            toJson({ name: ch.name, stream: ch.stream, subject: ch.subject }),
          );
          await this.engine.createChannelStream(ch.stream, ch.subject, description);
          break;
        } catch (err) {
          if (!this.writing || this.channelsByName.get(ch.name) !== ch) return;
          if (attempt === 0)
            this.warn(`clustered: cannot create channel "${ch.name}" yet: ${String(err)}`);
          await new Promise((r) => setTimeout(r, RETRY_MS));
        }
      }
      if (!this.writing || this.channelsByName.get(ch.name) !== ch) return;
      ch.ready = true;
      const unsent = ch.unsent;
      ch.unsent = [];
      for (const msg of unsent) this.writer.publish(ch, msg);
    })();
  }

  /** ChannelSink: the server stored a message. */
  stored(ch: JsChannel, msg: StoredMsg): void {
    if (!this.writing) return;
    if (ch.ready) this.writer.publish(ch, msg);
    else ch.unsent.push(msg);
  }

  fail(reason: string): void {
    if (this.failed !== null) return;
    this.failed = reason;
    this.writing = false;
    const err = new Error(reason);
    for (const ch of this.channelsByName.values()) {
      for (const w of ch.waiters) w.fail(err);
      ch.waiters = [];
    }
    this.options.onFailure(reason);
  }

  // ---- the Leader's state writes ----------------------------------------------------------

  /** ChannelSink: a subscription changed; its record soon, its delivery state a little later. */
  subChanged(ch: JsChannel, id: number, recordChanged: boolean): void {
    if (!this.writing) return;
    const before = ch.dirtySubs.get(id);
    ch.dirtySubs.set(id, before === true || recordChanged);
    this.kick(recordChanged ? RECORD_DELAY_MS : STATE_DELAY_MS);
  }

  /** Runs sync() within `ms`, or sooner if it was already due sooner. */
  private kick(ms: number): void {
    if (!this.writing) return;
    const at = performance.now() + ms;
    if (this.syncTimer !== undefined) {
      if (this.syncAt <= at) return;
      clearTimeout(this.syncTimer);
    }
    this.syncAt = at;
    this.syncTimer = setTimeout(() => {
      this.syncTimer = undefined;
      void this.sync();
    }, ms);
  }

  /** Writes what changed to the state bucket (and purges what the limits dropped). */
  private async sync(): Promise<void> {
    // Suspended: resume() runs it again.
    if (!this.writing || this.paused) return;
    const writes: Promise<unknown>[] = [];
    // Resolved once this round's writes all succeeded; else the next round has them.
    const waiters = this.recordWaiters.splice(0);
    const round = { failed: false };
    const retry = (redo: () => void) => (err: unknown) => {
      round.failed = true;
      if (!this.writing) return;
      redo();
      if (!this.kvDown) this.warn(`clustered: cannot write the state bucket: ${String(err)}`);
      this.kvDown = true;
      this.kick(RETRY_MS);
    };
    const kv = this.kv;
    if (this.infoDirty && this.info !== undefined) {
      this.infoDirty = false;
      writes.push(
        kv.put(INFO_KEY, encodeInfo(this.info)).catch(retry(() => (this.infoDirty = true))),
      );
    }
    for (const id of this.dirtyClients.keys()) {
      const c = this.clientMap.get(id);
      const redo = retry(() => this.dirtyClients.set(id, true));
      writes.push(
        (c === undefined ? kv.delete(clientKey(id)) : kv.put(clientKey(id), encodeClient(c))).catch(
          redo,
        ),
      );
    }
    this.dirtyClients.clear();
    for (const ch of this.deletedChannels.splice(0))
      writes.push(this.dropChannel(ch).catch(retry(() => this.deletedChannels.push(ch))));
    for (const ch of this.channelsByName.values()) {
      if (ch.dirtySubs.size > 0) {
        for (const id of ch.dirtySubs.keys()) {
          const entry = ch.subs.get(id);
          const key = subKey(ch.name, id);
          const redo = retry(() => ch.dirtySubs.set(id, true));
          writes.push(
            (entry === undefined
              ? kv.delete(key)
              : kv.put(key, encodeSub(entry.record, entry.pending))
            ).catch(redo),
          );
        }
        ch.dirtySubs.clear();
      }
      // Limits dropped messages: the stream drops them too (only what it acknowledged).
      const upTo = Math.min(ch.msgs.firstSequence, ch.acked + 1);
      if (ch.ready && upTo > ch.purgedTo && upTo > 1) {
        const before = ch.purgedTo;
        ch.purgedTo = upTo;
        writes.push(
          this.engine.jsm.streams
            .purge(ch.stream, { seq: upTo })
            .catch(retry(() => (ch.purgedTo = before))),
        );
      }
    }
    await Promise.all(writes);
    if (round.failed) this.recordWaiters.unshift(...waiters);
    else for (const w of waiters) w();
    if (this.kvDown && this.isWriting() && this.syncTimer === undefined) {
      this.kvDown = false;
      this.warn('clustered: the state bucket takes writes again');
    }
  }

  /** A deleted channel: its key and its subscriptions' keys, then its stream. */
  private async dropChannel(ch: JsChannel): Promise<void> {
    await this.kv.delete(ch.key);
    await Promise.all([...ch.subs.all()].map((s) => this.kv.delete(subKey(ch.name, s.record.id))));
    await this.engine.deleteStream(ch.stream);
  }
}

/**
 * The number that ends an ack subject (`<ack prefix>.<channel index>`), -1 when it ends in
 * anything else: read in place, as every PubAck comes through here.
 */
function lastTokenNumber(subject: string): number {
  let n = 0;
  let mul = 1;
  for (let i = subject.length - 1; i >= 0; i--) {
    const c = subject.charCodeAt(i);
    if (c === 0x2e) return i === subject.length - 1 ? -1 : n;
    if (c < 0x30 || c > 0x39) return -1;
    n += (c - 0x30) * mul;
    mul *= 10;
  }
  return -1;
}
