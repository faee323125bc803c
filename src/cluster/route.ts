// One route: a connection to another server of the cluster, accepted or dialled.
// It reads with the route parser; it writes through a Client of kind 'route', which
// gives it the outbound block, the per-turn flush, max_pending and the holding of
// publishers that outrun it. The handshake, the registry and gossip are the
// cluster's (cluster.ts); this file is the connection's own state and ops.

import type { Socket } from 'node:net';
import { CloseReason, ErrText, errLine } from '../protocol/errors.js';
import { redactConnect } from '../protocol/connect.js';
import type { Account } from '../server/account.js';
import { Client, watchSocket } from '../server/client.js';
import type { PublishedMessage } from '../server/message.js';
import { Subscription, type RouteSink } from '../server/subscription.js';
import { isValidSubscribeSubject } from '../subjects/validate.js';
import type { Cluster } from './cluster.js';
import { deliverRouted } from './inbound.js';
import { fromRoute, toRoute } from './js-deliver.js';
import type { RouteUrl } from './options.js';
import { RouteParseFailure, RouteParser, type RouteParserHandler } from './parser.js';
import { describeSession, RouteTlsError } from './tls.js';

const PING = Buffer.from('PING\r\n');
const PONG = Buffer.from('PONG\r\n');
/** The reference's first PING to a route comes after at most 1 s (plus up to 20 %). */
const FIRST_PING_MS = 1000;

/** A subscription of the server at the other end, in one of our account indexes. */
export class RouteSubscription extends Subscription {
  readonly account: Account;

  constructor(route: Route, account: Account, subject: string, queue: string | null, key: string) {
    super(route.client, subject, queue, key);
    this.account = account;
    this.route = route;
  }
}

export class Route implements RouteParserHandler, RouteSink {
  readonly cluster: Cluster;
  readonly rid: number;
  /** Output only: see the file comment. */
  readonly client: Client;
  readonly parser: RouteParser;
  /** The TCP socket, before any TLS on top of it. */
  private readonly raw: Socket;
  /** We dialled it (else it was accepted on the route port). */
  didSolicit: boolean;
  /** Where to dial it again; from its INFO when it was accepted. */
  url: RouteUrl | null;
  /** The URL is one of the configured routes. */
  explicit: boolean;
  /** Reconnect even if it was not ours to dial (a duplicate was dropped in its favour). */
  retry = false;
  /** Never reconnect (a reload removed its configured route). */
  noReconnect = false;
  /** The other server's export permissions as its INFO last gave them (JSON; '' for none). */
  remoteExport = '';

  remoteId = '';
  remoteName = '';
  /** The other server takes HMSG (both sides support headers). */
  headers = false;
  connectReceived = false;
  infoReceived = false;
  /** In the cluster's registry: the one route to its server. */
  registered = false;
  /** Client URLs its server announced, while they are counted in ours. */
  connectUrls: string[] = [];
  wsConnectUrls: string[] = [];
  /** Its subscriptions, by the reference's key `account subject[ queue]`. */
  readonly subs = new Map<string, RouteSubscription>();

  inMsgs = 0;
  inBytes = 0;
  readonly start = new Date();
  lastActivity = Date.now();
  closed = false;

  private pingTimer: NodeJS.Timeout | null = null;
  private authTimer: NodeJS.Timeout | null = null;
  private pingsOut = 0;
  private rttStart = 0;
  /** One-entry caches of the last account and subject of an inbound message, by bytes. */
  private lastAccount: Account | undefined = undefined;
  private lastAccountBytes = Buffer.alloc(0);
  private lastSubject = '';
  private lastSubjectBytes = Buffer.allocUnsafe(64);
  private lastSubjectLen = -1;
  private readonly queues: string[] = [];

  constructor(cluster: Cluster, socket: Socket, url: RouteUrl | null, explicit: boolean) {
    this.cluster = cluster;
    const server = cluster.server;
    this.rid = server.nextConnectionId();
    this.raw = socket;
    this.client = new Client(server, this.rid, socket, server.globalAccount, 'route');
    this.client.verbose = false;
    this.client.authorized = true;
    this.parser = new RouteParser(this);
    this.didSolicit = url !== null;
    this.url = url;
    this.explicit = explicit;
    socket.setNoDelay(true);
  }

