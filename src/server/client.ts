// One client connection: its parser, its CONNECT options, its subscriptions, its
// keep-alive and its close. Ops arrive from the parser; messages leave through the
// outbound block, flushed by the server once per turn of the event loop.

import { Socket } from 'node:net';
import { CloseReason, ErrText, errLine, goQuote } from '../protocol/errors.js';
import { type ConnectOptions, parseConnect, redactConnect } from '../protocol/connect.js';
import { Parser, ParseFailure, type ParserHandler, parseSize } from '../protocol/parser.js';
import { isValidLiteralSubject, isValidSubscribeSubject } from '../subjects/validate.js';
import type { Account } from './account.js';
import { Flow } from './backpressure.js';
import { Outbound } from './outbound.js';
import { SHARED_READ_BUFFER } from './shared-read.js';
import { TcpTransport } from './tcp-transport.js';
import type { PublishTap } from './publish-tap.js';
import type { Server } from './server.js';
import { type DeliveryFilter, Subscription } from './subscription.js';
import type { ClientListener, Transport } from './transport.js';
import { perf } from './clock.js';

const PONG = Buffer.from('PONG\r\n');
const PING = Buffer.from('PING\r\n');
const OK = Buffer.from('+OK\r\n');
const NO_RESPONDERS_HDR = Buffer.from('NATS/1.0 503\r\n\r\n');
/** A busy connection still gets a PING this often, to measure its round trip (ms). */
export type { ConnectOptions } from '../protocol/connect.js';

const RTT_MEASUREMENT_INTERVAL = 60 * 60 * 1000;

/**
 * The last-subject cache's room: none until the first publish, then 64 bytes, or the
 * longest subject it remembers when the subject needs more.
 */
const FIRST_SUBJECT_ROOM = 64;
const MAX_REMEMBERED_SUBJECT = 256;
const NO_SUBJECT_BYTES = Buffer.alloc(0);

/**
 * How long (ms) one connection's reads may run in one turn of the event loop before
 * its socket yields to the others until the next turn. libuv reads a busy socket up
 * to 32 times per poll, 2 MB; with fan-out that is tens of milliseconds in which no
 * other connection is served. A time, not a byte count, so that a publisher whose
 * messages cost little is not slowed down by yielding often.
 */
const READ_SLICE_MS = 1;

/**
 * A route (src/cluster) reads with its own parser and uses its Client only for output:
 * the outbound block, the per-turn flush, max_pending and holding publishers.
 */
export type ClientKind = 'client' | 'internal' | 'route';

/** A connection's publish and subscribe permissions (src/auth/permissions.ts). */
export interface PermissionChecks {
  /** An -ERR text when publishing to subject is denied, else null. */
  checkPublish(subject: string): string | null;
  /** An -ERR text when this subscription is denied, else null. */
  checkSubscribe(subject: string, queue: string | null): string | null;
  /** What a new subscription on subject must check at delivery, or null for nothing. */
  deliveryFilter(subject: string): DeliveryFilter | null;
}

export class Client implements ParserHandler {
  readonly cid: number;
  readonly kind: ClientKind;
  readonly server: Server;
  /** Replaced by the TLS socket once a TLS handshake completes (src/auth/tls.ts). */
  socket: Transport | null;
  /** The listener it came through when not the client port (WebSocket), else null. */
  via: ClientListener | null = null;
  readonly parser: Parser;
  readonly out = new Outbound();
  account: Account;
  readonly ip: string;
  readonly port: number;

  // CONNECT options, read on the hot path as plain fields.
  verbose = true;
  pedantic = true;
  echo = true;
  headers = false;
  noResponders = false;
  protocol = 0;
  name = '';
  lang = '';
  version = '';
  /** Who this connection authenticated as, for monitoring. */
  user = '';
  connectReceived = false;
  authorized = false;
  /** Null when the user has no permissions: then nothing runs per message. */
  perms: PermissionChecks | null = null;
  /** Sent in INFO for NKEY and JWT users to sign; empty when not needed. */
  nonce = '';
  /**
   * CONNECT's options, credentials included, as the reference keeps c.opts: a config
   * reload checks the connection again against the new authorization (src/auth).
   */
  connectOpts: ConnectOptions | null = null;
  /** The verdict of an authentication that finished after its CONNECT (see onConnect). */
  private lateVerdict: boolean | null = null;

  readonly subs = new Map<string, Subscription>();

