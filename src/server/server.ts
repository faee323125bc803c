// The server: the client listener, the registry of connections and accounts, the
// once-per-turn flush of every connection with pending output, and lifecycle.

import { createHash } from 'node:crypto';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { CloseReason, ErrText, errLine } from '../protocol/errors.js';
import { type ServerOptions, resolveOptions, validateOptions } from '../config/options.js';
import type { LoadedConfig } from '../config/load.js';
import { infoAfterFirstPong } from './async-info.js';
import { Account, GLOBAL_ACCOUNT } from './account.js';
import { Client, type ConnectOptions } from './client.js';
import { type ClosedClientInfo, snapshotClosed } from './closed.js';
import { newServerId } from './identity.js';
import { createLogger, type Logger } from './logger.js';
import { lameDuckShutdown } from './lame-duck.js';
import { InternalMessage, type PublishedMessage } from './message.js';
import { internalFailed } from './delivery.js';
import { type ReloadHook, reloadServer } from './reload.js';
import { leadingInfoFields, newInfoInputs, SharedInfo } from './info-line.js';
import { adoptSharedReads } from './shared-read.js';
import { type TcpHandle, takeAcceptedHandles, tcpInternals } from './tcp-internals.js';
import { TcpTransport } from './tcp-transport.js';
import { type InternalHandler, type RangeHandler, Subscription } from './subscription.js';
import { RangeTap, tapTokens } from './range-tap.js';
import { hasWildcard } from '../subjects/validate.js';
import { WIREBUS_VERSION, PROTOCOL_VERSION } from './version.js';
import type { ClientListener, SideListener, Transport } from './transport.js';

/** How many closed connections /connz can show, as the reference. */
const MAX_CLOSED_CLIENTS = 10000;

export type { ClosedClientInfo } from './closed.js';

/**
 * Authentication, accounts and TLS (src/auth/security.ts) plug in here; null when
 * none is configured, and then nothing of them runs.
 */
/** A connection whose reads runRead() handles: a client or a route. */
export interface ReadingConnection {
  label(): string;
  close(reason: string): void;
}

/** The client and route parsers, as runRead() drives them. */
export interface ChunkParser {
  parse(buf: Buffer): void;
}

export interface SecurityHooks {
  /** Takes over a new connection: nonce, TLS, no_auth_user, then Client.begin(). */
  begin(c: Client): void;
  /** Adds tls_required, tls_verify and tls_available to an INFO under construction. */
  tlsInfo(info: Record<string, unknown>): void;
  /** TLS is configured: connections start through the TLS layer's stream events. */
  readonly tlsConfigured: boolean;
  /** Checks CONNECT credentials and binds user, account and permissions. */
  authenticate(c: Client, opts: ConnectOptions): boolean | Promise<boolean>;
  clientClosed(c: Client): void;
}

/**
 * Clustering (src/cluster) plugs in here; null when no cluster port is configured,
 * and then nothing of it runs.
 */
export interface ClusterHooks {
  /** The cluster's name (configured, adopted or drawn), for the banner and INFO. */
  readonly name: string;
  /** Adds cluster and connect_urls to a client INFO under construction. */
  clientInfo(info: Record<string, unknown>, ldm: boolean): void;
  /**
   * A local subscription came (+1) or went (-1) in account: interest for the other
   * servers. A stream import's shadow counts in the exporting account.
   */
  localInterest(account: Account, sub: Subscription, delta: number): void;
  /** Right after a client's first PONG: a fresh INFO if the cluster changed since it connected. */
  afterFirstPong(c: Client): void;
  /** Lame duck mode begins: the other servers stop advertising this one. */
  lameDuck(): void;
  /**
   * connect_urls for a WebSocket client's INFO: this server's WebSocket URLs, then the
   * ws_connect_urls the other servers announced; null when none are advertised yet.
   */
  wsClientUrls(ldm: boolean): string[] | null;
}

/**
 * JetStream (src/jetstream) plugs in here; null when it is off, and then nothing of it
 * runs and INFO says nothing of it.
 */