  /** Reads from socket: the connection's own, or the TLS socket on top of it. */
  private attach(socket: Socket): void {
    socket.on('data', (chunk: Buffer) => {
      this.onData(chunk);
    });
    watchSocket(socket, this);
  }

  /** The socket wrote everything out: publishers held for this route may go on. */
  drained(): void {
    this.client.drained();
  }

  /**
   * With cluster TLS, the handshake first (as the reference, before anything else is
   * said); then CONNECT (when dialled) and INFO, and the timers.
   */
  begin(): void {
    const socket = this.raw;
    const tls = this.cluster.tls;
    if (tls === null) {
      this.attach(socket);
      this.created();
      return;
    }
    const logger = this.cluster.server.logger;
    // Until the handshake is done, a connection that goes is a route that goes.
    const gone = (): void => {
      this.close(CloseReason.clientClosed);
    };
    socket.on('error', gone);
    socket.on('close', gone);
    if (logger.debugEnabled) {
      logger.debug(
        `${this.label()} - Starting TLS route ${this.didSolicit ? 'client' : 'server'} handshake`,
      );
    }
    const handshake = this.didSolicit
      ? tls.dial(socket, this.url!.host, this.cluster.tlsName)
      : tls.accept(socket);
    handshake.then(
      (secure) => {
        socket.off('error', gone);
        socket.off('close', gone);
        if (this.closed) {
          secure.destroy();
          return;
        }
        // Client.close() writes to and ends c.socket: from now on the TLS socket.
        this.client.socket = secure;
        if (logger.debugEnabled) {
          logger.debug(`${this.label()} - TLS handshake complete`);
          logger.debug(`${this.label()} - ${describeSession(secure)}`);
        }
        this.attach(secure);
        this.created();
      },
      (err: unknown) => {
        if (this.closed) return;
        const timeout = err instanceof RouteTlsError && err.timeout;
        const text = err instanceof Error ? err.message : String(err);
        logger.error(`${this.label()} - ${timeout ? text : `TLS route handshake error: ${text}`}`);
        this.close(CloseReason.tlsHandshake);
      },
    );
  }

  /** The connection is usable: CONNECT (when dialled), INFO, the timers. */
  private created(): void {
    const cluster = this.cluster;
    cluster.server.logger.info(`${this.label()} - Route connection created`);
    if (this.didSolicit) this.sendProto(cluster.connectLine(this.url!), 'CONNECT');
    this.sendProto(cluster.infoLine(), 'INFO');
    if (!this.didSolicit && cluster.authRequired) {
      this.authTimer = setTimeout(() => {
        this.authTimer = null;
        if (!this.connectReceived) this.close(CloseReason.authTimeout, ErrText.authTimeout);
      }, cluster.options.authTimeout * 1000);
      this.authTimer.unref();
    }
    const interval = cluster.server.options.pingInterval;
    this.schedulePing(Math.min(interval, FIRST_PING_MS) * (1 + Math.random() * 0.2));
  }

  get ip(): string {
    return this.client.ip;
  }

  get port(): number {
    return this.client.port;
  }

  /** `ip:port - rid:N`, as the reference labels routes in its log. */
  label(): string {
    return `${this.client.ip}:${this.client.port} - rid:${this.rid}`;
  }

  private onData(chunk: Buffer): void {
    this.lastActivity = Date.now();
    this.cluster.server.runRead(this, this.parser, chunk, this.client);
  }

  // ---- output -----------------------------------------------------------------

  /** Queues a protocol line (with its CRLF) and traces it. */
  sendProto(line: Buffer, traceText?: string): void {
    if (this.closed) return;
    const logger = this.cluster.server.logger;
    if (logger.traceEnabled) {
      const text = traceText ?? line.toString('latin1', 0, line.length - 2);
      logger.trace(`${this.label()} - ->> [${text}]`);
    }
    this.client.send(line);
  }