  inMsgs = 0;
  inBytes = -0; // doubles from the start, as the server's (server.ts)
  outMsgs = 0;
  outBytes = -0;
  readonly start = new Date();
  /** Last inbound message or subscription (ms since epoch). */
  lastActivity = Date.now();
  // The times below start as -0 (0, but a double to V8) so that storing the first
  // Date.now() in them does not change the field's representation: that change retires
  // the Client's hidden class and deoptimizes every compiled function that had seen it
  // (parse, route, deliver, flush...), all recompiled at once ~2 s after the first
  // connection, when its first keep-alive PING goes out.
  private lastPingIn = -0;
  pingsOut = 0;
  /**
   * Round-trip time of the last server PING, in ms; -1 before one was measured. Kept a
   * small integer (`| 0` where it is set): a difference of two Date.now() values is a
   * heap number, and the first one stored retired the Client's hidden class at the
   * first CONNECT (--trace-generalization), as the times above would.
   */
  rtt = -1;
  private rttStart = -0;
  /** When the last keep-alive PING went out (ms since epoch); 0 before the first. */
  private lastPingOut = -0;
  firstPongSent = false;

  closed = false;
  /** The peer closed its side (the socket's 'end'): nothing more will be read. */
  peerEnded = false;
  closeReason = '';
  stop: Date | null = null;

  /** Queued in the server's flush list for this turn of the event loop. */
  flushQueued = false;
  /** Socket bytes still unwritten at the last flush: part of the pending total. */
  socketPending = 0;
  /** Holding publishers, being held, and the slow consumer cut-offs (backpressure.ts). */
  readonly flow: Flow;
  private pingTimer: NodeJS.Timeout | null = null;
  /** The ping timer is the first one, set at accept (its delay is the early one). */
  private pingTimerFirst = false;
  private authTimer: NodeJS.Timeout | null = null;

  // A one-entry cache of the last published subject, checked by bytes; its buffer is
  // made at the first publish (a connection's set-up allocates little).
  private lastSubject = '';
  private lastSubjectBytes: Buffer = NO_SUBJECT_BYTES;
  private lastSubjectLen = -1;

  /** Reads arrive through the shared read buffer's callback, not 'data' events. */
  sharedReads = false;
  /** The server's turn of this connection's last read, and when its reads in it began. */
  private readTurn = -1;
  private turnStart = -0; // a double (see lastPingIn)
  private yielding = false;
  /** Reads are paused for a bcrypt verdict (awaitVerdict); a yield must not resume them. */
  private verdictPending = false;

  constructor(
    server: Server,
    cid: number,
    socket: Transport | null,
    account: Account,
    kind: ClientKind = 'client',
  ) {
    this.server = server;
    this.cid = cid;
    this.socket = socket;
    // A net.Socket (TCP, TLS) or a TcpTransport calls a write back once the kernel has
    // the bytes.
    this.out.recycles = socket instanceof Socket || socket instanceof TcpTransport;
    this.kind = kind;
    this.account = account;
    this.ip = socket?.remoteAddress?.replace(/^::ffff:/, '') ?? '';
    this.port = socket?.remotePort ?? 0;
    this.parser = new Parser(this, {
      maxControlLine: server.options.maxControlLine,
      maxPayload: server.options.maxPayload,
    });
    this.flow = new Flow(
      this,
      () => server.options.writeDeadline,
      () => server.options.maxPending >>> 1,
      kind === 'route',
    );
  }

  /** Output the kernel has not taken yet: queued here, or held by the socket. */
  get outBacklog(): number {
    const socket = this.socket;
    return this.out.queued + (socket === null ? 0 : socket.writableLength);
  }

  /** One read from the socket: every op in it, then one flush of what it produced. */
  readonly onRead = (chunk: Buffer): void => {
    // Activity is noted per read, not per message: the keep-alive only needs to
    // know the client spoke within the last ping interval.
    this.lastActivity = Date.now();
    const server = this.server;
    // libuv reads a socket again in the same turn only after a read that filled its
    // buffer: a shorter shared read is the last of its turn, and nothing after it could
    // need a yield. Such reads (a client waiting for each answer sends nothing else) are
    // not timed: no clock reading, and no Server.turn() with the setImmediate it costs.
    // Reads of other kinds (TLS, WebSocket) are timed as they come.
    if (this.sharedReads && chunk.length !== SHARED_READ_BUFFER.length) {
      server.runRead(this, this.parser, chunk, this);
      return;
    }
    const turn = server.turn();
    if (turn !== this.readTurn) {
      this.readTurn = turn;
      this.turnStart = perf.now();
    }
    server.runRead(this, this.parser, chunk, this);
    if (perf.now() - this.turnStart > READ_SLICE_MS && !this.yielding && !this.closed) {
      this.yielding = true;
      this.socket?.pause();
      setImmediate(this.endYield);
    }
  };

