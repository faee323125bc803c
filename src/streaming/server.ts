// The streaming server: NATS Streaming (STAN) over a bus to NATS. It owns the store,
// the registered clients, the channels and their subscriptions; the protocol verbs
// are in handlers/ (one file each), delivery in channel.ts and subscription.ts.
//
// Publishes are stored as they arrive (store writes are synchronous) and collected
// per event-loop turn; then one store flush, then delivery to subscribers, then the
// PubAcks, in arrival order: a PubAck means "persisted", as in the reference. A store
// that makes each channel durable on its own (clustered: a JetStream stream each) gets
// that per channel instead (publish-lane.ts).

import type { Server } from '../server/server.js';
import type { Logger } from '../server/logger.js';
import { createLogger } from '../server/logger.js';
import type { Bus, BusSubscription } from './bus.js';
import { GatedBus } from './bus-gate.js';
import { InternalBus } from './bus-internal.js';
import { Channel } from './channel.js';
import { StanClient } from './client.js';
import { handleAck } from './handlers/ack.js';
import { handleConnect } from './handlers/connect.js';
import { handlePing } from './handlers/ping.js';
import { handlePublish } from './handlers/publish.js';
import { handleSubscribe } from './handlers/subscribe.js';
import { closeClient, handleClose, handleUnsubscribe } from './handlers/unsubscribe.js';
import { logStartup } from './log.js';
import { nuid } from '../protocol/nuid.js';
import {
  type StreamingOptions,
  resolveStreamingOptions,
  validateStreamingOptions,
} from './options.js';
import { ConnectRequest } from './protocol/index.js';
import { PublishLane } from './publish-lane.js';
import { recoverState } from './recover.js';
import { redeliverAll, redeliverExpired } from './redelivery.js';
import { FtMember } from './ft.js';
import { ClusterMember } from './cluster/member.js';
import { FileStore } from './store/file.js';
import { MemoryStore } from './store/memory.js';
import { isStoreError } from './store/errors.js';
import type {
  ChannelStore,
  ClientRecord,
  RecoveredState,
  ServerInfoRecord,
  Store,
} from './store/types.js';
import type { Sub } from './subscription.js';
import { StreamingStartError } from './start-error.js';

export { STREAMING_VERSION, StreamingStartError } from './start-error.js';

const DONE: Promise<void> = Promise.resolve();
/** A channel's own lane starts its PubAck buffer small: a turn may run one batch per channel. */
const CHANNEL_ACK_BYTES = 512;

export type StreamingState =
  'STANDALONE' | 'CLUSTERED' | 'FT_ACTIVE' | 'FT_STANDBY' | 'SHUTDOWN' | 'FAILED';

export const Err = {
  invalidConnReq: 'stan: invalid connection request',
  invalidClientID: 'stan: invalid clientID: only alphanumeric and `-` or `_` characters allowed',
  clientIDRegistered: 'stan: clientID already registered',
  invalidPubReq: 'stan: invalid publish request',
  invalidSubReq: 'stan: invalid subscription request',
  missingClient: 'stan: clientID missing',
  invalidAckWait: 'stan: invalid ack wait time, should be >= 1s',
  invalidMaxInflight: 'stan: invalid MaxInflight, should be >= 1',
  invalidStart: 'stan: invalid start position',
  invalidSubject: 'stan: invalid subject',
  unknownClient: 'stan: unknown clientID',
  durableQueueName:
    "stan: durable name of a durable queue subscriber can't contain the character ':'",
  dupDurable: 'stan: duplicate durable registration',
  invalidUnsubReq: 'stan: invalid unsubscribe request',
  unknownChannel: 'stan: unknown channel',
  invalidSub: 'stan: invalid subscription',
  invalidCloseReq: 'stan: invalid close request',
  channelDeleting: 'stan: channel is being deleted',
  clientReplaced: 'client has been replaced or is no longer registered',
} as const;

export class StreamingServer {
  readonly options: StreamingOptions;
  readonly logger: Logger;
  readonly serverId = nuid.next();
  readonly startTime = new Date();
  state: StreamingState = 'STANDALONE';
  info!: ServerInfoRecord;
  store!: Store;
  bus!: Bus;

