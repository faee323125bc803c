// The connection to the JetStream of the `-ns` NATS cluster and the few management
// calls the store makes: buckets and channel streams, created with `replicas`
// replicas (3 by default), or 1 when the JetStream is a single server (that server
// answers "replicas > 1 not supported in non-clustered mode").
import {
  connect,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type NatsConnection,
  type StreamConfig,
} from 'nats';
import { serverList } from '../../bus-nats.js';

/** Requests of the store (stream info, creates) give up after this long. */
const API_TIMEOUT_MS = 5000;
/** The store sends no Nats-Msg-Id (writer.ts): the shortest deduplication window. */
const DUPLICATE_WINDOW_NS = 1e9;

export class JsEngine {
  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    public replicas: number,
    readonly description: string,
  ) {}

  static async connect(urls: string, name: string, replicas: number): Promise<JsEngine> {
    const servers = serverList(urls);
    const nc = await connect({
      servers,
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 5000,
      timeout: API_TIMEOUT_MS,
    });
    try {
      const jsm = await nc.jetstreamManager({ timeout: API_TIMEOUT_MS });
      return new JsEngine(
        nc,
        nc.jetstream({ timeout: API_TIMEOUT_MS }),
        jsm,
        replicas,
        servers.join(','),
      );
    } catch (err) {
      await nc.close();
      throw new Error(
        `no JetStream at ${servers.join(',')}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** Runs `create(replicas)`, again with 1 replica when the JetStream is not clustered. */
  private async withReplicas<T>(create: (replicas: number) => Promise<T>): Promise<T> {
    try {
      return await create(this.replicas);
    } catch (err) {
      if (this.replicas > 1 && /non-clustered|insufficient resources/i.test(String(err))) {
        this.replicas = 1;
        return create(1);
      }
      throw err;
    }
  }

  /** The key-value bucket, created when missing. */
  bucket(name: string, timeoutMs: number, history = 1): Promise<KV> {
    return this.withReplicas((replicas) =>
      this.js.views.kv(name, { replicas, history, timeout: timeoutMs, allow_direct: false }),
    );
  }

  /**
   * A fresh, empty stream for a new channel: a stream left with that name (a channel
   * deleted while its Leader died) is deleted first, so that the channel starts at
   * sequence 1.
   */
  async createChannelStream(stream: string, subject: string, description: string): Promise<void> {
    await this.deleteStream(stream);
    const cfg: Partial<StreamConfig> = {
      name: stream,
      description,
      subjects: [subject],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      duplicate_window: DUPLICATE_WINDOW_NS,
      allow_direct: true,
    };
    await this.withReplicas((num_replicas) => this.jsm.streams.add({ ...cfg, num_replicas }));
  }

  /** Deletes a stream; one that does not exist is not an error. */
  async deleteStream(stream: string): Promise<void> {
    try {
      await this.jsm.streams.delete(stream);
    } catch (err) {
      if (!/not found/i.test(String(err))) throw err;
    }
  }

  /** First and last sequence of a stream, null when it does not exist. */
  async streamState(stream: string): Promise<{ first: number; last: number } | null> {
    try {
      const info = await this.jsm.streams.info(stream);
      return { first: info.state.first_seq, last: info.state.last_seq };
    } catch (err) {
      if (/not found/i.test(String(err))) return null;
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    await this.nc.drain().catch(() => this.nc.close());
  }
}