  private readonly endYield = (): void => {
    this.yielding = false;
    if (!this.closed && !this.flow.isHeld && !this.verdictPending) this.socket?.resume();
  };

  /** Sends INFO (null when it already went out, before a TLS handshake) and starts reading. */
  begin(info: Buffer | null): void {
    const socket = this.socket;
    if (socket === null) return;
    socket.setNoDelay(true);
    if (!this.sharedReads) socket.on('data', this.onRead);
    watchSocket(socket, this);
    if (info !== null) this.send(info);
    const override = this.via?.auth ?? null;
    if (this.server.authRequired || override?.required === true) {
      this.authTimer = setTimeout(
        () => {
          this.authTimer = null;
          if (!this.authorized) this.close(CloseReason.authTimeout, ErrText.authTimeout);
        },
        override !== null && override.timeoutMs > 0
          ? override.timeoutMs
          : this.server.options.authTimeout * 1000,
      );
      this.authTimer.unref();
    } else {
      this.authorized = true;
    }
    this.schedulePing(true);
  }

  // ---- ParserHandler ----------------------------------------------------------

  onConnect(buf: Buffer, start: number, end: number): void {
    const text = buf.toString('utf8', start, end);
    if (this.server.logger.traceEnabled && this.lateVerdict === null) {
      this.trace('CONNECT', redactConnect(text));
    }
    const opts = parseConnect(text);
    if (typeof opts === 'string') {
      this.server.logger.debug(`${this.label()} - ${opts}`);
      this.close(CloseReason.protocolViolation, ErrText.parserError);
      return;
    }
    if (opts.protocol < 0 || opts.protocol > 1) {
      this.close(CloseReason.badClientProtocol, ErrText.invalidProtocol);
      return;
    }
    if (opts.account) {
      this.close(CloseReason.authFailure, ErrText.authViolation);
      return;
    }
    const o = opts.options;
    this.connectOpts = o;
    this.verbose = o.verbose;
    this.pedantic = o.pedantic;
    this.echo = o.echo;
    this.headers = o.headers && !this.server.options.noHeaderSupport;
    this.parser.headers = this.headers;
    this.noResponders = o.noResponders;
    this.protocol = o.protocol;
    this.name = o.name;
    this.lang = o.lang;
    this.version = o.version;
    if (this.noResponders && !this.headers) {
      this.close(CloseReason.noRespondersNeedsHeaders, ErrText.noRespondersNeedsHeaders);
      return;
    }
    // With security configured every CONNECT is checked, even one that needs no
    // credentials (no_auth_user), since wrong credentials still fail.
    const override = this.via?.auth ?? null;
    if (!this.authorized || this.server.security !== null || override !== null) {
      const verdict =
        this.lateVerdict ??
        (override !== null ? override.authenticate(this, o) : this.server.authenticate(this, o));
      this.lateVerdict = null;
      if (verdict !== true && verdict !== false) {
        this.awaitVerdict(verdict, buf.subarray(start, end));
        return;
      }
      if (!verdict) {
        this.server.logger.error(`${this.label()} - authentication error`);
        this.close(CloseReason.authFailure, ErrText.authViolation);
        return;
      }
      this.authorized = true;
      if (this.authTimer !== null) {
        clearTimeout(this.authTimer);
        this.authTimer = null;
      }
    }
    this.connectReceived = true;
    if (this.kind === 'client') {
      // As the reference (processConnect): the time since accept is a first RTT
      // estimate, and the keep-alive starts over from the CONNECT.
      const now = Date.now();
      this.rtt = (now - this.start.getTime()) | 0; // a small integer (see rtt)
      this.lastActivity = now;
      // The first timer, set at accept, starts over (no new timer per connection).
      if (this.pingTimer !== null && this.pingTimerFirst) this.pingTimer.refresh();
      else {
        if (this.pingTimer !== null) clearTimeout(this.pingTimer);
        this.schedulePing(true);
      }
    }
    if (this.verbose) this.send(OK);
  }