  readonly clients = new Map<string, StanClient>();
  readonly clientsByConn = new Map<string, StanClient>();
  /** Client IDs whose duplicate check (probe of the old client) is running. */
  readonly checkingIds = new Set<string>();
  readonly channels = new Map<string, Channel>();
  /** Lower-cased name -> name: channels differing only by case are refused. */
  private readonly lowerNames = new Map<string, string>();
  /** Online subscriptions by ack inbox. */
  readonly ackInboxes = new Map<string, Sub>();
  /**
   * The client and the channel of the last publish (handlers/publish.ts looks there
   * first, without a lookup): set back to null whenever what the maps hold for them may
   * change (a client closed or registered, a channel deleted or adopted, a demotion).
   */
  lastPublisher: StanClient | null = null;
  lastPublished: Channel | null = null;

  inMsgs = 0;
  inBytes = -0; // doubles from the start, as the core's (server/server.ts)
  outMsgs = 0;
  outBytes = -0;

  /**
   * The publish batches (publish-lane.ts): one lane for every channel, unless the
   * store flushes each channel on its own (laneFor). Error PubAcks, which store
   * nothing, go through this lane.
   */
  private readonly lane: PublishLane = new PublishLane(this, () =>
    this.store.flushChannel === undefined ? this.store.flush() : DONE,
  );
  /** Lanes with something queued this turn, run at its end. */
  private readonly readyLanes: PublishLane[] = [];
  private batchScheduled = false;

  private readonly subs: BusSubscription[] = [];
  /** The fault-tolerance member (--ft_group), null when standalone. */
  ft: FtMember | null = null;
  /** The clustered node (--clustered), null otherwise. */
  cluster: ClusterMember | null = null;
  /** Clustered: the bus, held shut while the Leader is suspended (bus-gate.ts). */
  private gate: GatedBus | null = null;
  /** Counts clustered step-downs, so that a promotion overtaken by one stops. */
  generation = 0;
  /** Called after abort() (the command exits; an embedding program decides). */
  onAbort: ((reason: string) => void) | null = null;
  private started = false;
  private closing: Promise<void> | null = null;

  constructor(
    /** The core server for the in-process bus; null when options.natsServer is set. */
    private readonly core: Server | null,
    options: Partial<StreamingOptions> = {},
    logger?: Logger,
  ) {
    this.options = resolveStreamingOptions(options);
    const problems = validateStreamingOptions(this.options);
    if (problems.length > 0) throw new StreamingStartError(problems.join('; '));
    this.logger =
      logger ??
      core?.logger ??
      createLogger({ debug: false, trace: false, logtime: true, logFile: '', quiet: true });
  }

  get clusterId(): string {
    return this.options.clusterId;
  }

  get pingSubject(): string {
    return this.info.discovery + '.pings';
  }

  /** Serves streaming clients: standalone, or the active server of an FT group. */
  get serving(): boolean {
    return (
      this.state === 'STANDALONE' ||
      this.state === 'FT_ACTIVE' ||
      (this.state === 'CLUSTERED' && this.cluster!.leading)
    );
  }

  /** Opens the store, recovers, checks no other server uses the cluster ID, subscribes. */
  async start(): Promise<void> {
    const o = this.options;
    if (o.clustering !== null) {
      await this.startClustered();
      return;
    }
    this.store = o.store ?? (await this.createStore());
    this.bus = await this.createBus();
    if (o.ftGroup !== '') {
      // A standby reads nothing from the store until it holds the lock (ft.ts).
      this.state = 'FT_STANDBY';
      this.started = true;
      this.ft = new FtMember(this, o.ftGroup);
      this.ft.start();
      return;
    }
    try {
      await this.recoverAndInit();
      await this.checkNoOtherServer();
      this.subscribeAll();
    } catch (err) {
      await this.bus.close();
      await this.store.close().catch(() => undefined);
      this.state = 'FAILED';
      throw err;
    }
    this.started = true;
    logStartup(this);
  }