  // ---- RouteSink: messages from our clients to this route --------------------

  open(): number {
    return this.cluster.fanout.open();
  }

  mark(frame: number, queue: string | null): void {
    this.cluster.fanout.mark(frame, this, queue);
  }

  send(frame: number, account: Account, subject: string, m: PublishedMessage): number {
    return this.cluster.fanout.send(frame, account, toRoute(subject, m));
  }

  // ---- RouteParserHandler ------------------------------------------------------

  onConnect(buf: Buffer, start: number, end: number): void {
    if (this.traceIn()) this.trace('CONNECT', redactConnect(buf.toString('utf8', start, end)));
    if (this.didSolicit || this.connectReceived) return;
    let json: unknown;
    try {
      json = JSON.parse(buf.toString('utf8', start, end));
    } catch {
      json = undefined;
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      this.cluster.server.logger.error(`${this.label()} - Route CONNECT is not a JSON object`);
      this.close(CloseReason.parseError, ErrText.parserError);
      return;
    }
    const cluster = this.cluster;
    const c = cluster.parseConnect(this, json as Record<string, unknown>);
    if (c === null) return;
    // As the reference: credentials first, then whether this is a server at all.
    const verdict = cluster.authenticate(c);
    if (verdict === true) {
      if (cluster.acceptConnect(this, c)) this.connected();
      return;
    }
    if (verdict === false) {
      cluster.authFailed(this);
      return;
    }
    // A bcrypt password: nothing behind the CONNECT runs before the verdict.
    this.parser.suspend();
    this.client.socket?.pause();
    const done = (ok: boolean): void => {
      if (this.closed) return;
      if (!ok) {
        cluster.authFailed(this);
        return;
      }
      if (!cluster.acceptConnect(this, c)) return;
      this.connected();
      this.parser.resume();
      cluster.server.flushPending();
      // Parsing what was held may have closed the route.
      if (!this.isClosed()) this.client.socket?.resume();
    };
    verdict.then(done, () => {
      done(false);
    });
  }

  private connected(): void {
    this.connectReceived = true;
    if (this.authTimer !== null) {
      clearTimeout(this.authTimer);
      this.authTimer = null;
    }
  }

  onInfo(buf: Buffer, start: number, end: number): void {
    if (this.traceIn()) this.trace('INFO', buf.toString('utf8', start, end));
    if (!this.mayTalk()) return;
    this.cluster.onInfo(this, buf.toString('utf8', start, end));
  }

  onPing(): void {
    if (this.traceIn()) this.trace('PING', '');
    this.sendProto(PONG);
  }

  onPong(): void {
    if (this.traceIn()) this.trace('PONG', '');
    this.pingsOut = 0;
    if (this.rttStart > 0) {
      this.client.rtt = Date.now() - this.rttStart;
      this.rttStart = 0;
    }
  }

  onErr(buf: Buffer, start: number, end: number): void {
    const text = buf.toString('utf8', start, end);
    this.cluster.server.logger.error(`${this.label()} - Route Error ${text}`);
    this.close(CloseReason.parseError);
  }

