// One consumer of a stream: which messages it delivers (deliver policy, filter), where
// (a push subject, or the pull requests waiting on MSG.NEXT), the acks it waits for
// ($JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<dseq>.<ts>.<pending>), redelivery after
// ack_wait / backoff / -NAK, max_deliver, max_ack_pending, heartbeats and flow control,
// and the counters CONSUMER.INFO reports, after nats-server 2.9's consumer.go.

import type { Subscription } from '../server/subscription.js';
import { hasWildcard } from '../subjects/validate.js';
import { consumerConfigJson, type ConsumerConfig } from './consumer-config.js';
import { headersOnly, statusHeader } from './headers.js';
import type { Stream, StreamConsumer, StreamHost } from './stream.js';
import { blankStoredSpan, type ConsumerState, type ConsumerStore } from './storage/types.js';
import { subjectMatches } from '../subjects/validate.js';
import { nowNs, rfc3339Nano } from './time.js';
import {
  ackDseq,
  ackEmptyToken,
  ackSseq,
  ackVerb,
  parseAckRange,
  parseAckSubject,
} from './ack-subject.js';
import { DeliveryMessage } from './delivery-message.js';
import { goField, goJsonCheck, goTypeError, type GoFieldType } from './go-json.js';
import { PullQueue, type PullRequest } from './pull-queue.js';
import { parseGoDuration } from '../config/duration.js';

interface Pending {
  dseq: number;
  /** Delivery time, ns. */
  ts: number;
  /** Deliveries so far. */
  dc: number;
  subject: string;
}

const EMPTY = Buffer.alloc(0);
const MS = 1e6;

export class Consumer implements StreamConsumer {
  readonly name: string;
  cfg: ConsumerConfig;
  readonly created: number;
  filter: string;
  private wildcard: boolean;
  /** Next stream sequence to look at, next delivery sequence. */
  private sseq = 1;
  private dseq = 1;
  private adflr = 0;
  private asflr = 0;
  private readonly pending = new Map<number, Pending>();
  /**
   * Whether `pending` holds its sequences in ascending order (a Map iterates in insertion
   * order, and first deliveries come in stream order): then its first key is the lowest,
   * and the ack floor needs no scan. Set again whenever `pending` empties.
   */
  private pendingOrdered = true;
  private pendingLast = 0;
  /**
   * The lowest pending sequence (0 when nothing is pending), kept up to date as entries
   * come and go: a Map's first key costs a walk over every entry deleted before it.
   */
  private pendingLow = 0;
  /** Stream sequences waiting for redelivery, oldest first, and their delivery counts. */
  private rdq: number[] = [];
  private readonly rdc = new Map<number, number>();
  /** last_per_subject: the sequences to deliver before sseq, oldest first. */
  private readonly lps: number[] = [];
  /**
   * While `lps` is being delivered, the stream sequence INFO reports as delivered (the
   * reference's position is in that list then); -1 otherwise.
   */
  private lpsAt = -1;
  private readonly waiting = new PullQueue();
  /** Messages left to deliver (matching the filter, at or after sseq). */
  private npc = 0;
  private ackSub: Subscription | null = null;
  private ackTimer: NodeJS.Timeout | null = null;
  private pullTimer: NodeJS.Timeout | null = null;
  private hbTimer: NodeJS.Timeout | null = null;
  private inactiveTimer: NodeJS.Timeout | null = null;
  private interestTimer: NodeJS.Timeout | null = null;
  // Times start as -0, the value 0 held as a double, as what they will hold (ms and ns
  // since the epoch): a field that goes from a small integer to a double changes the
  // consumer's hidden class, and V8 drops the optimised code that had seen the old one.
  /** replay_policy original: the wall time (ms) and stored time (ns) of the first delivery. */
  private replayWall = -0;
  private replayTs = -0;
  private replayTimer: NodeJS.Timeout | null = null;
  /** rate_limit_bps: when (ms) the next message may go. */
  private paceNext = -0;
  private interestRetryMs = INTEREST_RETRY_MS;
  /** sample_freq as a percentage (0: no ack metrics). */
  private readonly sampleFreq: number;
  /**
   * Activity (a delivery, an ack, a request) since the heartbeat timer's last tick and
   * since the inactivity timer was armed: flags, not a clock reading per ack.
   */
  private activeSinceBeat = false;
  private activeSinceArmed = false;
  /** When the last delivery and the last ack happened (ns), for INFO's last_active. */
  private lastDelivered = -0;
  private lastAcked = -0;
  private readonly ackPrefix: string;
  private readonly msg = blankStoredSpan();
  /** The delivery being routed: the MSG line's fields, rewritten in place for each. */
  private readonly out: DeliveryMessage;
  private delivering = false;
  /** A burst filled up: delivery goes on at the next turn (or once the receiver caught up). */
  private resumeSoon: NodeJS.Immediate | null = null;
  private resumeLater: NodeJS.Timeout | null = null;
  /** Flow control: the reply subject of the request in flight, and bytes since it. */
  private fcReply = '';
  /**
   * The reference's flow control window: bytes pushed and not yet covered by an answered
   * request, those the request in flight covers, and the window (2 MB at first, doubled
   * with each answer up to 32 MB). Delivery stops past the window; a request goes out
   * past half of it.
   */
  private fcPending = 0;
  private fcCovered = 0;
  private fcWindow = FLOW_CONTROL_LIMIT / 16;
  closed = false;

  constructor(
    private readonly stream: Stream,
    private readonly host: StreamHost,
    name: string,
    cfg: ConsumerConfig,
    private readonly store: ConsumerStore,
    created: number,
    private readonly onInactive: (c: Consumer) => void,
  ) {
    this.name = name;
    this.cfg = cfg;
    this.created = created;
    this.filter = cfg.filterSubject;
    this.wildcard = this.filter !== '' && hasWildcard(this.filter);
    this.ackPrefix = `$JS.ACK.${stream.name}.${name}.`;
    this.out = new DeliveryMessage(this.ackPrefix);
    const freq = cfg.sampleFreq.endsWith('%') ? cfg.sampleFreq.slice(0, -1) : cfg.sampleFreq;
    this.sampleFreq = freq === '' ? 0 : Number(freq);
  }