  /**
   * A bcrypt check runs off the event loop. Until it ends, the socket is paused and
   * the parser holds every op after this CONNECT; then the CONNECT is processed
   * again with the verdict, so +OK and the ops behind it come in order.
   */
  private awaitVerdict(verdict: Promise<boolean>, connect: Buffer): void {
    this.parser.suspend();
    this.socket?.pause();
    this.verdictPending = true;
    const copy = Buffer.from(connect);
    const done = (ok: boolean): void => {
      this.verdictPending = false;
      if (this.closed) return;
      this.lateVerdict = ok;
      this.onConnect(copy, 0, copy.length);
      this.resumeAfterVerdict();
    };
    verdict.then(done, () => {
      done(false);
    });
  }

  /** Parses the ops held behind the CONNECT, then reads on (unless either closed us). */
  private resumeAfterVerdict(): void {
    if (this.closed) return;
    this.parser.resume();
    this.server.flushPending();
    this.resumeReading();
  }

  private resumeReading(): void {
    if (!this.closed) this.socket?.resume();
  }

  onInfo(buf: Buffer, start: number, end: number): void {
    // A client may send INFO; the reference parses and ignores it.
    try {
      JSON.parse(buf.toString('utf8', start, end));
    } catch {
      this.close(CloseReason.protocolViolation, ErrText.parserError);
    }
  }

  onPing(): void {
    if (this.server.logger.traceEnabled) this.trace('PING', '');
    if (!this.checkAuthorized()) return;
    this.lastPingIn = Date.now();
    if (this.server.logger.traceEnabled) this.traceOut('PONG');
    this.send(PONG);
    if (!this.firstPongSent && this.connectReceived) {
      this.firstPongSent = true;
      this.server.afterFirstPong(this);
    }
  }

  onPong(): void {
    if (this.server.logger.traceEnabled) this.trace('PONG', '');
    this.pingsOut = 0;
    if (this.rttStart > 0) {
      this.rtt = (Date.now() - this.rttStart) | 0;
      this.rttStart = 0;
    }
  }

  onSub(p: Parser): void {
    if (!this.checkAuthorized()) return;
    const b = p.argBuf;
    const fs = p.fieldStart;
    const fe = p.fieldEnd;
    const subject = b.toString('latin1', fs[0], fe[0]);
    const queue = p.fieldCount === 3 ? b.toString('latin1', fs[1], fe[1]) : null;
    const sidIndex = p.fieldCount - 1;
    const sid = b.toString('latin1', fs[sidIndex], fe[sidIndex]);
    if (this.server.logger.traceEnabled) {
      this.trace('SUB', `${subject}${queue === null ? '' : ' ' + queue} ${sid}`);
    }
    this.lastActivity = Date.now();
    // The reference's order (processSubEx): permissions, the subscription limit (even
    // for a duplicate sid), the duplicate sid (ignored with +OK, its subject never
    // checked), and only then the subject, at trie insert.
    const denied = this.server.checkSubscribe(this, subject, queue);
    if (denied !== null) {
      this.sendErr(denied);
      return;
    }
    const max = this.server.options.maxSubscriptions;
    if (max > 0 && this.subs.size >= max) {
      this.sendErr(ErrText.maxSubscriptions);
      return;
    }
    if (this.subs.has(sid)) {
      // The reference keeps the first subscription of a sid and ignores the rest.
      if (this.verbose) this.send(OK);
      return;
    }
    if (!isValidSubscribeSubject(subject)) {
      this.sendErr(ErrText.invalidSubject);
      return;
    }
    const sub = new Subscription(this, subject, queue, sid);
    this.account.sublist.insert(sub);
    this.subs.set(sid, sub);
    this.server.subscriptionAdded(sub);
    if (this.verbose) this.send(OK);
  }

  onUnsub(p: Parser): void {
    if (!this.checkAuthorized()) return;
    const b = p.argBuf;
    const sid = b.toString('latin1', p.fieldStart[0], p.fieldEnd[0]);
    const max = p.fieldCount === 2 ? parseSize(b, p.fieldStart[1]!, p.fieldEnd[1]!) : 0;
    if (this.server.logger.traceEnabled)
      this.trace('UNSUB', `${sid}${p.fieldCount === 2 ? ' ' + String(max) : ''}`);
    const sub = this.subs.get(sid);
    if (sub !== undefined) {
      // A max above what was delivered keeps the subscription until it is reached;
      // anything else (0, negative, garbage, already reached) removes it now.
      if (max > 0 && max > sub.delivered) sub.max = max;
      else this.removeSubscription(sub);
    }
    if (this.verbose) this.send(OK);
  }

