// A clustered node (`--clustered`): Follower with a warm mirror of the JetStream
// store, Leader while it holds the lease (lease.ts). On election the store catches up
// and the server starts serving; on losing the lease (or a store failure) the server
// stops serving at once, the store is abandoned without another write, and a fresh
// store starts following again: the node is a Follower, not a stopped process.
import { Events } from 'nats';
import { nuid } from '../../protocol/nuid.js';
import { JsEngine } from '../store/jetstream/engine.js';
import { leaseBucket as leaseBucketName } from '../store/jetstream/names.js';
import { JetStreamStore } from '../store/jetstream/store.js';
import type { Store } from '../store/types.js';
import type { StoreLimitsConfig } from '../store/limits.js';
import { Lease, leaseBucket, type LeaseBucket, type Role } from './lease.js';
import type { ClusteringOptions } from './options.js';

/** What the member needs from the streaming server. */
export interface ClusterHost {
  readonly serverId: string;
  readonly clusterId: string;
  readonly logger: { info(m: string): void; warn(m: string): void; error(m: string): void };
  /** The store changes on every step-down. */
  store: Store;
  /** The lease is ours and the store caught up: recover from it and serve. */
  promote(): Promise<void>;
  /**
   * The lease ran out without being taken: hold every request and everything that
   * would go out, and write no state, until resume() or demote().
   */
  suspend(reason: string): void;
  /** The lease is valid again and was never taken: carry on with what was held. */
  resume(): void;
  /** Stop serving at once and forget the served state (the store is abandoned). */
  demote(reason: string): void;
  onChannelInactive(name: string): void;
}

/**
 * How long the Leader's writes may go unacknowledged before it gives up leading: a
 * stream's leader election in JetStream takes a few seconds, and clients wait 30 s
 * for a PubAck by default.
 */
const STORE_FAIL_AFTER_MS = 15_000;

/** How long a starting node waits for its JetStream. */
const START_LIMIT_MS = 30_000;