  /** An update through CONSUMER.CREATE (consumer-manage.ts checked what may change). */
  reconfigure(cfg: ConsumerConfig): void {
    this.cfg = cfg;
    if (cfg.filterSubject !== this.filter) {
      this.filter = cfg.filterSubject;
      this.wildcard = this.filter !== '' && hasWildcard(this.filter);
      this.recountPending();
    }
  }

  get isPush(): boolean {
    return this.cfg.deliverSubject !== '';
  }

  get durable(): boolean {
    return this.cfg.durable !== '';
  }

  /** Picks the starting sequence from the deliver policy and starts listening for acks. */
  start(): void {
    const store = this.stream.store;
    const st = store.state();
    const cfg = this.cfg;
    switch (cfg.deliverPolicy) {
      case 'all':
        this.sseq = st.firstSeq > 0 ? st.firstSeq : 1;
        break;
      case 'last_per_subject': {
        // The last message of each subject stored now, then everything after.
        for (const ss of store.subjectsState(this.filter).values()) this.lps.push(ss.last);
        this.lps.sort((a, b) => a - b);
        this.sseq = st.lastSeq + 1;
        break;
      }
      case 'last': {
        const last = store.loadLastMsg(this.filter);
        this.sseq = last === undefined ? st.lastSeq + 1 : last.seq;
        break;
      }
      case 'new':
        this.sseq = st.lastSeq + 1;
        break;
      case 'by_start_sequence':
        this.sseq = cfg.optStartSeq;
        break;
      case 'by_start_time':
        this.sseq = store.getSeqFromTime(cfg.optStartTime ?? 0);
        break;
    }
    // The reference reports an ack floor of 0 until the first ack (or, without acks, the
    // first delivery), wherever delivery starts.
    this.asflr = 0;
    this.lpsAt = this.lps.length > 0 ? this.lps[0]! - 1 : -1;
    this.store.setStarting(this.sseq - 1);
    this.recountPending();
    this.ackSub = this.host.subscribe(this.ackPrefix + '>', this.onAck, true);
    if (this.isPush && cfg.heartbeat > 0) this.armHeartbeat();
    this.touch();
    // The first delivery at the next turn: the create request's answer goes first.
    this.resumeSoon = setImmediate(this.onResume);
  }

  /**
   * A consumer recovered at start-up: its position, pending acks and delivery counts
   * come from its store (the reference's readStoredState), not from the deliver policy.
   */
  /** The stored position (delivered, ack floor, pending), as a snapshot saves it. */
  storeState(): ConsumerState {
    return this.store.state();
  }

  resume(): void {
    const st = this.store.state();
    this.sseq = st.delivered.stream + 1;
    this.dseq = st.delivered.consumer + 1;
    this.adflr = st.ackFloor.consumer;
    this.asflr = st.ackFloor.stream;
    const now = nowNs();
    for (const [sseq, p] of st.pending) {
      const m = this.stream.store.loadMsg(sseq);
      if (m === undefined) continue;
      const dc = (st.redelivered.get(sseq) ?? 0) + 1;
      // Redelivered after ack_wait from now, as the reference does after a restart.
      this.addPending(sseq, { dseq: p.sequence, ts: Math.min(p.ts, now), dc, subject: m.subject });
      if (dc > 1) this.rdc.set(sseq, dc - 1);
    }
    this.recountPending();
    this.ackSub = this.host.subscribe(this.ackPrefix + '>', this.onAck, true);
    if (this.isPush && this.cfg.heartbeat > 0) this.armHeartbeat();
    this.armAckTimer();
    this.touch();
    this.kick();
  }

  // ---- delivery ---------------------------------------------------------------

  signal(seq: number, subject: string): void {
    if (seq >= this.sseq && (this.filter === '' || this.matches(subject))) this.npc++;
    this.kick();
  }

  streamPurged(firstSeq: number): void {
    if (this.sseq < firstSeq) this.sseq = firstSeq;
    for (const seq of [...this.pending.keys()]) {
      if (seq < firstSeq) this.dropPending(seq);
    }
    this.rdq = this.rdq.filter((s) => s >= firstSeq);
    if (this.asflr < firstSeq - 1) this.asflr = firstSeq - 1;
    this.recountPending();
  }

  needsAck(seq: number, subject: string): boolean {
    if (this.filter !== '' && !this.matches(subject)) return false;
    if (seq >= this.sseq) return true;
    // last_per_subject: still to be delivered, below sseq.
    if (this.lps.length > 0 && this.lps.includes(seq)) return true;
    // As the reference's needAck: with explicit acks a delivered message above the floor
    // is needed only while it is pending (the floor lags behind out-of-order acks).
    switch (this.cfg.ackPolicy) {
      case 'none':
        return false;
      case 'all':
        return seq > this.asflr;
      default:
        return seq > this.asflr && this.pending.has(seq);
    }
  }

  private matches(subject: string): boolean {
    return this.wildcard ? subjectMatches(subject, this.filter) : subject === this.filter;
  }

  private recountPending(): void {
    this.npc = this.lps.length + this.stream.store.filteredState(this.sseq, this.filter).msgs;
  }

  /**
   * Delivers as much as the targets and max_ack_pending allow, a burst at a time: a
   * burst that fills up goes on at the next turn of the event loop, after the core has
   * handed it to the socket (the receiver starts reading while the next is built, and
   * other connections are served in between), and waits while the receiver is behind.
   */
  kick(): void {
    if (this.closed || this.delivering || this.resumeSoon !== null || this.resumeLater !== null)
      return;
    // A pull consumer without requests has nowhere to send (every ack lands here).
    if (!this.isPush && this.waiting.size === 0) return;
    this.delivering = true;
    // One clock reading per burst: delivery times and activity need no finer grain.
    const now = nowNs();
    let sent = 0;
    try {
      // After a pause the receiver is likely waiting: a short first burst (FIRST_BURST_BYTES).
      const limit = now - this.lastDelivered >= PAUSE_NS ? FIRST_BURST_BYTES : BURST_BYTES;
      sent = this.deliverLoop(now, limit);
    } finally {
      this.delivering = false;
    }
    if (sent > 0) {
      this.lastDelivered = now;
      this.touch();
    }
  }