  onSub(p: RouteParser): void {
    const b = p.argBuf;
    const accName = b.toString('utf8', p.accountStart, p.accountEnd);
    const subject = b.toString('latin1', p.subjectStart, p.subjectEnd);
    const queue = p.queueStart >= 0 ? b.toString('latin1', p.queueStart, p.queueEnd) : null;
    if (this.traceIn()) {
      this.trace(
        'RS+',
        `${accName} ${subject}${queue === null ? '' : ` ${queue} ${String(p.weight)}`}`,
      );
    }
    if (!this.mayTalk()) return;
    const logger = this.cluster.server.logger;
    const account = this.cluster.accountNamed(accName);
    if (account === undefined) {
      // The reference's own $SYS account, where this server does not take it (JetStream
      // here, or no system account): not an error.
      if (logger.debugEnabled) {
        logger.debug(
          `${this.label()} - Unknown account "${accName}" for remote subject "${subject}"`,
        );
      }
      return;
    }
    if (!this.cluster.canExport(subject)) {
      if (logger.debugEnabled) {
        logger.debug(
          `${this.label()} - Can not export "${subject}", ignoring remote subscription request`,
        );
      }
      return;
    }
    const key = queue === null ? `${accName} ${subject}` : `${accName} ${subject} ${queue}`;
    const existing = this.subs.get(key);
    if (existing !== undefined) {
      // Another RS+ for a queue group is its new weight; for a subject, nothing.
      if (queue !== null) existing.weight = p.weight;
      return;
    }
    if (!isValidSubscribeSubject(subject)) {
      logger.error(`${this.label()} - Could not insert subscription: invalid subject "${subject}"`);
      this.sendErr(ErrText.invalidSubscription);
      return;
    }
    const sub = new RouteSubscription(this, account, subject, queue, key);
    if (queue !== null) sub.weight = p.weight;
    account.sublist.insert(sub);
    account.routeSubs++;
    this.subs.set(key, sub);
  }

  onUnsub(p: RouteParser): void {
    const b = p.argBuf;
    const accName = b.toString('utf8', p.accountStart, p.accountEnd);
    const subject = b.toString('latin1', p.subjectStart, p.subjectEnd);
    const queue = p.queueStart >= 0 ? b.toString('latin1', p.queueStart, p.queueEnd) : null;
    if (this.traceIn())
      this.trace('RS-', `${accName} ${subject}${queue === null ? '' : ' ' + queue}`);
    if (!this.mayTalk()) return;
    const key = queue === null ? `${accName} ${subject}` : `${accName} ${subject} ${queue}`;
    const sub = this.subs.get(key);
    if (sub === undefined) return;
    this.subs.delete(key);
    removeRouteSub(sub);
  }

  /** Forgets one of the other server's subscriptions (by key) that may no longer be taken. */
  dropSubscription(key: string): void {
    const sub = this.subs.get(key);
    if (sub === undefined) return;
    this.subs.delete(key);
    removeRouteSub(sub);
  }

  onMsg(p: RouteParser): void {
    const size = p.size;
    this.inMsgs++;
    this.inBytes += size;
    const server = this.cluster.server;
    server.inMsgs++;
    server.inBytes += size;
    const b = p.argBuf;
    if (server.logger.traceEnabled) {
      this.trace(p.hdr >= 0 ? 'HMSG' : 'RMSG', b.toString('latin1', p.accountStart, p.sizeEnd));
    }
    if (!this.mayTalk()) return;
    const account = this.accountOf(b, p.accountStart, p.accountEnd);
    if (account === undefined) {
      if (server.logger.debugEnabled) {
        server.logger.debug(
          `${this.label()} - Unknown account "${b.toString('utf8', p.accountStart, p.accountEnd)}" for routed message`,
        );
      }
      return;
    }
    const subject = this.subjectOf(b, p.subjectStart, p.subjectEnd);
    let queues: string[] | null = null;
    if (p.queueCount > 0) {
      queues = this.queues;
      queues.length = 0;
      for (let i = 0; i < p.queueCount; i++) {
        const f = p.queueFirst + i;
        queues.push(b.toString('latin1', p.fieldStart[f], p.fieldEnd[f]));
      }
    }
    deliverRouted(account, subject, fromRoute(p), queues);
  }

  onFailure(kind: RouteParseFailure, detail: string): void {
    const logger = this.cluster.server.logger;
    switch (kind) {
      case RouteParseFailure.clientProtocol:
        logger.error(`${this.label()} - ${ErrText.routePort} (${detail})`);
        this.close(CloseReason.wrongPort, ErrText.routePort);
        return;
      case RouteParseFailure.unknownOp:
        logger.error(`${this.label()} - Route Error: unknown protocol operation '${detail}'`);
        this.close(CloseReason.parseError, ErrText.unknownOp);
        return;
      case RouteParseFailure.badFraming:
        logger.error(`${this.label()} - Route Error: ${detail}`);
        this.close(CloseReason.parseError, ErrText.unknownOp);
        return;
      case RouteParseFailure.badArguments:
        logger.error(`${this.label()} - Route Error: ${detail}`);
        this.close(CloseReason.protocolViolation, ErrText.parserError);
        return;
      case RouteParseFailure.tooLarge:
        logger.error(`${this.label()} - Route Error: ${detail}`);
        this.close(CloseReason.protocolViolation, ErrText.maxControlLine);
        return;
    }
  }