  /** Clustered: a Follower until the lease is ours (cluster/member.ts). */
  private async startClustered(): Promise<void> {
    this.state = 'CLUSTERED';
    this.cluster = new ClusterMember(
      this,
      this.options.clustering!,
      this.options.natsServer,
      this.options.limits,
    );
    const cluster = this.cluster;
    this.gate = new GatedBus(await this.createBus(), () => cluster.leaseValid);
    this.bus = this.gate;
    try {
      this.store = await this.cluster.start();
    } catch (err) {
      await this.bus.close();
      this.state = 'FAILED';
      throw new StreamingStartError(
        `clustered: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    this.started = true;
  }

  /** Clustered: the lease is ours; catch up, recover and serve (called by ClusterMember). */
  async promote(): Promise<void> {
    const generation = this.generation;
    const store = this.store;
    const recovered = await store.recover();
    if (!this.stillPromoting(generation)) return;
    await this.initFrom(recovered);
    if (!this.stillPromoting(generation)) return;
    this.subscribeAll();
    logStartup(this);
  }

  /** False once the node stepped down (or shut down) during a promotion. */
  private stillPromoting(generation: number): boolean {
    return generation === this.generation && this.state === 'CLUSTERED';
  }

  /**
   * Clustered: the lease ran out without being taken (JetStream electing the lease
   * bucket's raft leader). Nothing may reach a client and no state is written until
   * resume() or demote(): the requests and the output are held, in order.
   */
  suspend(reason: string): void {
    this.gate?.hold();
    (this.store as Partial<{ pause(): void }>).pause?.();
    this.logger.debug(`STAN: suspended: ${reason}`);
  }

  /** Clustered: the lease was renewed, nobody else led meanwhile: carry on. */
  resume(): void {
    (this.store as Partial<{ resume(): void }>).resume?.();
    this.gate?.resume();
  }

  /**
   * Clustered: stop serving at once and forget what was served (the store is
   * abandoned; ClusterMember gives the server a fresh one that follows again).
   */
  demote(reason: string): void {
    this.generation++;
    this.stopServing();
    // What a suspended Leader held goes: the next Leader answers the clients.
    this.gate?.discard();
    this.lastPublisher = null;
    this.lastPublished = null;
    this.clients.clear();
    this.clientsByConn.clear();
    this.checkingIds.clear();
    for (const ch of this.channels.values()) ch.lane.reset();
    this.channels.clear();
    this.lowerNames.clear();
    this.ackInboxes.clear();
    this.lane.reset();
    (this.store as Partial<{ abandon(): void }>).abandon?.();
    this.logger.debug(`STAN: no longer serving: ${reason}`);
  }

  /** FT: the store lock is ours; recover and serve (called by FtMember). */
  async activate(): Promise<void> {
    if (this.state !== 'FT_STANDBY') return;
    await this.recoverAndInit();
    // Closed or aborted while recovering.
    if ((this.state as StreamingState) !== 'FT_STANDBY') return;
    this.subscribeAll();
    this.state = 'FT_ACTIVE';
    logStartup(this);
  }

  /** FT: stop serving at once (store lock lost, another active server). */
  abort(reason: string): void {
    if (this.state === 'FAILED' || this.state === 'SHUTDOWN') return;
    this.logger.fatal(`STAN: ${reason}, aborting`);
    this.state = 'FAILED';
    this.ft?.stop();
    this.stopServing();
    this.onAbort?.(reason);
  }

  /** No more requests, heartbeats, redeliveries or acks (abort, clustered step-down). */
  private stopServing(): void {
    for (const s of this.subs) s.unsubscribe();
    this.subs.length = 0;
    for (const client of this.clients.values()) client.stopHeartbeats();
    for (const ch of this.channels.values()) {
      for (const s of ch.allSubs()) {
        s.stopTimer();
        this.stopAcks(s);
      }
    }
  }

  private async createSqlStore(): Promise<Store> {
    const o = this.options;
    // The database clients are loaded only for the SQL store.
    const { SqlStore } = await import('./store/sql/store.js');
    const { parseDriver } = await import('./store/sql/db.js');
    return new SqlStore({
      driver: parseDriver(o.sqlDriver) ?? 'postgres',
      source: o.sqlSource,
      noCaching: o.sqlNoCaching,
      maxOpenConns: o.sqlMaxOpenConns,
      bulkInsertLimit: o.sqlBulkInsertLimit,
      limits: o.limits,
      lockOwner: this.serverId,
      onLockLost: (why) => {
        this.abort(`lost store lock (${why})`);
      },
      onChannelInactive: (name) => {
        this.onChannelInactive(name);
      },
      warn: (text) => {
        this.logger.warn(`STAN: ${text}`);
      },
      onDatabaseDown: (err) => {
        this.logger.error(
          `STAN: SQL store: database unavailable, refusing messages: ${err.message}`,
        );
      },
      onDatabaseUp: () => {
        this.logger.info('STAN: SQL store: database available again');
      },
    });
  }

  private async createStore(): Promise<Store> {
    const o = this.options;
    if (o.storeType === 'SQL') {
      try {
        return await this.createSqlStore();
      } catch (err) {
        if (isStoreError(err)) throw new StreamingStartError(err.message);
        throw err;
      }
    }
    if (o.storeType === 'FILE') {
      try {
        return new FileStore({
          ...o.fileOptions,
          dir: o.dir,
          limits: o.limits,
          onLockLost: () => {
            this.abort('lost store lock');
          },
          onChannelInactive: (name) => {
            this.onChannelInactive(name);
          },
          warn: (text) => {
            this.logger.warn(`STAN: ${text}`);
          },
        });
      } catch (err) {
        throw new StreamingStartError(err instanceof Error ? err.message : String(err));
      }
    }
    try {
      return new MemoryStore({
        limits: o.limits,
        onChannelInactive: (name) => {
          this.onChannelInactive(name);
        },
        warn: (text) => {
          this.logger.warn(`STAN: ${text}`);
        },
      });
    } catch (err) {
      if (isStoreError(err)) throw new StreamingStartError(err.message);
      throw err;
    }
  }

  private async createBus(): Promise<Bus> {
    const name = `_NSS-${this.clusterId}-general`;
    if (this.options.natsServer !== '') {
      // The NATS client is loaded only for -ns: most servers carry the bus in-process.
      const { NatsBus } = await import('./bus-nats.js');
      return NatsBus.connect(this.options.natsServer, name);
    }
    if (this.core === null) throw new StreamingStartError('no NATS server to connect to');
    return new InternalBus(this.core, name);
  }

  private async recoverAndInit(): Promise<void> {
    await this.initFrom(await this.store.recover());
  }

  private async initFrom(recovered: RecoveredState | undefined): Promise<void> {
    const o = this.options;
    if (recovered !== undefined) {
      if (recovered.info.clusterID !== o.clusterId) {
        throw new StreamingStartError(
          `cluster ID "${o.clusterId}" does not match recovered value of "${recovered.info.clusterID}"`,
        );
      }
      this.info = recovered.info;
      recoverState(this, recovered);
      return;
    }
    const cid = o.clusterId;
    this.info = {
      clusterID: cid,
      discovery: `${o.discoverPrefix}.${cid}`,
      publish: `_STAN.pub.${cid}`,
      subscribe: `_STAN.sub.${cid}`,
      unsubscribe: `_STAN.unsub.${cid}`,
      close: `_STAN.close.${cid}`,
      subClose: `_STAN.subclose.${cid}`,
      acksSubs: `_STAN.ack.${cid}`,
      nodeID: this.cluster?.nodeId ?? '',
    };
    this.store.init(this.info);
    await this.store.flush();
  }

  /** As the reference: a ConnectRequest probe on our discover subject must get no answer. */
  private async checkNoOtherServer(): Promise<void> {
    const probe = ConnectRequest.encode({
      clientID: this.clusterId,
      heartbeatInbox: `_INBOX.${nuid.next()}`,
    }).finish();
    const reply = await this.bus.request(this.info.discovery, probe, 250);
    if (reply !== null) {
      throw new StreamingStartError(
        `discovered another streaming server with cluster ID "${this.clusterId}"`,
      );
    }
  }

  private subscribeAll(): void {
    const bus = this.bus;
    const info = this.info;
    const on = (subject: string, fn: (reply: string | null, data: Buffer) => void): void => {
      this.subs.push(
        bus.subscribe(subject, (_s, reply, data) => {
          try {
            fn(reply, data);
          } catch (err) {
            this.requestFailed(subject, err);
          }
        }),
      );
    };
    on(info.discovery, (reply, data) => {
      handleConnect(this, reply, data);
    });
    on(this.pingSubject, (reply, data) => {
      handlePing(this, reply, data);
    });
    // The publish handler copies what it stores (writeMsgProto): it reads the PubMsg
    // where it lies, in the connection's read buffer.
    const pubSubject = info.publish + '.>';
    this.subs.push(
      bus.subscribeRange(pubSubject, (_s, reply, buf, start, end) => {
        try {
          handlePublish(this, reply, buf, start, end);
        } catch (err) {
          this.requestFailed(pubSubject, err);
        }
      }),
    );
    on(info.subscribe, (reply, data) => {
      void handleSubscribe(this, reply, data);
    });
    on(info.unsubscribe, (reply, data) => {
      handleUnsubscribe(this, reply, data, false);
    });
    on(info.subClose, (reply, data) => {
      handleUnsubscribe(this, reply, data, true);
    });
    on(info.close, (reply, data) => {
      handleClose(this, reply, data);
    });
  }

  // Never let one bad request take the server down.
  private requestFailed(subject: string, err: unknown): void {
    this.logger.error(`STAN: Error handling request on ${subject}: ${String(err)}`);
  }

  /** Subscribes to a subscription's ack inbox. */
  listenAcks(sub: Sub): void {
    this.ackInboxes.set(sub.ackInbox, sub);
    sub.ackSub = this.bus.subscribeRange(sub.ackInbox, (_s, _r, buf, start, end) => {
      handleAck(this, sub, buf, start, end);
    });
  }

  stopAcks(sub: Sub): void {
    sub.ackSub?.unsubscribe();
    sub.ackSub = null;
    if (this.ackInboxes.get(sub.ackInbox) === sub) this.ackInboxes.delete(sub.ackInbox);
  }

  // ---- clients ------------------------------------------------------------------

  registerClient(record: ClientRecord): StanClient {
    const client = new StanClient(record);
    this.lastPublisher = null;
    this.clients.set(client.id, client);
    if (client.connKey !== '') this.clientsByConn.set(client.connKey, client);
    this.store.addClient(record);
    this.startHeartbeats(client);
    return client;
  }

  startHeartbeats(client: StanClient): void {
    client.startHeartbeats(this.bus, this.hbSettings, this.onClientDead);
  }

  get hbSettings(): { interval: number; timeout: number; failCount: number } {
    const o = this.options;
    return { interval: o.hbInterval, timeout: o.hbTimeout, failCount: o.hbFailCount };
  }

  readonly onClientDead = (client: StanClient): void => {
    if (this.clients.get(client.id) !== client) return;
    this.logger.debug(
      `STAN: [Client:${client.id}] Timed out on heartbeats, closing after ${client.failedHb} failed attempts`,
    );
    closeClient(this, client);
  };

  // ---- channels -----------------------------------------------------------------

  /** The channel, created on first use; throws Error with the text for the client. */
  channel(name: string): Channel {
    const existing = this.channels.get(name);
    if (existing !== undefined) return existing;
    const lower = name.toLowerCase();
    const other = this.lowerNames.get(lower);
    if (other !== undefined) {
      throw new Error(
        `rejecting channel "${name}" because channel "${other}" alreay exists (different cases not allowed)`,
      );
    }
    const channel = new Channel(this, this.store.createChannel(name));
    this.channels.set(name, channel);
    this.lowerNames.set(lower, name);
    this.logger.debug(`STAN: Channel "${name}" has been created`);
    return channel;
  }

  /** A channel rebuilt from a recovered store. */
  adoptChannel(channel: Channel): void {
    this.lastPublished = null;
    this.channels.set(channel.name, channel);
    this.lowerNames.set(channel.name.toLowerCase(), channel.name);
  }

  /** A recovered online subscription: unacked messages again, then new ones. */
  resumeRecovered(sub: Sub): void {
    redeliverAll(this, sub);
    sub.channel.sendAvailable(sub);
  }

  /** max_inactivity: the store reports the channel idle; delete it unless it is in use. */
  onChannelInactive(name: string): void {
    const channel = this.channels.get(name);
    if (channel === undefined || !this.serving) return;
    if (channel.hasActiveSubs() || channel.subscribing > 0) return;
    for (const d of channel.durables.values()) d.stopTimer();
    for (const g of channel.groups.values()) g.shadow?.stopTimer();
    try {
      this.store.deleteChannel(name);
    } catch (err) {
      this.logger.error(`STAN: Error deleting channel "${name}": ${String(err)}`);
      return;
    }
    this.channels.delete(name);
    this.lowerNames.delete(name.toLowerCase());
    if (this.lastPublished === channel) this.lastPublished = null;
    this.logger.info(`STAN: Channel "${name}" has been deleted`);
  }

  // ---- the publish batch -----------------------------------------------------------

  /** Queues a PubAck (encodePubAckError) and schedules the end-of-turn batch. */
  queueAck(reply: string | null, ack: Buffer): void {
    const lane = this.lane;
    if (reply !== null && reply !== '') lane.acks.add(reply, ack);
    this.queuedAck(lane, reply);
  }

  /** queueAck() of PubAck{guid} for a message `channel` stored, the guid being `src[start, end)`. */
  queueAckFrom(
    channel: Channel,
    reply: string | null,
    src: Buffer,
    start: number,
    end: number,
  ): void {
    const lane = channel.lane;
    if (reply !== null && reply !== '') lane.acks.addFrom(reply, src, start, end);
    this.queuedAck(lane, reply);
  }

  private queuedAck(lane: PublishLane, reply: string | null): void {
    // io_batch_size: a full batch goes to the store now, the rest of the turn after.
    if (reply !== null && reply !== '' && lane.acks.size >= this.options.ioBatchSize) {
      lane.run();
      return;
    }
    if (!lane.queued) {
      lane.queued = true;
      this.readyLanes.push(lane);
    }
    if (this.batchScheduled) return;
    this.batchScheduled = true;
    setImmediate(this.runBatches);
  }

  /**
   * The lane of a new channel's publishes: its own when the store flushes channels
   * one by one (a slow channel then delays only its own PubAcks), else the common one.
   */
  laneFor(channel: ChannelStore): PublishLane {
    const store = this.store;
    if (store.flushChannel === undefined) return this.lane;
    return new PublishLane(this, () => store.flushChannel!(channel), CHANNEL_ACK_BYTES);
  }

  /** PublishLane's host: whether the channel was not deleted meanwhile. */
  isCurrent(channel: Channel): boolean {
    return this.channels.get(channel.name) === channel;
  }

  /** The end of a turn: each lane with something queued starts its batch. */
  private readonly runBatches = (): void => {
    this.batchScheduled = false;
    const lanes = this.readyLanes;
    for (let i = 0; i < lanes.length; i++) {
      const lane = lanes[i]!;
      lane.queued = false;
      lane.run();
    }
    lanes.length = 0;
  };

  /** Resolves once every batch started has sent its PubAcks. */
  private async batchesDone(): Promise<void> {
    const running: Promise<void>[] = [];
    if (this.lane.running !== null) running.push(this.lane.running);
    for (const ch of this.channels.values()) {
      if (ch.lane !== this.lane && ch.lane.running !== null) running.push(ch.lane.running);
    }
    await Promise.all(running);
  }

  // ---- deliveries ---------------------------------------------------------------------

  /** Publishes a MsgProto to a subscription's inbox and counts it. */
  sendMsg(inbox: string, bytes: Uint8Array): void {
    this.outMsgs++;
    this.outBytes += bytes.length;
    this.bus.publish(inbox, null, bytes);
  }

  /** sendMsg() of the MsgProto at `buf[start, end)`. */
  sendMsgRange(inbox: string, buf: Buffer, start: number, end: number): void {
    this.outMsgs++;
    this.outBytes += end - start;
    this.bus.publishRange(inbox, null, buf, start, end);
  }

  redeliverExpired(sub: Sub): void {
    redeliverExpired(this, sub);
  }

  // ---- lifecycle ------------------------------------------------------------------

  async close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    if (!this.started) return;
    this.state = 'SHUTDOWN';
    this.ft?.stop();
    this.logger.info('STAN: Shutting down.');
    await this.batchesDone();
    for (const client of this.clients.values()) client.stopHeartbeats();
    for (const ch of this.channels.values()) {
      for (const s of ch.allSubs()) s.stopTimer();
    }
    for (const s of this.subs) s.unsubscribe();
    await this.bus.close().catch(() => undefined);
    await this.store.close().catch(() => undefined);
    // Clustered: the lease goes last, once this node's last state is written.
    await this.cluster?.stop().catch(() => undefined);
  }
}