  /** Delivers up to a burst of `limit` bytes of messages; returns how many went. */
  private deliverLoop(now: number, limit: number): number {
    const cfg = this.cfg;
    const acks = cfg.ackPolicy !== 'none';
    const push = cfg.deliverSubject !== '';
    // Expired requests and requesters gone away are dropped once per round, not per message.
    if (!push) this.expireRequests();
    let sent = 0;
    let bytes = 0;
    for (;;) {
      let target: string;
      let req: PullRequest | undefined;
      if (push) {
        if (cfg.flowControl && this.fcPending > this.fcWindow) return sent;
        if (!this.host.hasDeliveryInterest(cfg.deliverSubject, cfg.deliverGroup)) {
          this.awaitInterest();
          return sent;
        }
        this.interestRetryMs = INTEREST_RETRY_MS;
        target = cfg.deliverSubject;
      } else {
        req = this.waiting.first();
        if (req === undefined) return sent;
        target = req.reply;
      }
      if (acks && cfg.maxAckPending > 0 && this.pending.size >= cfg.maxAckPending) {
        // A redelivery does not add to what is pending.
        if (this.rdq.length === 0) return sent;
      }
      if (sent === BURST_MSGS || bytes >= limit) {
        this.resumeSoon = setImmediate(this.onResume);
        return sent;
      }
      const dc = this.nextMsg();
      if (dc === 0) {
        if (req === undefined || !req.noWait || !this.endNoWait(req)) return sent;
        continue;
      }
      const msg = this.msg;
      const seq = msg.seq;
      if (cfg.replayPolicy === 'original' && dc === 1 && this.replayNotYet(msg.ts)) {
        this.unget(seq, dc);
        return sent;
      }
      if (cfg.rateLimit > 0 && this.paced()) {
        this.unget(seq, dc);
        return sent;
      }
      if (req !== undefined && req.bytesLeft !== Infinity) {
        // The reference counts the ack subject in a message's size.
        const size =
          msg.subject.length +
          this.ackReplyLength(dc, seq, this.dseq, msg.ts) +
          msg.dataEnd -
          msg.hdrStart;
        if (size > req.bytesLeft) {
          // The request ends, whatever it got so far; the message waits for the next.
          this.unget(seq, dc);
          this.waiting.served(true);
          this.host.publish(
            req.reply,
            null,
            statusHeader(
              '409 Message Size Exceeds MaxBytes',
              `Nats-Pending-Messages: ${req.batch}\r\nNats-Pending-Bytes: ${req.bytesLeft}\r\n`,
            ),
            EMPTY,
          );
          continue;
        }
        req.bytesLeft -= size;
      }
      bytes += this.deliver(target, seq, dc, acks, push, now);
      sent++;
      if (req !== undefined) {
        req.delivered++;
        this.waiting.served(--req.batch <= 0 || req.bytesLeft <= 0);
      }
    }
  }

  /** The next burst, unless the receiver still has much to read: then a moment later. */
  private readonly onResume = (): void => {
    this.resumeSoon = null;
    this.resumeLater = null;
    if (this.closed) return;
    const target = this.isPush ? this.cfg.deliverSubject : (this.waiting.first()?.reply ?? '');
    if (target !== '' && this.host.backlog(target) > this.host.backlogLimit) {
      this.resumeLater = setTimeout(this.onResume, BACKLOG_WAIT_MS);
      this.resumeLater.unref();
      return;
    }
    this.kick();
  };

  /**
   * replay_policy original: messages go out spaced as they were stored. True (with a
   * timer set to come back) when the message at `ts` is not due yet.
   */
  private replayNotYet(ts: number): boolean {
    const now = Date.now();
    if (this.replayWall === 0) {
      this.replayWall = now;
      this.replayTs = ts;
      return false;
    }
    const due = this.replayWall + (ts - this.replayTs) / MS;
    if (now >= due) return false;
    if (this.replayTimer === null) {
      this.replayTimer = setTimeout(this.onReplayTimer, Math.ceil(due - now));
      this.replayTimer.unref();
    }
    return true;
  }

  /**
   * rate_limit_bps: true (with a timer set to come back) while what was sent so far is
   * ahead of the rate.
   */
  private paced(): boolean {
    const now = Date.now();
    if (now >= this.paceNext) return false;
    if (this.replayTimer === null) {
      this.replayTimer = setTimeout(this.onReplayTimer, Math.ceil(this.paceNext - now));
      this.replayTimer.unref();
    }
    return true;
  }

  /**
   * Loads the next message to send into `this.msg` (a redelivery first, then the next new
   * one) and returns its delivery count, or 0 when there is none: no tuple per message.
   */
  private nextMsg(): number {
    const store = this.stream.store;
    while (this.rdq.length > 0) {
      const seq = this.rdq.shift()!;
      const p = this.pending.get(seq);
      if (p === undefined) continue;
      const dc = p.dc + 1;
      if (this.cfg.maxDeliver > 0 && dc > this.cfg.maxDeliver) {
        // Its last delivery went unacknowledged: no more tries, and (as the reference,
        // when it next looks for a message to send) no longer pending, though the ack
        // floor stays below it.
        this.dropPending(seq);
        this.deliveryExceeded(seq, p.dc);
        continue;
      }
      if (store.loadSpan(seq, this.msg) === undefined) {
        this.dropPending(seq);
        continue;
      }
      return dc;
    }
    while (this.lps.length > 0) {
      const seq = this.lps.shift()!;
      if (this.npc > 0) this.npc--;
      this.lpsAt = this.lps.length > 0 ? seq : -1;
      if (store.loadSpan(seq, this.msg) !== undefined) return 1;
    }
    const m = store.loadNextSpan(this.filter, this.wildcard, this.sseq, this.msg);
    if (m === undefined) {
      const last = store.state().lastSeq;
      if (this.sseq <= last) this.sseq = last + 1;
      return 0;
    }
    this.sseq = m.seq + 1;
    if (this.npc > 0) this.npc--;
    return 1;
  }

  private unget(seq: number, dc: number): void {
    if (dc > 1) this.rdq.unshift(seq);
    else if (seq < this.sseq - 1 || (this.lps.length > 0 && seq < this.lps[0]!)) {
      this.lps.unshift(seq);
      this.npc++;
    } else {
      this.sseq = seq;
      this.npc++;
    }
  }