export class ClusterMember {
  readonly nodeId: string;
  private engine!: JsEngine;
  /**
   * The lease's own connection: on the store's, a renewal would wait behind every
   * message write in flight (thousands under load, seconds at JetStream), and a busy
   * Leader would lose its lease.
   */
  private leaseEngine!: JsEngine;
  private lease!: Lease;
  /** Counts elections, so that a promotion overtaken by a step-down stops. */
  private term = 0;
  private stopped = false;
  /** The fresh store being opened after a step-down. */
  private storeReady: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: ClusterHost,
    private readonly options: ClusteringOptions,
    private readonly natsServer: string,
    private readonly limits: StoreLimitsConfig,
  ) {
    // As the reference: a random node ID when none is given.
    this.nodeId = options.nodeId !== '' ? options.nodeId : nuid.next();
  }

  get role(): Role {
    return this.lease.role;
  }

  /** True while the lease is this node's and valid (serving, or promoting). */
  get leaseValid(): boolean {
    return this.lease.valid;
  }

  /** True while this node serves the streaming protocol. */
  get leading(): boolean {
    return this.lease.role === 'Leader';
  }

  get engineDescription(): string {
    return this.engine.description;
  }

  /** Connects to the JetStream, opens the store as a Follower and joins the election. */
  async start(): Promise<Store> {
    const h = this.host;
    const o = this.options;
    // A node may start before its JetStream is ready (a cluster starting, a server
    // restarting): it tries again for a while, as the reference waits for NATS.
    const end = Date.now() + START_LIMIT_MS;
    let bucket: LeaseBucket;
    let store: JetStreamStore;
    for (let attempt = 1; ; attempt++) {
      try {
        this.engine = await JsEngine.connect(
          this.natsServer,
          `_NSS-${h.clusterId}-${this.nodeId}-js`,
          o.replicas,
        );
        try {
          this.leaseEngine = await JsEngine.connect(
            this.natsServer,
            `_NSS-${h.clusterId}-${this.nodeId}-lease`,
            o.replicas,
          );
        } catch (err) {
          await this.engine.close();
          throw err;
        }
        try {
          // A renewal may take as long as the lease lasts (a loaded JetStream answers in
          // seconds): one given up earlier would never extend it, even when stored.
          const name = leaseBucketName(h.clusterId);
          bucket = leaseBucket(
            await this.leaseEngine.bucket(name, o.leaseTimeout),
            this.leaseEngine.js,
            name,
            o.leaseTimeout,
          );
          store = await this.openStore();
        } catch (err) {
          await this.engine.close();
          await this.leaseEngine.close();
          throw err;
        }
        break;
      } catch (err) {
        if (Date.now() >= end) throw err;
        h.logger.warn(
          `STAN: clustered: JetStream not usable yet (attempt ${attempt}): ${err instanceof Error ? err.message : String(err)}`,
        );
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    this.lease = new Lease(bucket, this.nodeId, h.serverId, o, {
      elected: () => this.elected(),
      suspended: (reason) => {
        h.logger.warn(`STAN: clustered: Leader suspended: ${reason}; waiting for JetStream`);
        h.suspend(reason);
      },
      resumed: () => {
        h.resume();
      },
      lost: (reason) => {
        this.stepDown(reason);
      },
      info: (text) => {
        h.logger.info(`STAN: ${text}`);
      },
    });
    h.logger.info(`STAN: Cluster Node ID : ${this.nodeId}`);
    h.logger.info(
      `STAN: Cluster JetStream: ${this.engine.description} (replicas ${this.engine.replicas})`,
    );
    if (o.peers.length > 0) {
      h.logger.info('STAN: Cluster known peers:');
      o.peers.forEach((p, i) => h.logger.info(`STAN: peer ${i + 1}: "${p}"`));
    }
    if (o.ignored.length > 0) {
      h.logger.warn(
        `STAN: cluster options without a meaning here (no local raft log), ignored: ${[...new Set(o.ignored)].join(', ')}`,
      );
    }
    this.lease.start();
    this.watchReconnects(this.leaseEngine, (server) => {
      this.lease.reconnected(server);
    });
    this.watchReconnects(this.engine, () => {
      (this.host.store as Partial<{ reconnected(): void }>).reconnected?.();
    });
    return store;
  }

  /**
   * Calls `then` each time the engine's connection is back, on another server or the
   * same: what was in flight on the old one gets no answer, and what was written while
   * disconnected was dropped by the client (nats.js empties its buffer at a reconnect).
   */
  private watchReconnects(engine: JsEngine, then: (server: string) => void): void {
    void (async () => {
      for await (const s of engine.nc.status()) {
        if (s.type === Events.Reconnect && !this.stopped)
          then(typeof s.data === 'string' ? s.data : 'another server');
      }
    })();
  }

  private openStore(): Promise<JetStreamStore> {
    const h = this.host;
    return JetStreamStore.open({
      engine: this.engine,
      clusterId: h.clusterId,
      limits: this.limits,
      failAfterMs: STORE_FAIL_AFTER_MS,
      onFailure: (reason) => {
        h.logger.error(`STAN: clustered: store failure: ${reason}`);
        this.lease.lose(`store failure: ${reason}`);
      },
      onChannelInactive: (name) => {
        h.onChannelInactive(name);
      },
      warn: (text) => {
        h.logger.warn(`STAN: ${text}`);
      },
    });
  }

  private async elected(): Promise<void> {
    const term = ++this.term;
    await this.storeReady;
    this.host.logger.info('STAN: server became leader, performing leader promotion actions');
    await this.host.promote();
    if (term !== this.term || this.stopped) return;
    this.host.logger.info('STAN: finished leader promotion actions');
  }

  private stepDown(reason: string): void {
    this.term++;
    const h = this.host;
    h.logger.error(`STAN: clustered: stepping down as Leader: ${reason}`);
    h.demote(reason);
    if (this.stopped) return;
    // A fresh mirror: the old one may hold writes JetStream never took.
    this.storeReady = this.followAgain();
  }

  /** Opens a fresh store; while JetStream does not answer (its server down), tries again. */
  private async followAgain(): Promise<void> {
    const h = this.host;
    // A function: the loop's awaits may see stop() change it.
    const stopped = (): boolean => this.stopped;
    for (let attempt = 1; !stopped(); attempt++) {
      try {
        const store = await this.openStore();
        if (stopped()) void store.close();
        else h.store = store;
        return;
      } catch (err) {
        h.logger.error(`STAN: clustered: cannot follow again (attempt ${attempt}): ${String(err)}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /** A Leader's store is closed by the server first (its last state written); then the lease goes. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.lease.stop();
    await this.engine.close();
    await this.leaseEngine.close();
  }
}
