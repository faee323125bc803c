// node-nats-streaming (the reference's Node client, CommonJS) behind narrow typed
// interfaces, and helpers that turn its events into promises, plus an embedded
// wirebus with streaming for each test.

import { createRequire } from 'node:module';
import { startServer, type RunningServer, type StartOptions } from '../../src/index.js';
import type { StreamingOptions } from '../../src/streaming/options.js';
import type { StreamingServer } from '../../src/streaming/server.js';

export interface StanMessage {
  getSequence(): number;
  getSubject(): string;
  getData(): string | Buffer;
  getRawData(): Buffer;
  isRedelivered(): boolean;
  getRedeliveryCount(): number;
  getTimestamp(): Date;
  ack(): void;
}

export interface StanSubscription {
  on(event: 'message', fn: (m: StanMessage) => void): this;
  on(event: 'error' | 'timeout', fn: (err: Error) => void): this;
  on(event: 'ready' | 'unsubscribed' | 'closed', fn: () => void): this;
  once(event: 'ready' | 'unsubscribed' | 'closed', fn: () => void): this;
  once(event: 'error' | 'timeout', fn: (err: Error) => void): this;
  removeAllListeners(event?: string): this;
  unsubscribe(): void;
  close(): void;
  isClosed(): boolean;
  readonly ackInbox?: string;
  readonly inbox: string;
}

export interface StanSubscriptionOptions {
  setMaxInFlight(n: number): this;
  setAckWait(ms: number): this;
  setStartAt(position: number): this;
  setStartAtSequence(seq: number): this;
  setStartAtTimeDelta(ms: number): this;
  setStartWithLastReceived(): this;
  setDeliverAllAvailable(): this;
  setManualAckMode(on: boolean): this;
  setDurableName(name: string): this;
}

/** The old `nats` v1 connection inside the client: used to make a client go silent. */
export interface NatsV1 {
  close(): void;
  unsubscribe(sid: number): void;
}

export interface Stan {
  on(event: 'connect' | 'close', fn: () => void): this;
  on(event: 'error' | 'connection_lost', fn: (err: Error | string) => void): this;
  once(event: 'connect' | 'close', fn: () => void): this;
  once(event: 'error', fn: (err: Error | string) => void): this;
  publish(
    subject: string,
    data: string | Buffer,
    cb?: (err: Error | null | undefined, guid: string) => void,
  ): string;
  subscribe(subject: string, opts?: StanSubscriptionOptions): StanSubscription;
  subscribe(subject: string, qGroup: string, opts?: StanSubscriptionOptions): StanSubscription;
  subscriptionOptions(): StanSubscriptionOptions;
  close(): void;
  isClosed(): boolean;
  /** Undefined once the client closed. */
  readonly nc: NatsV1 | undefined;
  readonly hbSubscription: number;
  /** The client's own cleanup (ping timer, pending acks); sends nothing. */
  cleanupOnClose(err?: Error): void;
}

/** The client process dies: its connection drops without a CloseRequest. */
export function kill(sc: Stan): void {
  try {
    sc.cleanupOnClose();
    sc.nc?.close();
  } catch {
    // already gone
  }
}

export interface StanOptions {
  url: string;
  connectTimeout?: number;
  ackTimeout?: number;
  stanPingInterval?: number;
  stanMaxPingOut?: number;
  maxReconnectAttempts?: number;
  reconnect?: boolean;
  reconnectTimeWait?: number;
}

interface StanModule {
  connect(clusterID: string, clientID: string, opts: StanOptions): Stan;
}

const require = createRequire(import.meta.url);
export const stanModule = require('node-nats-streaming') as StanModule;

export const StartPosition = {
  NEW_ONLY: 0,
  LAST_RECEIVED: 1,
  TIME_DELTA_START: 2,
  SEQUENCE_START: 3,
  FIRST: 4,
} as const;

/** A bound on every wait, so a broken server fails the test instead of hanging it. */
export const WAIT_MS = 5000;

export function withTimeout<T>(p: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => {
      reject(new Error(`timed out waiting for ${what}`));
    }, ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** The client's socket (node-nats-streaming's nats v1 connection), to stop reading a while. */