  /** Sends the message loaded in `msg`; returns its size. */
  private deliver(
    target: string,
    seq: number,
    dc: number,
    acks: boolean,
    push: boolean,
    now: number,
  ): number {
    const msg = this.msg;
    const cfg = this.cfg;
    // Every delivery, a redelivery too, takes the next consumer sequence (as the reference).
    const dseq = this.dseq++;
    const p = this.pending.get(seq);
    let buf = msg.buf;
    let hdrStart = msg.hdrStart;
    let dataStart = msg.dataStart;
    let dataEnd = msg.dataEnd;
    if (cfg.headersOnly) {
      buf = headersOnly(buf, hdrStart, dataStart, dataEnd - dataStart);
      hdrStart = 0;
      dataStart = dataEnd = buf.length;
    }
    if (acks) {
      if (p === undefined) {
        this.addPending(seq, { dseq, ts: now, dc, subject: msg.subject });
      } else {
        p.ts = now;
        p.dc = dc;
        p.dseq = dseq;
      }
      if (dc > 1) this.rdc.set(seq, dc - 1);
      this.armAckTimer();
    } else {
      this.adflr = dseq;
      this.asflr = seq;
    }
    // The store was opened with the ack policy: without acks it moves the floor itself.
    this.store.updateDelivered(dseq, seq, dc, now);
    const out = this.out.set(
      msg.subject,
      dc,
      seq,
      dseq,
      msg.ts,
      this.npc,
      buf,
      hdrStart,
      dataStart,
      dataEnd,
    );
    // Its ack reply's length, for flow control's count, before routing may reuse it.
    const replyLength = out.replyEnd - out.replyStart;
    this.host.deliver(target, out);
    const size = msg.subject.length + dataEnd - hdrStart;
    if (cfg.rateLimit > 0) {
      const bits = size * 8;
      this.paceNext = Math.max(this.paceNext, Date.now()) + (bits * 1000) / cfg.rateLimit;
    }
    // Without acks a delivery is the consumer's ack (interest and work-queue retention).
    if (!acks && this.stream.cfg.retention !== 'limits') this.stream.ackedBy(seq, msg.subject);
    if (push && cfg.flowControl) {
      // The reference counts the ack subject too.
      const wire = size + replyLength;
      this.fcPending += wire;
      if (this.fcReply === '') {
        if (this.fcPending > this.fcWindow / 2) this.sendFlowControl();
      } else if (this.fcPending - this.fcCovered >= this.fcWindow) {
        this.fcCovered += wire;
      }
    }
    return size;
  }

  /** The length of a delivery's ack reply (`<prefix><dc>.<sseq>.<dseq>.<ts>.<pending>`). */
  private ackReplyLength(dc: number, seq: number, dseq: number, ts: number): number {
    return (
      this.ackPrefix.length +
      digits(dc) +
      digits(seq) +
      digits(dseq) +
      digits(ts) +
      digits(this.npc) +
      4
    );
  }

  /**
   * Nobody listens on the deliver subject yet (clients often subscribe right after they
   * create the consumer): delivery starts when a subscription comes, as in the reference.
   * A slow look again covers interest that arrives another way (imports, routes).
   */
  private awaitInterest(): void {
    if (this.interestTimer !== null || this.closed) return;
    this.host.awaitInterest(this);
    // The look again backs off (250 ms up to 8 s) while nobody comes.
    this.interestTimer = setTimeout(this.interestAppeared, this.interestRetryMs);
    this.interestTimer.unref();
    this.interestRetryMs = Math.min(this.interestRetryMs * 2, INTEREST_RETRY_MAX_MS);
  }

  get deliverSubject(): string {
    return this.cfg.deliverSubject;
  }

  readonly interestAppeared = (): void => {
    if (this.interestTimer !== null) clearTimeout(this.interestTimer);
    this.interestTimer = null;
    this.host.cancelInterestWait(this);
    this.kick();
  };

  /** Stops pushing until the client answers the flow control request. */
  private sendFlowControl(): void {
    this.fcCovered = this.fcPending;
    const reply = `$JS.FC.${this.stream.name}.${this.name}.${randomToken()}`;
    this.fcReply = reply;
    const sub = this.host.subscribe(reply, () => {
      this.host.unsubscribe(sub);
      this.flowControlReply(reply);
    });
    this.host.publish(
      this.cfg.deliverSubject,
      reply,
      statusHeader('100 FlowControl Request'),
      EMPTY,
    );
  }

  // ---- pull requests (MSG.NEXT) -------------------------------------------------

  /** A MSG.NEXT request; returns a status line to send back at once, or '' when queued. */
  nextRequest(reply: string, body: Buffer): void {
    const send = (status: string, extra = ''): void => {
      this.host.publish(reply, null, statusHeader(status, extra), EMPTY);
    };
    if (this.isPush) return send('409 Consumer is push based');
    const parsed = parseNextRequest(body);
    if (typeof parsed === 'string') return send(`400 Bad Request - ${parsed}`);
    const cfg = this.cfg;
    if (cfg.maxBatch > 0 && parsed.batch > cfg.maxBatch)
      return send(`409 Exceeded MaxRequestBatch of ${cfg.maxBatch}`);
    if (parsed.expiresNs > 0 && cfg.maxExpires > 0 && parsed.expiresNs > cfg.maxExpires)
      return send(`409 Exceeded MaxRequestExpires of ${goDuration(cfg.maxExpires)}`);
    if (parsed.maxBytes > 0 && cfg.maxBytes > 0 && parsed.maxBytes > cfg.maxBytes)
      return send(`409 Exceeded MaxRequestMaxBytes of ${cfg.maxBytes}`);
    this.expireRequests();
    if (parsed.noWait) {
      const available = this.npc + this.rdq.length;
      if (available === 0 && parsed.expiresNs === 0) return send('404 No Messages');
      if (available > 0) {
        // The requests already waiting would take all there is.
        let batches = 0;
        for (const r of this.waiting.live()) batches += r.batch;
        if (available < batches) return send('408 Requests Pending');
      }
    }
    if (this.waiting.size >= cfg.maxWaiting) return send('409 Exceeded MaxWaiting');
    const now = Date.now();
    const req: PullRequest = {
      reply,
      batch: parsed.batch,
      bytesLeft: parsed.maxBytes > 0 ? parsed.maxBytes : Infinity,
      delivered: 0,
      expires: parsed.expiresNs > 0 ? now + parsed.expiresNs / MS : 0,
      noWait: parsed.noWait,
      hb: parsed.hbNs / MS,
      hbNext: parsed.hbNs > 0 ? now + parsed.hbNs / MS : 0,
    };
    this.waiting.push(req);
    this.touch();
    this.kick();
    if (this.waiting.live().includes(req) && (req.expires > 0 || req.hb > 0)) this.armPullTimer();
  }