  onMsg(p: Parser): void {
    if (!this.checkAuthorized()) return;
    const b = p.argBuf;
    const start = p.subjectStart;
    // JetStream's acks and streaming publishes: taken from the read buffer while nothing
    // else could want them (a publisher with permissions, pedantic or traced goes the
    // checked way).
    if (
      this.account.taps.length !== 0 &&
      this.perms === null &&
      !this.pedantic &&
      !this.server.logger.traceEnabled
    ) {
      const tap = this.account.tapFor(b, start, p.subjectEnd);
      if (tap !== null) {
        this.onTappedMsg(p, tap);
        return;
      }
    }
    const len = p.subjectEnd - start;
    // Publishers tend to repeat a subject: compare bytes before making a string.
    let subject: string;
    if (len === this.lastSubjectLen && sameBytes(b, start, this.lastSubjectBytes, len)) {
      subject = this.lastSubject;
    } else {
      subject = b.toString('latin1', start, p.subjectEnd);
      // Streaming publishes go to `_STAN.pub.<id>.<channel>`, often past 64 bytes.
      if (len > this.lastSubjectBytes.length && len <= MAX_REMEMBERED_SUBJECT) {
        this.lastSubjectBytes = Buffer.allocUnsafe(
          len <= FIRST_SUBJECT_ROOM ? FIRST_SUBJECT_ROOM : MAX_REMEMBERED_SUBJECT,
        );
      }
      if (len <= this.lastSubjectBytes.length) {
        b.copy(this.lastSubjectBytes, 0, start, p.subjectEnd);
        this.lastSubject = subject;
        this.lastSubjectLen = len;
      }
    }
    this.countIn(p.size);
    const server = this.server;
    if (server.logger.traceEnabled) this.tracePub(p, subject);
    // description: an invalid subject in pedantic mode drops the message (the
    // reference still delivers it); every reply byte stays the reference's: this
    // -ERR, then the checks below, then +OK.
    const invalidSubject = this.pedantic && !isValidLiteralSubject(subject);
    if (invalidSubject) this.sendErr(ErrText.invalidPublishSubject);
    // The reference's order: the gateway prefix, permissions, reserved replies.
    if (len > 5 && isGatewayPrefix(b, start)) {
      this.sendErr(`Permissions Violation for Publish to ${goQuote(subject)}`);
      return;
    }
    const denied = server.checkPublish(this, subject);
    if (denied !== null) {
      this.sendErr(denied);
      return;
    }
    if (this.refusedReply(p)) return;
    if (this.verbose) this.send(OK);
    if (invalidSubject) return;
    const delivered = this.account.route(this, subject, p);
    if (delivered === 0 && this.noResponders && p.replyStart >= 0) this.sendNoResponders(p);
  }

  /**
   * onMsg for a publish an account's tap takes (publish-tap.ts): what onMsg does for a
   * publisher without permissions, trace or pedantic mode, but no subject string and no
   * routing. The tap's subscription is counted as a delivery would count it.
   */
  private onTappedMsg(p: Parser, tap: PublishTap): void {
    const size = p.size;
    this.countIn(size);
    if (this.refusedReply(p)) return;
    if (this.verbose) this.send(OK);
    const b = p.argBuf;
    const dataStart = p.hdr >= 0 ? p.payloadStart + p.hdr : p.payloadStart;
    const sub = tap.take(
      b,
      p.subjectStart,
      p.subjectEnd,
      p.replyStart,
      p.replyEnd,
      p.payload,
      dataStart,
      p.payloadEnd,
    );
    if (sub === null) {
      if (this.noResponders && p.replyStart >= 0) this.sendNoResponders(p);
      return;
    }
    sub.delivered++;
    const owner = sub.client;
    owner.outMsgs++;
    owner.outBytes += size;
    this.server.outMsgs++;
    this.server.outBytes += size;
  }

  /** A publish of `size` bytes came in: the connection's and the server's counts. */
  private countIn(size: number): void {
    this.inMsgs++;
    this.inBytes += size;
    const server = this.server;
    server.inMsgs++;
    server.inBytes += size;
  }

  /** A reply subject with a reserved prefix: refused with the reference's -ERR. */
  private refusedReply(p: Parser): boolean {
    if (p.replyStart < 0 || !isReservedReply(p.argBuf, p.replyStart, p.replyEnd)) return false;
    const reply = p.argBuf.toString('latin1', p.replyStart, p.replyEnd);
    this.sendErr(`Permissions Violation for Publish with Reply of ${goQuote(reply)}`);
    return true;
  }