export interface JetStreamHooks {
  /** Adds `jetstream` to a client INFO under construction. */
  clientInfo(info: Record<string, unknown>): void;
  /** The JetStream domain, written into INFO after `cluster` as the reference; '' for none. */
  readonly domain: string;
  /** A subscription came: a push consumer waiting for interest on it may start. */
  subscribed(sub: Subscription): void;
  /** /jsz after server_id and now, with its query (accounts, streams, consumers, config, acc). */
  jsz(query: URLSearchParams): Record<string, unknown>;
  /** /varz's `jetstream` block. */
  varz(): Record<string, unknown>;
}

export class Server {
  readonly options: ServerOptions;
  readonly logger: Logger;
  readonly id: string;
  readonly name: string;
  readonly globalAccount: Account;
  readonly accounts = new Map<string, Account>();
  readonly clients = new Map<number, Client>();
  /** Oldest first; trimmed to MAX_CLOSED_CLIENTS. */
  readonly closedClients: ClosedClientInfo[] = [];
  readonly startTime = new Date();
  configLoadTime = new Date();

  /** The client port actually bound (differs from options.port when that was 0). */
  port = 0;
  authRequired = false;
  lameDuck = false;
  security: SecurityHooks | null = null;
  cluster: ClusterHooks | null = null;
  jetstream: JetStreamHooks | null = null;
  /** JetStream starts with the server: the banner then shows the reference's `Node:` line. */
  jetstreamRequested = false;
  /**
   * A cluster name configured without a cluster port: the reference still logs it
   * and puts it in client INFO. Unused once a cluster layer is attached.
   */
  clusterName = '';
  /** The config file the command line named, for the log; empty when embedded. */
  configFile = '';
  /** Layers that take part in a config reload (security, streaming): see reload.ts. */
  readonly reloadHooks: ReloadHook[] = [];
  /** When a reload last changed max_payload (ms since epoch), for async INFO. */
  maxPayloadChangedAt = 0;

  inMsgs = 0;
  // Byte counts pass 2^31 - 1 (a small integer's limit) within seconds of heavy
  // traffic: as doubles from the start (-0), their first large value does not
  // retire the hidden class and deoptimize the code compiled around it.
  inBytes = -0;
  outMsgs = 0;
  outBytes = -0;
  slowConsumers = 0;
  staleConnections = 0;
  totalConnections = 0;
  subscriptionCount = 0;

  /** True while a client's read is being parsed; its end flushes (see Client.begin). */
  reading = false;
  /** True while a connection is accepted; accept() flushes its INFO itself. */
  private accepting = false;
  /** True from holdFlush() to releaseFlush(), which flushes. */
  private flushHeld = false;
  /** Connections whose output passed half of max_pending during this read (backpressure.ts). */
  private congested: Client[] = [];

  private listener: NetServer | null = null;
  private nextCid = 1;
  private flushList: Client[] = [];
  private spareFlushList: Client[] = [];
  private flushScheduled = false;
  /** The INFO fields every plain client shares, as JSON (info-line.ts). */
  private readonly sharedInfo = new SharedInfo();
  /** What infoFor() fills in for each INFO it makes (no object per connection). */
  private readonly infoInputs = newInfoInputs();
  /** Counts turns of the event loop in which connections read (Client's read budget). */
  private turnCount = 0;
  private turnScheduled = false;
  private readonly internalMessage = new InternalMessage();
  /** publishInternal calls under way: a subscriber may publish while it receives. */
  private internalDepth = 0;
  private closing: Promise<void> | null = null;
  /** Run by start() before the client listener opens, and by close(): the monitor. */
  private readonly startHooks: (() => Promise<void>)[] = [];
  private readonly shutdownHooks: (() => Promise<void>)[] = [];
  private readonly stopAcceptingHooks: (() => void)[] = [];
  /** Listeners beside the client port, by the ports file's key (`websocket`). */
  readonly sideListeners = new Map<string, SideListener>();
  private readyResolvers: (() => void)[] = [];
  ready = false;

  constructor(options: Partial<ServerOptions> = {}, logger?: Logger) {
    this.options = resolveOptions(options);
    const problems = validateOptions(this.options);
    if (problems.length > 0) throw new Error(`invalid options: ${problems.join('; ')}`);
    this.logger = logger ?? createLogger(this.options);
    this.id = newServerId();
    this.name = this.options.serverName !== '' ? this.options.serverName : this.id;
    this.globalAccount = new Account(GLOBAL_ACCOUNT, {
      sublistCache: !this.options.disableSublistCache,
    });
    this.accounts.set(GLOBAL_ACCOUNT, this.globalAccount);
  }