  /**
   * A no_wait request found nothing more: 408 when it got something, else 404, or (with
   * expires) it waits on until a message or its expiry, as the reference's.
   * Returns whether the request was ended.
   */
  private endNoWait(req: PullRequest): boolean {
    if (req.delivered === 0 && req.expires > 0) return false;
    this.finishRequest(req, req.delivered > 0);
    return true;
  }

  private finishRequest(req: PullRequest, timeout: boolean): void {
    this.waiting.remove(req);
    if (timeout) {
      this.host.publish(
        req.reply,
        null,
        statusHeader(
          '408 Request Timeout',
          `Nats-Pending-Messages: ${req.batch}\r\nNats-Pending-Bytes: ${pendingBytes(req)}\r\n`,
        ),
        EMPTY,
      );
    } else {
      this.host.publish(req.reply, null, statusHeader('404 No Messages'), EMPTY);
    }
  }

  private expireRequests(): void {
    const waiting = this.waiting.live();
    if (waiting.length === 0) return;
    const now = Date.now();
    for (let i = 0; i < waiting.length;) {
      const r = waiting[i]!;
      if (r.expires > 0 && now >= r.expires) {
        waiting.splice(i, 1);
        this.host.publish(
          r.reply,
          null,
          statusHeader(
            '408 Request Timeout',
            `Nats-Pending-Messages: ${r.batch}\r\nNats-Pending-Bytes: ${pendingBytes(r)}\r\n`,
          ),
          EMPTY,
        );
        continue;
      }
      if (!this.host.hasInterest(r.reply)) {
        waiting.splice(i, 1);
        continue;
      }
      i++;
    }
  }

  private armPullTimer(): void {
    if (this.pullTimer !== null || this.closed) return;
    let next = Infinity;
    for (const r of this.waiting.live()) {
      if (r.expires > 0) next = Math.min(next, r.expires);
      if (r.hbNext > 0) next = Math.min(next, r.hbNext);
    }
    if (next === Infinity) return;
    this.pullTimer = setTimeout(this.onPullTimer, Math.max(1, next - Date.now()));
    this.pullTimer.unref();
  }

  /** The replay_policy original / rate_limit_bps wait is over: send again. */
  private readonly onReplayTimer = (): void => {
    this.replayTimer = null;
    this.kick();
  };

  private readonly onPullTimer = (): void => {
    this.pullTimer = null;
    if (this.closed) return;
    this.expireRequests();
    const now = Date.now();
    for (const r of this.waiting.live()) {
      if (r.hbNext > 0 && now >= r.hbNext) {
        r.hbNext = now + r.hb;
        this.host.publish(r.reply, null, this.heartbeatHeader(), EMPTY);
      }
    }
    this.armPullTimer();
  };

  // ---- acks ---------------------------------------------------------------------

  private readonly onAck = (
    subject: string,
    reply: string | null,
    _hdr: Buffer | null,
    data: Buffer,
  ): void => {
    // $JS.ACK.<stream>.<consumer>.<dc>.<sseq>.<dseq>.<ts>.<pending>, read in place.
    if (!parseAckSubject(subject, this.ackPrefix.length)) return;
    this.acked(ackSseq, ackDseq, reply, data, 0, data.length);
  };

  /**
   * An ack taken from the publisher's bytes (ack-tap.ts): the subject's numbers are
   * `b[from, end)`, the reply `b[replyStart, replyEnd)` (replyStart < 0: none), the body
   * `body[bodyStart, bodyEnd)`. Returns the subscription routing would have delivered it
   * to, or null when it would have delivered it to no one (this consumer no longer
   * listens, or the subject has an empty token).
   */
  takeAck(
    b: Buffer,
    from: number,
    end: number,
    replyStart: number,
    replyEnd: number,
    body: Buffer,
    bodyStart: number,
    bodyEnd: number,
  ): Subscription | null {
    const sub = this.ackSub;
    if (sub === null || sub.closed) return null;
    const isAck = parseAckRange(b, from, end);
    // An empty token: the subscription does not match, nothing was delivered.
    if (ackEmptyToken) return null;
    if (isAck) {
      const reply = replyStart >= 0 ? b.toString('latin1', replyStart, replyEnd) : null;
      this.acked(ackSseq, ackDseq, reply, body, bodyStart, bodyEnd);
    }
    return sub;
  }

  /** Whether `sub` is this consumer's ack subscription. */
  acksOn(sub: Subscription): boolean {
    return sub === this.ackSub;
  }

  /** One ack of `sseq` / `dseq` with the body `body[start, end)`. */
  private acked(
    sseq: number,
    dseq: number,
    reply: string | null,
    body: Buffer,
    start: number,
    end: number,
  ): void {
    // Deliveries wait on an ack only at max_ack_pending (deliverLoop), or with
    // redeliveries queued (-NAK): otherwise the ack has nothing to start.
    const cfg = this.cfg;
    const blocked =
      cfg.ackPolicy !== 'none' && cfg.maxAckPending > 0 && this.pending.size >= cfg.maxAckPending;
    switch (ackVerb(body, start, end)) {
      case '+ACK':
        this.ack(sseq, dseq);
        break;
      case '-NAK':
        this.nak(sseq, dseq, body.toString('latin1', start + 4, end).trim());
        break;
      case '+WPI':
        this.progress(sseq);
        break;
      case '+TER':
        this.term(sseq, dseq);
        break;
      case '+NXT': {
        this.ack(sseq, dseq);
        if (reply !== null && reply !== '') {
          this.nextRequest(
            reply,
            Buffer.from(body.toString('latin1', start + 4, end).trim(), 'latin1'),
          );
        }
        return;
      }
      default:
      // Not an ack nats-server knows: nothing happens but the AckSync reply.
    }
    // AckSync: an empty reply once the ack is processed, to an inbox answered once.
    if (reply !== null && reply !== '') this.host.reply(reply, null, EMPTY);
    this.touch();
    if (blocked || this.rdq.length > 0) this.kick();
  }