  /**
   * Route ops need a CONNECT first on an accepted route that must authenticate; the
   * reference treats the lack as an authorization violation.
   */
  private mayTalk(): boolean {
    if (this.connectReceived || this.didSolicit || !this.cluster.authRequired) return true;
    this.cluster.authFailed(this);
    return false;
  }

  /**
   * Forgets the account accountOf found last: a reload may have put another account in
   * its place under that name, or made one that was unknown.
   */
  forgetAccount(): void {
    this.lastAccount = undefined;
    this.lastAccountBytes = Buffer.alloc(0);
  }

  private accountOf(b: Buffer, start: number, end: number): Account | undefined {
    const last = this.lastAccountBytes;
    if (end - start === last.length && sameBytes(b, start, last, last.length)) {
      return this.lastAccount;
    }
    const account = this.cluster.accountNamed(b.toString('utf8', start, end));
    this.lastAccount = account;
    this.lastAccountBytes = Buffer.from(b.subarray(start, end));
    return account;
  }

  private subjectOf(b: Buffer, start: number, end: number): string {
    const len = end - start;
    if (len === this.lastSubjectLen && sameBytes(b, start, this.lastSubjectBytes, len)) {
      return this.lastSubject;
    }
    const subject = b.toString('latin1', start, end);
    if (len <= this.lastSubjectBytes.length) {
      b.copy(this.lastSubjectBytes, 0, start, end);
      this.lastSubject = subject;
      this.lastSubjectLen = len;
    }
    return subject;
  }

  isClosed(): boolean {
    return this.closed;
  }

  private traceIn(): boolean {
    return this.cluster.server.logger.traceEnabled;
  }

  private trace(op: string, args: string): void {
    this.cluster.server.logger.trace(
      `${this.label()} - <<- [${args === '' ? op : op + ' ' + args}]`,
    );
  }

  sendErr(text: string): void {
    this.sendProto(errLine(text), `-ERR '${text}'`);
  }

  // ---- keep-alive and close -------------------------------------------------------

  private schedulePing(delay: number): void {
    this.pingTimer = setTimeout(() => {
      this.pingTimer = null;
      this.onPingTimer();
    }, delay);
    this.pingTimer.unref();
  }

  private onPingTimer(): void {
    if (this.closed) return;
    const o = this.cluster.server.options;
    if (this.pingsOut + 1 > o.pingMax) {
      this.cluster.server.logger.debug(`${this.label()} - Stale Client Connection - Closing`);
      this.close(CloseReason.staleConnection, ErrText.staleConnection);
      return;
    }
    this.pingsOut++;
    this.rttStart = Date.now();
    this.sendProto(PING);
    this.schedulePing(o.pingInterval);
  }

  /** Closes the connection (an -ERR first when given); safe to call more than once. */
  close(reason: string, errText?: string): void {
    if (this.closed) return;
    if (errText !== undefined) this.sendErr(errText);
    this.closed = true;
    this.parser.stop();
    if (this.pingTimer !== null) clearTimeout(this.pingTimer);
    if (this.authTimer !== null) clearTimeout(this.authTimer);
    this.client.close(reason);
    for (const sub of this.subs.values()) removeRouteSub(sub);
    this.subs.clear();
    this.cluster.routeClosed(this, reason);
  }
}

function removeRouteSub(sub: RouteSubscription): void {
  if (sub.closed) return;
  sub.closed = true;
  const account = sub.account;
  account.sublist.remove(sub);
  account.routeSubs--;
}

function sameBytes(a: Buffer, start: number, b: Buffer, len: number): boolean {
  for (let i = 0; i < len; i++) if (a[start + i] !== b[i]) return false;
  return true;
}