  onErr(buf: Buffer, start: number, end: number): void {
    this.server.logger.debug(`${this.label()} - Client Error ${buf.toString('utf8', start, end)}`);
    this.close(CloseReason.parseError);
  }

  onFailure(kind: ParseFailure): void {
    switch (kind) {
      case ParseFailure.unknownOp:
        this.close(CloseReason.protocolViolation, ErrText.unknownOp);
        return;
      case ParseFailure.maxControlLine:
        this.close(CloseReason.maxControlLine, ErrText.maxControlLine);
        return;
      case ParseFailure.maxPayload:
        this.close(CloseReason.maxPayload, ErrText.maxPayload);
        return;
      case ParseFailure.badArguments:
        this.close(CloseReason.protocolViolation, ErrText.parserError);
        return;
      case ParseFailure.headersNotSupported:
        // The reference closes without a word here.
        this.close(CloseReason.protocolViolation);
        return;
    }
  }

  // ---- output -----------------------------------------------------------------

  /** Queues bytes for this turn's flush. */
  send(data: Buffer): void {
    if (this.closed) return;
    const out = this.out;
    out.reserve(data.length);
    data.copy(out.buf, out.pos);
    out.pos += data.length;
    this.queued();
  }

  sendErr(text: string): void {
    if (this.server.logger.traceEnabled) this.traceOut(`-ERR ${text}`);
    this.send(errLine(text));
  }

  /** Called after bytes were queued: schedules the flush and enforces max_pending. */
  queued(): void {
    if (!this.flushQueued) {
      this.flushQueued = true;
      this.server.queueFlush(this);
    }
    // socketPending is the socket's backlog at the last flush (an upper bound):
    // only when the estimate looks high is the real figure read.
    if (this.out.queued + this.socketPending > this.server.options.maxPending >>> 1) {
      this.checkPending();
    }
  }

  /**
   * Past max_pending the subscriber is cut off at once; past half of it, the read
   * that pushed it there will hold its publisher (Server.runRead, backpressure.ts).
   */
  private checkPending(): void {
    const socket = this.socket;
    if (socket === null || this.closed) return;
    this.socketPending = socket.writableLength;
    const pending = this.out.queued + this.socketPending;
    const max = this.server.options.maxPending;
    // As the reference, a route is never cut off for pending bytes (that would drop
    // the whole cluster's interest): its publishers are held instead.
    if (pending > max && this.kind !== 'route') {
      this.slowConsumer(false);
    } else if (pending > max >>> 1 && this.server.reading && !this.flow.listed) {
      if (this.flow.mayHold()) this.server.congest(this);
    }
  }

  /** Holds producer's reads while this connection is behind (see backpressure.ts). */
  holdProducer(producer: Client): void {
    const socket = producer.socket;
    if (socket === null || producer.closed || producer.kind === 'internal') return;
    this.flow.hold(producer.flow, socket);
  }

  /** The socket wrote everything out: publishers held for it may go on. */
  drained(): void {
    this.socketPending = 0;
    this.flow.drained();
  }

  /** Hands queued output to the socket (the server calls this once per turn). */
  flush(): void {
    this.flushQueued = false;
    const socket = this.socket;
    if (socket === null || this.closed) return;
    this.flow.handed += this.out.flush(socket);
    const left = socket.writableLength;
    this.socketPending = left;
    if (left > 0) this.flow.backlogged();
  }

  /** Cuts this connection off: pending output past max_pending, or a write deadline missed. */
  slowConsumer(deadline: boolean): void {
    if (this.closed) return;
    const reason = deadline ? CloseReason.slowConsumerDeadline : CloseReason.slowConsumerPending;
    this.server.slowConsumers++;
    this.server.logger.info(
      reason === CloseReason.slowConsumerPending
        ? `${this.label()} - Slow Consumer Detected: MaxPending of ${this.server.options.maxPending} Exceeded`
        : `${this.label()} - Slow Consumer Detected: WriteDeadline of ${this.server.options.writeDeadline}ms Exceeded`,
    );
    this.out.discard();
    this.close(reason, ErrText.slowConsumer);
  }