  private ack(sseq: number, dseq: number): void {
    const policy = this.cfg.ackPolicy;
    if (policy === 'none') return;
    this.lastAcked = nowNs();
    if (policy === 'all') {
      // Deleting the entry being visited is safe while iterating a Map.
      for (const [seq, p] of this.pending) {
        if (seq > sseq) {
          if (this.pendingOrdered) break;
          continue;
        }
        this.dropPending(seq);
        this.rdc.delete(seq);
        this.store.updateAcks(p.dseq, seq);
        this.stream.ackedBy(seq, p.subject);
      }
      if (sseq > this.asflr) {
        this.asflr = sseq;
        this.adflr = dseq;
      }
      return;
    }
    const p = this.pending.get(sseq);
    if (p === undefined) return;
    if (this.sampleFreq > 0) this.sampleAck(sseq, p);
    this.dropPending(sseq);
    this.rdc.delete(sseq);
    this.store.updateAcks(p.dseq, sseq);
    this.updateAckFloor(sseq, dseq);
    this.stream.ackedBy(sseq, p.subject);
  }

  /** sample_freq: `$JS.EVENT.METRIC.CONSUMER.ACK.<stream>.<consumer>` for a share of acks. */
  private sampleAck(sseq: number, p: Pending): void {
    if (this.sampleFreq < 100 && Math.floor(Math.random() * 100) > this.sampleFreq) return;
    const body: Record<string, unknown> = {
      type: 'io.nats.jetstream.metric.v1.consumer_ack',
      stream: this.stream.name,
      consumer: this.name,
      consumer_seq: p.dseq,
      stream_seq: sseq,
      ack_time: Math.max(0, nowNs() - p.ts),
      deliveries: p.dc,
    };
    this.host.advisory(`$JS.EVENT.METRIC.CONSUMER.ACK.${this.stream.name}.${this.name}`, body);
  }

  private addPending(seq: number, p: Pending): void {
    if (this.pending.size === 0) {
      this.pendingOrdered = true;
    } else if (seq < this.pendingLast) {
      this.pendingOrdered = false;
    }
    if (seq > this.pendingLast || this.pending.size === 0) this.pendingLast = seq;
    if (this.pending.size === 0 || seq < this.pendingLow) this.pendingLow = seq;
    this.pending.set(seq, p);
  }

  private dropPending(seq: number): void {
    if (!this.pending.delete(seq) || seq !== this.pendingLow) return;
    const pending = this.pending;
    // One store of the new lowest, emptied or not (see updateAckFloor).
    let low = 0;
    if (pending.size > 0) {
      // Acks mostly come in order: the next lowest is a few sequences up.
      for (let s = seq + 1; s <= seq + LOW_SCAN; s++) {
        if (pending.has(s)) {
          low = s;
          break;
        }
      }
      if (low === 0) {
        low = Infinity;
        for (const s of pending.keys()) if (s < low) low = s;
      }
    }
    this.pendingLow = low;
  }

  /**
   * The ack floor after `sseq` / `dseq` left the pending set, as the reference's
   * processAckMsg moves it: to everything delivered once nothing is pending, else only
   * when the ack was the floor's next consumer sequence, up to below the next pending one.
   */
  private updateAckFloor(sseq: number, dseq: number): void {
    // The fields are written at one place whatever the case: nothing pending comes now
    // and then in a run of acks, and a field first written there would cost V8's
    // optimised ack path a deopt and a recompile.
    let adflr = this.adflr;
    let asflr = this.asflr;
    if (this.pending.size === 0) {
      adflr = this.dseq - 1;
      asflr = this.sseq - 1;
    } else if (dseq === adflr + 1) {
      adflr = dseq;
      asflr = sseq;
      // Every pending sequence is at or above the lowest: above sseq, the lowest is next.
      let next = this.pendingLow > sseq ? this.pendingLow : 0;
      for (let ss = sseq + 1; next === 0 && ss < this.sseq; ss++)
        if (this.pending.has(ss)) next = ss;
      if (next > 0) {
        adflr = this.pending.get(next)!.dseq - 1;
        asflr = next - 1;
      }
    }
    this.adflr = adflr;
    this.asflr = asflr;
  }

  private nak(sseq: number, dseq: number, args: string): void {
    if (dseq <= this.adflr || dseq > this.dseq) return;
    const p = this.pending.get(sseq);
    if (p === undefined) return;
    this.host.advisory(`$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.${this.stream.name}.${this.name}`, {
      type: 'io.nats.jetstream.advisory.v1.nak',
      stream: this.stream.name,
      consumer: this.name,
      consumer_seq: dseq,
      stream_seq: sseq,
      deliveries: p.dc,
    });
    // A delay: `{"delay": <ns>}` or a Go duration (`-NAK 1s`); a bad one is a plain -NAK.
    let delayNs = -1;
    if (args.startsWith('{')) {
      try {
        const o = JSON.parse(args) as { delay?: unknown };
        delayNs = typeof o.delay === 'number' && Number.isInteger(o.delay) ? o.delay : 0;
      } catch {
        delayNs = -1;
      }
    } else if (args !== '') {
      try {
        delayNs = Math.round(parseGoDuration(args) * MS);
      } catch {
        delayNs = -1;
      }
    }
    if (delayNs >= 0) {
      // Redelivered when its ack_wait would end `delay` from now.
      const i = this.rdq.indexOf(sseq);
      if (i >= 0) this.rdq.splice(i, 1);
      p.ts = nowNs() + delayNs - this.ackWaitFor(p.dc);
      if (this.ackTimer !== null) clearTimeout(this.ackTimer);
      this.ackTimer = null;
      this.armAckTimer();
      return;
    }
    if (!this.rdq.includes(sseq)) this.rdq.push(sseq);
  }

  private progress(sseq: number): void {
    const p = this.pending.get(sseq);
    if (p !== undefined) p.ts = nowNs();
  }