export function socketOf(sc: Stan): { pause(): void; resume(): void } {
  return (sc.nc as unknown as { stream: { pause(): void; resume(): void } }).stream;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface StanEnv {
  readonly running: RunningServer;
  readonly streaming: StreamingServer;
  readonly url: string;
  /** Monitoring base URL (http://127.0.0.1:port). */
  readonly http: string;
  readonly connect: (clientID: string, opts?: Partial<StanOptions>) => Promise<Stan>;
}

/** Runs `body` against a fresh embedded server with streaming and monitoring. */
export async function withStan<T>(
  streaming: Partial<StreamingOptions>,
  body: (env: StanEnv) => Promise<T>,
  core: StartOptions = {},
): Promise<T> {
  const running = await startServer({
    host: '127.0.0.1',
    port: 0,
    httpPort: -1,
    ...core,
    streaming,
  });
  const clients: Stan[] = [];
  const env: StanEnv = {
    running,
    streaming: running.streaming!,
    url: running.url,
    http: `http://127.0.0.1:${running.httpPort}`,
    connect: async (clientID, opts = {}) => {
      const sc = await connect(running.url, streaming.clusterId ?? 'test-cluster', clientID, opts);
      clients.push(sc);
      return sc;
    },
  };
  try {
    return await body(env);
  } finally {
    for (const sc of clients) kill(sc);
    await running.close();
  }
}

export function connect(
  url: string,
  clusterID: string,
  clientID: string,
  opts: Partial<StanOptions> = {},
): Promise<Stan> {
  const sc = stanModule.connect(clusterID, clientID, {
    url,
    connectTimeout: 2000,
    maxReconnectAttempts: 0,
    reconnect: false,
    ...opts,
  });
  return withTimeout(
    new Promise<Stan>((resolve, reject) => {
      sc.once('connect', () => {
        // Errors after connect (the server going away at the end of a test) are expected.
        sc.on('error', () => undefined);
        resolve(sc);
      });
      sc.once('error', (err) => {
        reject(err instanceof Error ? err : new Error(err));
      });
    }),
    `connect ${clientID}`,
  );
}

/** Publishes and resolves with the guid once acked; rejects with the PubAck error. */
export function publish(sc: Stan, subject: string, data: string | Buffer): Promise<string> {
  return withTimeout(
    new Promise<string>((resolve, reject) => {
      sc.publish(subject, data, (err, guid) => {
        if (err !== undefined && err !== null) reject(err);
        else resolve(guid);
      });
    }),
    `publish ack on ${subject}`,
  );
}

export async function publishMany(
  sc: Stan,
  subject: string,
  n: number,
  prefix = 'm',
): Promise<void> {
  const acks: Promise<string>[] = [];
  for (let i = 1; i <= n; i++) acks.push(publish(sc, subject, `${prefix}${i}`));
  await Promise.all(acks);
}

/** A subscription that records what it receives. */
export class Received {
  readonly msgs: StanMessage[] = [];
  private waiters: { n: number; resolve: () => void }[] = [];
  ready: Promise<void>;
  error: Error | null = null;

  constructor(
    readonly sub: StanSubscription,
    onMessage?: (m: StanMessage) => void,
  ) {
    this.ready = withTimeout(
      new Promise<void>((resolve, reject) => {
        sub.once('ready', resolve);
        sub.once('error', reject);
      }),
      'subscription ready',
    );
    sub.on('error', (err) => {
      this.error = err;
    });
    sub.on('message', (m) => {
      this.msgs.push(m);
      onMessage?.(m);
      this.waiters = this.waiters.filter((w) => {
        if (this.msgs.length >= w.n) w.resolve();
        return this.msgs.length < w.n;
      });
    });
  }

  seqs(): number[] {
    return this.msgs.map((m) => m.getSequence());
  }

  /** Resolves once at least `n` messages arrived. */
  waitFor(n: number, ms = WAIT_MS): Promise<void> {
    if (this.msgs.length >= n) return Promise.resolve();
    return withTimeout(
      new Promise<void>((resolve) => this.waiters.push({ n, resolve })),
      `${n} messages (have ${this.msgs.length})`,
      ms,
    );
  }
}

export async function subscribe(
  sc: Stan,
  subject: string,
  opts: StanSubscriptionOptions,
  qGroup?: string,
  onMessage?: (m: StanMessage) => void,
): Promise<Received> {
  const sub =
    qGroup === undefined ? sc.subscribe(subject, opts) : sc.subscribe(subject, qGroup, opts);
  const r = new Received(sub, onMessage);
  await r.ready;
  return r;
}

/** The error a subscribe request is refused with. */
export function subscribeError(
  sc: Stan,
  subject: string,
  opts: StanSubscriptionOptions,
  qGroup?: string,
): Promise<string> {
  const sub =
    qGroup === undefined ? sc.subscribe(subject, opts) : sc.subscribe(subject, qGroup, opts);
  return withTimeout(
    new Promise<string>((resolve, reject) => {
      sub.once('error', (err) => {
        resolve(err.message);
      });
      sub.once('ready', () => {
        reject(new Error('subscription unexpectedly accepted'));
      });
    }),
    'subscription error',
  );
}

export function unsubscribe(sub: StanSubscription, close = false): Promise<void> {
  return withTimeout(
    new Promise<void>((resolve, reject) => {
      sub.once(close ? 'closed' : 'unsubscribed', resolve);
      sub.once('error', reject);
      if (close) sub.close();
      else sub.unsubscribe();
    }),
    close ? 'sub close' : 'unsubscribe',
  );
}

export function closeStan(sc: Stan): Promise<void> {
  return withTimeout(
    new Promise<void>((resolve) => {
      sc.once('close', resolve);
      sc.close();
    }),
    'close',
  );
}

/** Polls `check` until it returns true. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = WAIT_MS,
): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function getJson(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}