  /** Opens the client listener; resolves once it accepts connections. */
  async start(): Promise<void> {
    const o = this.options;
    this.logger.info(`Starting nats-server`);
    this.logger.info(`  Version:  ${PROTOCOL_VERSION} (wirebus ${WIREBUS_VERSION})`);
    this.logger.info(`  Git:      [not set]`);
    const clusterName = this.cluster !== null ? this.cluster.name : this.clusterName;
    if (clusterName !== '') this.logger.info(`  Cluster:  ${clusterName}`);
    this.logger.info(`  Name:     ${this.name}`);
    if (this.jetstreamRequested) this.logger.info(`  Node:     ${nodeHash(this.name)}`);
    this.logger.info(`  ID:       ${this.id}`);
    if (this.configFile !== '') this.logger.info(`Using configuration file: ${this.configFile}`);
    // Listeners beside this one (the HTTP monitor) open first, as in the reference.
    for (const hook of this.startHooks) await hook();
    if (!o.clientListener) {
      this.logger.info('No client listener: the streaming layer uses an external NATS server');
      this.markReady();
      return;
    }
    // Paused at accept, so a plain connection's handle can move to a socket that
    // reads into the shared buffer before anything is read (shared-read.ts).
    const listener = createServer({ noDelay: true, pauseOnConnect: true }, (socket) => {
      this.accept(socket);
    });
    this.listener = listener;
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen({ host: o.host, port: o.port === -1 ? 0 : o.port, backlog: 4096 }, () => {
        listener.off('error', reject);
        resolve();
      });
    });
    listener.on('error', (err) => {
      this.logger.error(`Client listener error: ${err.message}`);
    });
    // Plain connections are driven at Node's TCP handle (tcp-internals.ts); TLS ones,
    // and every one on a Node without those internals, come as Sockets to accept().
    takeAcceptedHandles(listener, this.acceptHandle);
    const address = listener.address();
    this.port = typeof address === 'object' && address !== null ? address.port : o.port;
    this.logger.info(`Listening for client connections on ${hostPort(o.host, this.port)}`);
    this.logger.info('Server is ready');
    this.markReady();
  }

  private markReady(): void {
    this.ready = true;
    for (const r of this.readyResolvers) r();
    this.readyResolvers = [];
  }

  /** Resolves once the client listener accepts connections. */
  async whenReady(): Promise<void> {
    if (this.ready) return;
    await new Promise<void>((resolve) => this.readyResolvers.push(resolve));
  }

  private accept(socket: Socket): void {
    const client = this.admit(socket, null);
    if (client === null) return;
    // A plain connection reads into the shared buffer; TLS reads its first byte,
    // then the handshake, through stream events.
    const shared =
      this.security !== null && this.security.tlsConfigured
        ? null
        : adoptSharedReads(socket, client.onRead);
    if (shared !== null) {
      client.socket = shared;
      client.sharedReads = true;
    }
    // Accepted paused (pauseOnConnect): the connection starts reading in open().
    this.open(client, shared ?? socket);
  }

  /** A plain connection at its TCP handle; false leaves it to Node's Socket (TLS). */
  private readonly acceptHandle = (handle: TcpHandle): boolean => {
    if (this.security !== null && this.security.tlsConfigured) return false;
    const transport = new TcpTransport(handle, tcpInternals()!);
    const client = this.admit(transport, null);
    if (client === null) return true;
    transport.reader = client.onRead;
    client.sharedReads = true;
    this.open(client, transport);
    return true;
  };

  /** Sends an accepted client its INFO and starts reading. */
  private open(client: Client, reading: Transport): void {
    // No turn-end flush is scheduled for the INFO (a setImmediate per connection):
    // it leaves below.
    this.accepting = true;
    try {
      this.begin(client);
    } finally {
      this.accepting = false;
    }
    reading.resume();
    // INFO leaves now rather than after every other event of this turn: a client
    // that connects is answered as soon as it is accepted.
    this.flushPending();
  }

  /**
   * Takes a connection from a listener beside the client port (WebSocket): the same
   * limits, INFO, authentication and life as a client of the client port.
   */
  acceptConnection(transport: Transport, via: ClientListener): Client | null {
    const client = this.admit(transport, via);
    if (client !== null) this.begin(client);
    return client;
  }

  /** A new client, or null when the server refuses it (closing, lame duck, max_connections). */
  private admit(transport: Transport, via: ClientListener | null): Client | null {
    if (this.closing !== null || this.lameDuck) {
      transport.destroy();
      return null;
    }
    const cid = this.nextCid++;
    const client = new Client(this, cid, transport, this.globalAccount);
    client.via = via;
    this.totalConnections++;
    if (this.clients.size >= this.options.maxConnections) {
      // The reference sends INFO first, then the error. What the client sends is
      // read and dropped (flowing, no 'data' listener), so its close is noticed.
      transport.write(this.infoFor(client));
      transport.end(errLine(ErrText.maxConnections));
      transport.resume();
      setTimeout(() => transport.destroy(), 2000).unref();
      this.logger.error(`${client.label()} - Maximum Connections Exceeded`);
      return null;
    }
    return client;
  }

  private begin(client: Client): void {
    this.clients.set(client.cid, client);
    if (this.logger.debugEnabled)
      this.logger.debug(`${client.label()} - Client connection created`);
    if (this.security !== null) this.security.begin(client);
    else client.begin(this.infoFor(client));
  }

  /** The INFO line for one connection (` \r\n` ending, field order as the reference). */
  infoFor(c: Client, extra?: { ldm?: boolean }): Buffer {
    const ldm = extra?.ldm === true;
    const o = this.options;
    const inputs = this.infoInputs;
    inputs.id = this.id;
    inputs.name = this.name;
    inputs.host = advertisedHost(o);
    inputs.port = advertisedPort(o, this.port);
    inputs.headers = !o.noHeaderSupport;
    inputs.authRequired = this.authRequired;
    inputs.maxPayload = o.maxPayload;
    if (
      this.security === null &&
      this.jetstream === null &&
      this.cluster === null &&
      c.nonce === '' &&
      c.via === null &&
      !ldm
    ) {
      // A plain client: the shared fields' JSON as kept, then its own.
      let line = `INFO ${this.sharedInfo.json(inputs)}`;
      if (c.cid > 0) line += `,"client_id":${c.cid}`;
      if (c.ip !== '') line += `,"client_ip":${JSON.stringify(c.ip)}`;
      if (this.clusterName !== '') line += `,"cluster":${JSON.stringify(this.clusterName)}`;
      return Buffer.from(`${line}} \r\n`, 'utf8');
    }
    const info = leadingInfoFields(inputs);
    if (this.security !== null) this.security.tlsInfo(info);
    info.max_payload = o.maxPayload;
    if (this.jetstream !== null) this.jetstream.clientInfo(info);
    if (c.cid > 0) info.client_id = c.cid;
    if (c.ip !== '') info.client_ip = c.ip;
    if (c.nonce !== '') info.nonce = c.nonce;
    if (this.cluster !== null) this.cluster.clientInfo(info, ldm);
    else if (this.clusterName !== '') info.cluster = this.clusterName;
    if (this.jetstream !== null && this.jetstream.domain !== '')
      info.domain = this.jetstream.domain;
    if (ldm) info.ldm = true;
    if (c.via !== null) c.via.info(info);
    return Buffer.from(`INFO ${JSON.stringify(info)} \r\n`, 'utf8');
  }

  // ---- the flush of every connection with pending output, once per turn -------

  queueFlush(c: Client): void {
    this.flushList.push(c);
    if (!this.flushScheduled && !this.reading && !this.accepting && !this.flushHeld) {
      this.flushScheduled = true;
      setImmediate(this.flushAll);
    }
  }

  /**
   * One read of a connection: its ops, then one flush of what they produced (no
   * setImmediate per read); a publisher that pushed a subscriber past half of
   * max_pending is then held. A bug behind one op must not take the server down:
   * it is logged and that connection, whose stream position is now unknown, closes.
   */
  runRead(conn: ReadingConnection, parser: ChunkParser, chunk: Buffer, producer: Client): void {
    this.reading = true;
    try {
      parser.parse(chunk);
    } catch (err) {
      const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
      this.logger.error(`${conn.label()} - internal error: ${text}`);
      conn.close(CloseReason.parseError);
    } finally {
      this.reading = false;
    }
    this.flushPending();
    const congested = this.congested;
    if (congested.length > 0) {
      for (let i = 0; i < congested.length; i++) {
        const c = congested[i]!;
        c.flow.listed = false;
        c.holdProducer(producer);
      }
      congested.length = 0;
    }
  }

  /** The current turn of the event loop, as far as reads are concerned. */
  turn(): number {
    if (!this.turnScheduled) {
      this.turnScheduled = true;
      setImmediate(this.nextTurn);
    }
    return this.turnCount;
  }

  private readonly nextTurn = (): void => {
    this.turnScheduled = false;
    this.turnCount++;
  };

  /** During a read: c's output passed half of max_pending, so the reader will be held. */
  congest(c: Client): void {
    c.flow.listed = true;
    this.congested.push(c);
  }

  /**
   * Publishes made outside a read (a store's acknowledgements, sent from a callback) are
   * flushed at their end, as a read's are: from holdFlush() to releaseFlush() no turn-end
   * flush is scheduled for them (it would run empty, one more turn of the event loop and
   * an epoll_wait per write round). Not `reading`: that also lists congested receivers
   * for the read's publisher to wait on, and there is none here. Returns whether an
   * outer hold was already under way; releaseFlush() takes it back.
   */
  holdFlush(): boolean {
    const held = this.flushHeld;
    this.flushHeld = true;
    return held;
  }

  releaseFlush(held: boolean): void {
    this.flushHeld = held;
    if (!held && !this.reading) this.flushPending();
  }

  /**
   * Flushes now, at the end of a read: a request's reply then leaves in the same
   * turn instead of waiting for setImmediate, which halves request/reply latency.
   */
  flushPending(): void {
    if (this.flushList.length > 0) this.flushAll();
  }

  private readonly flushAll = (): void => {
    this.flushScheduled = false;
    const list = this.flushList;
    this.flushList = this.spareFlushList;
    for (let i = 0; i < list.length; i++) list[i]!.flush();
    list.length = 0;
    this.spareFlushList = list;
  };

  // ---- hooks the client calls -----------------------------------------------

  /** Checks CONNECT credentials; true (or a promise of it) when the connection may proceed. */
  authenticate(c: Client, opts: ConnectOptions): boolean | Promise<boolean> {
    if (this.security !== null) return this.security.authenticate(c, opts);
    // No authentication is configured: every client is welcome.
    return !this.authRequired;
  }

  /** An -ERR text when the client may not subscribe there, else null. */
  checkSubscribe(c: Client, subject: string, queue: string | null): string | null {
    const p = c.perms;
    return p === null ? null : p.checkSubscribe(subject, queue);
  }

  /** An -ERR text when the client may not publish there, else null (one test without permissions). */
  checkPublish(c: Client, subject: string): string | null {
    const p = c.perms;
    return p === null ? null : p.checkPublish(subject);
  }

  subscriptionAdded(sub: Subscription): void {
    this.subscriptionCount++;
    const p = sub.client.perms;
    if (p !== null) sub.filter = p.deliveryFilter(sub.subject);
    const account = sub.client.account;
    if (this.cluster !== null) this.cluster.localInterest(account, sub, 1);
    if (account.links !== null) account.links.subscribed(sub);
    if (this.jetstream !== null) this.jetstream.subscribed(sub);
  }

  subscriptionRemoved(sub: Subscription): void {
    this.subscriptionCount--;
    const account = sub.client.account;
    if (sub.tap !== null) account.removeTap(sub.tap);
    if (this.cluster !== null) this.cluster.localInterest(account, sub, -1);
    if (account.links !== null) account.links.unsubscribed(sub);
  }

  afterFirstPong(c: Client): void {
    // Async INFO goes only to clients past their first PONG; one that missed a change
    // gets a fresh INFO now.
    infoAfterFirstPong(this, c);
    if (this.cluster !== null) this.cluster.afterFirstPong(c);
  }

  /** A new connection id: clients, in-process clients and routes share one sequence. */
  nextConnectionId(): number {
    return this.nextCid++;
  }

  clientClosed(c: Client): void {
    if (!this.clients.delete(c.cid)) return;
    if (this.security !== null) this.security.clientClosed(c);
    if (c.kind !== 'client') return;
    this.closedClients.push(snapshotClosed(c));
    if (this.closedClients.length > MAX_CLOSED_CLIENTS) this.closedClients.shift();
    if (this.logger.debugEnabled) {
      this.logger.debug(`${c.label()} - Client connection closed: ${c.closeReason}`);
    }
  }

  // ---- in-process clients (the streaming layer, system services) -------------

  /** A connection without a socket, for code inside this process. */
  createInternalClient(name: string, account: Account = this.globalAccount): Client {
    const c = new Client(this, this.nextCid++, null, account, 'internal');
    c.name = name;
    c.headers = true;
    c.verbose = false;
    c.pedantic = false;
    c.authorized = true;
    c.connectReceived = true;
    this.clients.set(c.cid, c);
    return c;
  }

  subscribeInternal(
    c: Client,
    subject: string,
    queue: string | null,
    handler: InternalHandler,
    /** The handler keeps nothing of a payload after it returns (Subscription.borrows). */
    borrows = false,
  ): Subscription {
    const sid = String(c.subs.size + 1) + '.' + String(this.nextCid++);
    const sub = new Subscription(c, subject, queue, sid, handler);
    sub.borrows = borrows;
    if (!hasWildcard(subject)) sub.literal = subject;
    if (!c.account.sublist.insert(sub)) throw new Error(`invalid subject: ${subject}`);
    c.subs.set(sid, sub);
    this.subscriptionAdded(sub);
    return sub;
  }

  /**
   * An in-process subscription whose handler gets the payload as `buf[start, end)` and
   * keeps nothing of it after it returns: no view per message (the streaming layer's
   * publish and ack subjects). Headers, if any, are not passed.
   */
  subscribeInternalRange(c: Client, subject: string, handler: RangeHandler): Subscription {
    const sub = this.subscribeInternal(
      c,
      subject,
      null,
      (s, r, _h, p) => {
        handler(s, r, p, 0, p.length);
      },
      true,
    );
    sub.ranged = handler;
    // On `<prefix>.>`, publishes under the prefix skip routing while only it could want them.
    const tokens = tapTokens(subject);
    if (tokens !== null) {
      sub.tap = new RangeTap(sub, handler, tokens, internalFailed);
      c.account.addTap(sub.tap);
    }
    return sub;
  }

  /**
   * publishInternal of a message given as `buf[start, end)`, its first `hdrLen` bytes
   * its header block (0: none): no view of it is made (the streaming layer's PubAcks and
   * deliveries, JetStream's direct gets). `once`: see routeInternal.
   */
  publishInternalRange(
    c: Client,
    subject: string,
    reply: string | null,
    buf: Buffer,
    start: number,
    end: number,
    hdrLen = 0,
    once = false,
  ): number {
    const m = (this.internalDepth === 0 ? this.internalMessage : new InternalMessage()).setRange(
      subject,
      reply,
      buf,
      start,
      end,
      hdrLen,
    );
    return this.routeInternal(c, subject, m, once);
  }

  /**
   * The largest output backlog (Client.outBacklog) among the receivers of `subject`
   * in `account`: an in-process producer with more to send (a streaming delivery, a
   * JetStream consumer) waits while it is high, instead of pushing a receiver past
   * max_pending and into a slow-consumer cut-off.
   */
  subjectBacklog(account: Account, subject: string): number {
    const r = account.sublist.match(subject);
    let most = 0;
    for (const sub of r.psubs) most = Math.max(most, sub.client.outBacklog);
    for (const group of r.qsubs) {
      for (const sub of group) most = Math.max(most, sub.client.outBacklog);
    }
    return most;
  }

  /**
   * Publishes from inside the process; returns how many subscriptions received it.
   * `once`: see routeInternal. (A JetStream delivery, routed under a subject other than
   * its own, is laid out by its consumer and goes through routeInternal.)
   */
  publishInternal(
    c: Client,
    subject: string,
    reply: string | null,
    data: Buffer,
    headers: Buffer | null = null,
    once = false,
  ): number {
    // The shared message serves one publish at a time: one made while another is
    // still being routed (to local subscribers, then to the routes) gets its own.
    const m = (this.internalDepth === 0 ? this.internalMessage : new InternalMessage()).set(
      subject,
      reply,
      headers,
      data,
    );
    return this.routeInternal(c, subject, m, once);
  }

  /**
   * publishInternal for a message its publisher laid out itself (a JetStream consumer
   * writes each delivery's subject, ack reply and sizes into a buffer of its own, with
   * no string per message); `subject` decides who receives it. `once`: `subject` is the
   * reply subject of a request answered once (a PubAck, an API response): it is matched
   * without going into the subject index's cache (Sublist.matchOnce).
   */
  routeInternal(c: Client, subject: string, m: PublishedMessage, once = false): number {
    c.inMsgs++;
    c.inBytes += m.size;
    this.inMsgs++;
    this.inBytes += m.size;
    this.internalDepth++;
    try {
      return c.account.route(c, subject, m, once);
    } finally {
      this.internalDepth--;
    }
  }

  // ---- lifecycle ----------------------------------------------------------------

  /** Registers work for start(), run before the client listener opens; a rejection fails start(). */
  onStart(hook: () => Promise<void>): void {
    this.startHooks.push(hook);
  }

  /** Registers work for close(), such as stopping a listener that sits beside this one. */
  onShutdown(hook: () => Promise<void>): void {
    this.shutdownHooks.push(hook);
  }

  /**
   * Changes options at run time, as a config reload does: reloadable options take
   * effect, on existing connections too; a change to any other option throws
   * (ReloadError) and nothing changes. Returns the option keys that changed.
   */
  applyReload(changes: Partial<ServerOptions>, config: LoadedConfig | null = null): string[] {
    return reloadServer(this, changes, config, false);
  }

  /**
   * Reloads a whole configuration (SIGHUP: the config file with the flags on top):
   * as applyReload, but an option it leaves out goes back to its default. `config`
   * carries the sections the reload hooks of other layers read.
   */
  reloadConfig(options: Partial<ServerOptions>, config: LoadedConfig | null): string[] {
    return reloadServer(this, options, config, true);
  }

  /**
   * Lame duck mode: stops accepting, sends INFO with `"ldm":true`, closes the
   * clients spread over lame_duck_duration after lame_duck_grace_period, then shuts
   * down. Resolves once the server is closed.
   */
  lameDuckShutdown(): Promise<void> {
    return lameDuckShutdown(this);
  }

  /** Closes the client listener at once; connections already accepted stay. */
  stopAccepting(): void {
    // net.Server.close() stops listening now; its callback would wait for every
    // accepted connection to end, so it is not awaited here.
    if (this.listener?.listening === true) this.listener.close();
    for (const hook of this.stopAcceptingHooks) hook();
  }

  /** Registers a listener beside this one that lame duck mode must close too. */
  onStopAccepting(hook: () => void): void {
    this.stopAcceptingHooks.push(hook);
  }

  /** True once close() has begun. */
  get shuttingDown(): boolean {
    return this.closing !== null;
  }

  /** Stops accepting, closes every connection, resolves when the listener is closed. */
  async close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.logger.info('Initiating Shutdown...');
    const hooks = Promise.all(this.shutdownHooks.map((hook) => hook().catch(() => undefined)));
    const listener = this.listener;
    const closed =
      listener === null
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            listener.close(() => {
              resolve();
            });
          });
    for (const c of [...this.clients.values()]) c.close(CloseReason.serverShutdown);
    await closed;
    await hooks;
    this.logger.info('Server Exiting..');
    this.logger.close();
  }

  get url(): string {
    const host =
      this.options.host === '0.0.0.0' || this.options.host === '::'
        ? '127.0.0.1'
        : this.options.host;
    return `nats://${hostPort(host, this.port)}`;
  }
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

export function advertisedHost(o: ServerOptions): string {
  if (o.clientAdvertise === '') return o.host;
  const i = o.clientAdvertise.lastIndexOf(':');
  return i < 0 ? o.clientAdvertise : o.clientAdvertise.substring(0, i).replace(/^\[|\]$/g, '');
}

export function advertisedPort(o: ServerOptions, port: number): number {
  if (o.clientAdvertise === '') return port;
  const i = o.clientAdvertise.lastIndexOf(':');
  const p = i < 0 ? NaN : Number(o.clientAdvertise.substring(i + 1));
  return Number.isInteger(p) ? p : port;
}

const HASH_DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The reference's getHash: a server name's 8-character node id (sha256, base 62 digits). */
export function nodeHash(name: string): string {
  const b = createHash('sha256').update(name).digest();
  let out = '';
  for (let i = 0; i < 8; i++) out += HASH_DIGITS.charAt(b[i]! % 62);
  return out;
}