  private term(sseq: number, dseq: number): void {
    const p = this.pending.get(sseq);
    if (p === undefined) return;
    this.dropPending(sseq);
    this.rdc.delete(sseq);
    this.store.updateAcks(p.dseq, sseq);
    this.updateAckFloor(sseq, dseq);
    this.host.advisory(
      `$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.${this.stream.name}.${this.name}`,
      {
        type: 'io.nats.jetstream.advisory.v1.terminated',
        stream: this.stream.name,
        consumer: this.name,
        consumer_seq: dseq,
        stream_seq: sseq,
        deliveries: p.dc,
      },
    );
    this.stream.ackedBy(sseq, p.subject);
  }

  private deliveryExceeded(seq: number, deliveries: number): void {
    this.host.advisory(
      `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${this.stream.name}.${this.name}`,
      {
        type: 'io.nats.jetstream.advisory.v1.max_deliver',
        stream: this.stream.name,
        consumer: this.name,
        stream_seq: seq,
        deliveries,
      },
    );
  }

  private ackWaitFor(dc: number): number {
    const bo = this.cfg.backoff;
    if (bo.length > 0) return bo[Math.min(dc - 1, bo.length - 1)]!;
    return this.cfg.ackWait;
  }

  private armAckTimer(): void {
    if (this.ackTimer !== null || this.closed || this.pending.size === 0) return;
    let next = Infinity;
    for (const p of this.pending.values()) next = Math.min(next, p.ts + this.ackWaitFor(p.dc));
    // Only messages past max_deliver (ts Infinity) are pending: nothing to wait for.
    if (next === Infinity) return;
    const ms = Math.max(1, Math.ceil((next - nowNs()) / MS));
    this.ackTimer = setTimeout(this.onAckTimer, ms);
    this.ackTimer.unref();
  }

  private readonly onAckTimer = (): void => {
    this.ackTimer = null;
    if (this.closed) return;
    const now = nowNs();
    const due: number[] = [];
    for (const [seq, p] of this.pending) {
      if (p.ts + this.ackWaitFor(p.dc) <= now && !this.rdq.includes(seq)) due.push(seq);
    }
    due.sort((a, b) => a - b);
    for (const seq of due) {
      // Queued for redelivery; its wait starts again now (as the reference's checkPending
      // moves the timestamps), or the timer would come back at once until it goes out.
      this.pending.get(seq)!.ts = now;
      this.rdq.push(seq);
    }
    this.kick();
    this.armAckTimer();
  };

  // ---- heartbeats, inactivity ------------------------------------------------------

  private heartbeatHeader(): Buffer {
    return statusHeader(
      '100 Idle Heartbeat',
      `Nats-Last-Consumer: ${this.dseq - 1}\r\nNats-Last-Stream: ${this.sseq - 1}\r\n`,
    );
  }

  private armHeartbeat(): void {
    const ms = Math.max(1, Math.round(this.cfg.heartbeat / MS));
    this.activeSinceBeat = false;
    this.hbTimer = setInterval(() => {
      if (this.closed) return;
      if (this.activeSinceBeat) {
        this.activeSinceBeat = false;
        return;
      }
      let hdr = this.heartbeatHeader();
      if (this.fcReply !== '') {
        const t = hdr.toString('latin1');
        hdr = Buffer.from(
          t.substring(0, t.length - 2) + `Nats-Consumer-Stalled: ${this.fcReply}\r\n\r\n`,
          'latin1',
        );
      }
      this.host.publish(this.cfg.deliverSubject, null, hdr, EMPTY);
    }, ms);
    this.hbTimer.unref();
  }

  /** A flow control reply arrived (the client answered `$JS.FC...`). */
  flowControlReply(subject: string): void {
    if (subject === this.fcReply) {
      this.fcWindow = Math.min(this.fcWindow * 2, FLOW_CONTROL_LIMIT);
      this.fcPending = Math.max(0, this.fcPending - this.fcCovered);
      this.fcReply = '';
      this.fcCovered = 0;
      this.kick();
    }
  }

  private touch(): void {
    this.activeSinceBeat = true;
    this.activeSinceArmed = true;
    if (this.durable && this.cfg.inactiveThreshold === 0) return;
    if (this.inactiveTimer !== null) return;
    this.armInactive();
  }

  /**
   * The inactivity wait, as the reference's dthresh: inactive_threshold, for a pull
   * consumer plus 100 ms and up to 900 ms of jitter.
   */
  private inactiveWaitMs(): number {
    const ms = this.cfg.inactiveThreshold / MS;
    return this.isPush ? ms : ms + 100 + Math.floor(Math.random() * 900);
  }

  private armInactive(ms = this.inactiveWaitMs()): void {
    this.activeSinceArmed = false;
    this.inactiveTimer = setTimeout(this.onInactiveTimer, Math.max(1, Math.round(ms)));
    this.inactiveTimer.unref();
  }

  /**
   * The reference's deleteNotActive: a push consumer goes once nobody listens on its
   * deliver subject; a pull consumer once nothing happened (a request, a delivery, an
   * ack) for the threshold and no request waits. Activity is a flag, not a clock
   * reading per ack: a consumer left idle goes between one and two waits after its
   * last activity (the reference: one wait after it).
   */
  private readonly onInactiveTimer = (): void => {
    this.inactiveTimer = null;
    if (this.closed) return;
    if (this.activeSinceArmed) return this.armInactive();
    if (this.isPush) {
      if (this.host.hasDeliveryInterest(this.cfg.deliverSubject, this.cfg.deliverGroup))
        this.armInactive();
      else this.onInactive(this);
      return;
    }
    this.expireRequests();
    if (this.waiting.size > 0) this.armInactive();
    else this.onInactive(this);
  };

  // ---- info and lifecycle ----------------------------------------------------------

  infoJson(): Record<string, unknown> {
    this.expireRequests();
    return {
      stream_name: this.stream.name,
      name: this.name,
      created: rfc3339Nano(this.created),
      config: consumerConfigJson(this.cfg),
      delivered: sequenceInfo(
        this.dseq - 1,
        this.lpsAt >= 0 ? this.lpsAt : this.sseq - 1,
        this.lastDelivered,
      ),
      ack_floor: sequenceInfo(
        this.adflr,
        this.asflr,
        this.cfg.ackPolicy === 'none' ? 0 : this.lastAcked,
      ),
      num_ack_pending: this.pending.size,
      num_redelivered: this.rdc.size,
      num_waiting: this.waiting.size,
      num_pending: this.npc,
      ...(this.isPush &&
      this.host.hasDeliveryInterest(this.cfg.deliverSubject, this.cfg.deliverGroup)
        ? { push_bound: true }
        : {}),
    };
  }