  private sendNoResponders(p: Parser): void {
    if (!this.headers) return;
    const reply = p.argBuf.toString('latin1', p.replyStart, p.replyEnd);
    // Only when the publisher itself listens on the reply subject, as the reference.
    const result = this.account.sublist.match(reply);
    for (const sub of result.psubs) {
      if (sub.client !== this) continue;
      const line = Buffer.from(`HMSG ${reply} ${sub.sid} 16 16\r\n`, 'latin1');
      this.send(line);
      this.send(NO_RESPONDERS_HDR);
      this.send(Buffer.from('\r\n'));
      return;
    }
  }

  // ---- subscriptions ----------------------------------------------------------

  removeSubscription(sub: Subscription): void {
    if (sub.closed) return;
    sub.closed = true;
    this.subs.delete(sub.sid);
    this.account.sublist.remove(sub);
    this.server.subscriptionRemoved(sub);
  }

  // ---- keep-alive and close -----------------------------------------------------

  private schedulePing(first: boolean): void {
    if (this.kind !== 'client') return;
    const interval = this.server.options.pingInterval;
    // The first PING comes early (at most 2 s plus up to 20%), as the reference does.
    // The jitter is in steps of 10 ms: Node keeps a list (and a queue entry) per
    // distinct delay, and a connection storm would otherwise make hundreds of them.
    const delay = first ? firstPingDelay(interval) : interval;
    this.pingTimer = setTimeout(this.pingFired, delay);
    this.pingTimer.unref();
    this.pingTimerFirst = first;
  }

  private readonly pingFired = (): void => {
    this.pingTimer = null;
    this.onPingTimer();
  };

  private onPingTimer(): void {
    if (this.closed) return;
    const now = Date.now();
    const interval = this.server.options.pingInterval;
    // As the reference (processPingTimer): activity delays a PING only while the
    // round trip is known (CONNECT gives a first estimate) and a PING went out within
    // the hour. So the first timer always sends one, and a client that never sent
    // CONNECT gets one every interval however busy it is.
    const needRtt = this.rtt < 0 || now - this.lastPingOut > RTT_MEASUREMENT_INTERVAL;
    if (!needRtt && (now - this.lastActivity < interval || now - this.lastPingIn < interval)) {
      this.schedulePing(false);
      return;
    }
    if (this.pingsOut + 1 > this.server.options.pingMax) {
      this.server.staleConnections++;
      this.close(CloseReason.staleConnection, ErrText.staleConnection);
      return;
    }
    this.pingsOut++;
    this.rttStart = now;
    this.lastPingOut = now;
    if (this.server.logger.traceEnabled) this.traceOut('PING');
    this.send(PING);
    this.schedulePing(false);
  }

  private checkAuthorized(): boolean {
    if (this.authorized) return true;
    this.close(CloseReason.authFailure, ErrText.authViolation);
    return false;
  }

  /**
   * Closes the connection: an optional -ERR first, then everything queued is written
   * and the socket ended. Safe to call more than once.
   */
  close(reason: string, errText?: string): void {
    if (this.closed) return;
    if (errText !== undefined) {
      if (this.server.logger.traceEnabled) this.traceOut(`-ERR ${errText}`);
      this.send(errLine(errText));
    }
    this.closed = true;
    this.closeReason = reason;
    this.stop = new Date();
    this.parser.stop();
    if (this.pingTimer !== null) clearTimeout(this.pingTimer);
    this.flow.closed();
    if (this.authTimer !== null) clearTimeout(this.authTimer);
    for (const sub of this.subs.values()) {
      sub.closed = true;
      this.account.sublist.remove(sub);
      this.server.subscriptionRemoved(sub);
    }
    const socket = this.socket;
    if (socket !== null) {
      if (!socket.destroyed) {
        this.flow.handed += this.out.flush(socket);
        if (this.peerEnded && this.sharedReads && socket.writableLength === 0) {
          // A plain TCP peer closed its side and everything we wrote is in the kernel:
          // nothing is left to read or to wait for, and closing the socket sends our
          // FIN after those bytes (no shutdown, no timer per connection). TLS and
          // WebSocket connections still end with their own closing words.
          socket.destroy();
        } else {
          socket.end();
          // A peer that never reads would keep the socket forever.
          setTimeout(() => socket.destroy(), 2000).unref();
        }
      }
    }
    this.server.clientClosed(this);
  }

  /**
   * `ip:port - cid:N`, then, once CONNECT named them, `- "v<version>:<lang>:<name>"`,
   * as the reference's log lines.
   */
  label(): string {
    // A route's messages are written through its connection's Client: `rid`, as the
    // route's own lines (the reference's label for a ROUTER connection).
    const tag = this.kind === 'route' ? 'rid' : (this.via?.idTag ?? 'cid');
    const base = `${this.ip}:${this.port} - ${tag}:${this.cid}`;
    const ncs = [this.version === '' ? '' : 'v' + this.version, this.lang, this.name]
      .filter((part) => part !== '')
      .join(':');
    return ncs === '' ? base : `${base} - ${JSON.stringify(ncs)}`;
  }