  stop(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.halt();
    return this.store.stop();
  }

  /** Stops every timer and the ack subscription; the store is the caller's to close. */
  private halt(): void {
    this.closed = true;
    if (this.resumeSoon !== null) clearImmediate(this.resumeSoon);
    for (const t of [
      this.resumeLater,
      this.ackTimer,
      this.pullTimer,
      this.inactiveTimer,
      this.interestTimer,
      this.replayTimer,
    ])
      if (t !== null) clearTimeout(t);
    if (this.hbTimer !== null) clearInterval(this.hbTimer);
    if (this.ackSub !== null) this.host.unsubscribe(this.ackSub);
    this.host.cancelInterestWait(this);
  }

  /**
   * Deleted through the API: waiting pull requests learn it with a 409. The state is
   * not written first: the store removes it, and a write racing the removal could
   * leave a deleted consumer's directory behind.
   */
  async delete(): Promise<void> {
    for (const r of this.waiting.live().splice(0))
      this.host.publish(r.reply, null, statusHeader('409 Consumer Deleted'), EMPTY);
    if (!this.closed) this.halt();
    await this.store.delete();
  }
}

/** The reference's JsFlowControlMaxPending: the flow control window's largest size. */
const FLOW_CONTROL_LIMIT = 32 * 1024 * 1024;
/** How far up from an acknowledged lowest sequence the next one is looked for, one by one. */
const LOW_SCAN = 64;
/**
 * A burst: what one turn of the event loop delivers at most for one consumer. Large
 * enough that its per-turn costs (a socket write, a timer) spread thin, small enough
 * that the receiver starts reading early and that other work is not held up long.
 */
const BURST_MSGS = 512;
const BURST_BYTES = 256 * 1024;
/**
 * The first burst after a pause (nothing delivered for PAUSE_NS: a consumer's first
 * delivery, a pull request to a consumer left idle) stops at 4 KB of messages, and the
 * next one follows at the next turn: those first messages go to the socket at once and
 * the receiver, waiting, starts on them while the rest are laid out. A fresh server
 * builds its first bursts in V8's interpreter, several times slower than a client reads
 * them, and a pull request's first message came 4-15 ms after the request (nats-server's:
 * about 1 ms) when a burst of 512 went out in one write at its end. Only after a pause:
 * bursts cut short (or written in pieces) while a consumer streams cost more, smaller
 * writes, each waking a reader that then preempts the server on a busy machine (a push
 * consumer to a subscriber that keeps up: 15% more server CPU per message).
 */
const FIRST_BURST_BYTES = 4 * 1024;
const PAUSE_NS = 100 * MS;
/** How long a consumer whose receiver is behind waits before it looks again (ms). */
const BACKLOG_WAIT_MS = 1;
const INTEREST_RETRY_MS = 250;
const INTEREST_RETRY_MAX_MS = 8000;

function sequenceInfo(consumer: number, stream: number, last: number): Record<string, unknown> {
  const o: Record<string, unknown> = { consumer_seq: consumer, stream_seq: stream };
  if (last > 0) o.last_active = rfc3339Nano(last);
  return o;
}

/** Decimal digits of a non-negative integer. */
function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

function pendingBytes(req: PullRequest): number {
  return req.bytesLeft === Infinity ? 0 : req.bytesLeft;
}

function randomToken(): string {
  return Math.random().toString(36).substring(2, 10);
}

/** The JSON fields of the reference's JSApiConsumerGetNextRequest and their Go types. */
const NEXT_REQUEST_FIELDS: Readonly<Record<string, GoFieldType>> = {
  expires: 'time.Duration',
  batch: 'int',
  max_bytes: 'int',
  no_wait: 'bool',
  idle_heartbeat: 'time.Duration',
};

interface NextRequest {
  batch: number;
  expiresNs: number;
  maxBytes: number;
  noWait: boolean;
  hbNs: number;
}

/** The reference's nextReqFromMsg: empty, a number, or JSON; a string is an error text. */
function parseNextRequest(body: Buffer): NextRequest | string {
  const text = body.toString('utf8').trim();
  const r: NextRequest = { batch: 1, expiresNs: 0, maxBytes: 0, noWait: false, hbNs: 0 };
  if (text === '') return r;
  if (text.startsWith('{')) {
    // Go's json.Unmarshal into JSApiConsumerGetNextRequest, with its error texts.
    const members = goJsonCheck(Buffer.from(text, 'utf8'));
    if (typeof members === 'string') return members;
    const typeError = goTypeError(members, 'JSApiConsumerGetNextRequest', NEXT_REQUEST_FIELDS);
    if (typeError !== null) return typeError;
    const v: Record<string, unknown> = {};
    for (const m of members) {
      const name = goField(NEXT_REQUEST_FIELDS, m.key);
      // null leaves a field as it was, as in Go.
      if (name !== undefined && m.raw !== 'null') v[name] = JSON.parse(m.raw);
    }
    const int = (x: unknown): number => (typeof x === 'number' ? x : 0);
    const batch = int(v.batch);
    const expires = int(v.expires);
    const maxBytes = int(v.max_bytes);
    const hb = int(v.idle_heartbeat);
    if (hb > 0 && hb * 2 > expires) return 'heartbeat value too large';
    r.batch = batch;
    r.expiresNs = expires;
    r.maxBytes = maxBytes;
    r.noWait = v.no_wait === true;
    r.hbNs = hb;
    return r;
  }
  if (/^[+-]?\d+$/.test(text)) r.batch = Number(text);
  return r;
}

/** A Go time.Duration's String(), for the MaxRequestExpires status. */
function goDuration(ns: number): string {
  if (ns % 1e9 === 0) {
    const s = ns / 1e9;
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = s % 60;
    return (h > 0 ? `${h}h` : '') + (h > 0 || m > 0 ? `${m}m` : '') + `${sec}s`;
  }
  if (ns < 1e9 && ns % 1e6 === 0) return `${ns / 1e6}ms`;
  return `${ns / 1e9}s`;
}