  private trace(op: string, args: string): void {
    this.server.logger.trace(`${this.label()} - <<- [${args === '' ? op : op + ' ' + args}]`);
  }

  private traceOut(line: string): void {
    this.server.logger.trace(`${this.label()} - ->> [${line}]`);
  }

  private tracePub(p: Parser, subject: string): void {
    const reply =
      p.replyStart >= 0 ? ' ' + p.argBuf.toString('latin1', p.replyStart, p.replyEnd) : '';
    const op = p.hdr >= 0 ? 'HPUB' : 'PUB';
    const sizes = p.hdr >= 0 ? `${p.hdr} ${p.size}` : String(p.size);
    this.trace(op, `${subject}${reply} ${sizes}`);
  }
}

/** The first keep-alive PING's delay (ms): min(interval, 2 s) plus 0-20%, in 10 ms steps. */
function firstPingDelay(interval: number): number {
  const base = Math.min(interval, 2000);
  return base + Math.floor(base * 0.02 * Math.random()) * 10;
}

/** Byte equality of a[start, start+len) and b[0, len); a loop beats a native call for subjects. */
function sameBytes(a: Buffer, start: number, b: Buffer, len: number): boolean {
  for (let i = 0; i < len; i++) if (a[start + i] !== b[i]) return false;
  return true;
}

/**
 * `_R_.`, and `$JS.ACK.` and `_GR_.` followed by at least one byte, are reserved
 * reply prefixes, as in the reference (isReservedReply).
 */
function isReservedReply(b: Buffer, start: number, end: number): boolean {
  const n = end - start;
  if (
    n >= 4 &&
    b[start] === 0x5f &&
    b[start + 1] === 0x52 &&
    b[start + 2] === 0x5f &&
    b[start + 3] === 0x2e
  ) {
    return true;
  }
  if (n > 5 && isGatewayPrefix(b, start)) return true;
  // Byte by byte: a string here cost one per request published (streaming PubMsgs).
  if (n <= 8) return false;
  for (let i = 0; i < 8; i++) if (b[start + i] !== JS_ACK[i]) return false;
  return true;
}

const JS_ACK = Buffer.from('$JS.ACK.', 'latin1');

/** `_GR_.` at start: gateway-routed replies, which clients may not publish to or use. */
function isGatewayPrefix(b: Buffer, start: number): boolean {
  return (
    b[start] === 0x5f &&
    b[start + 1] === 0x47 &&
    b[start + 2] === 0x52 &&
    b[start + 3] === 0x5f &&
    b[start + 4] === 0x2e
  );
}

/** A connection whose socket watchSocket() watches: a client, or a route. */
export interface WatchedConnection {
  close(reason: string): void;
  /** Set when the peer closed its side (the socket's 'end'). */
  peerEnded?: boolean;
  /** The socket wrote everything out. */
  drained(): void;
}

/** The connection a watched socket belongs to, for the shared listeners below. */
const watcherOf = Symbol('wirebus.watcher');

interface Watched {
  [watcherOf]: WatchedConnection;
}

// One set of listeners for every socket, which finds its connection on the socket
// (the emitter is `this`): no closures per connection.
function onSocketEnd(this: Watched): void {
  const conn = this[watcherOf];
  conn.peerEnded = true;
  conn.close(CloseReason.clientClosed);
}

function onSocketClose(this: Watched): void {
  this[watcherOf].close(CloseReason.clientClosed);
}

function onSocketError(this: Watched, err: NodeJS.ErrnoException): void {
  this[watcherOf].close(err.syscall === 'write' ? CloseReason.writeError : CloseReason.readError);
}

function onSocketDrain(this: Watched): void {
  this[watcherOf].drained();
}

/**
 * Closes conn (a client, or a route over its client) when its socket ends, closes
 * or fails, and reports when the socket's output drained.
 */
export function watchSocket(socket: Transport, conn: WatchedConnection): void {
  (socket as unknown as Watched)[watcherOf] = conn;
  socket.on('end', onSocketEnd);
  socket.on('close', onSocketClose);
  socket.on('error', onSocketError);
  socket.on('drain', onSocketDrain);
}
