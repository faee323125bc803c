// One stream: its configuration, its store, the subscription on its subjects, and the
// path of every published message into it (nats-server's processJetStreamMsg): the
// Expected-* headers, duplicate detection, roll-ups, limits, the PubAck once the message
// is durable, republish, and the wake-up of its consumers.

import type { PublishedMessage } from '../server/message.js';
import type { Subscription } from '../server/subscription.js';
import { subjectMatches } from '../subjects/validate.js';
import { JsErr, type ApiError } from './errors.js';
import { headerNeedle, headerValueAt, setHeader } from './headers.js';
import { goJson } from './json.js';
import { PubAckWriter } from './pub-ack.js';
import { storeConfigOf, streamConfigJson, type StreamConfig } from './stream-config.js';
import { SubjectTransform } from '../subjects/transform.js';
import {
  EMPTIED_FIRST_TS,
  StoreError,
  type StreamState,
  type StreamStore,
} from './storage/types.js';
import { nowNs, rfc3339Nano } from './time.js';

/** What a stream needs of its account's JetStream: publishing and subscribing in-process. */
export interface StreamHost {
  readonly accountName: string;
  /** The JetStream domain ('' for none): PubAcks name it. */
  readonly domain: string;
  publish(subject: string, reply: string | null, hdr: Buffer | null, data: Buffer): number;
  /**
   * Routes a message laid out by its sender (a consumer's delivery, DeliveryMessage) to
   * the subscribers of `subject`; returns how many received it.
   */
  deliver(subject: string, m: PublishedMessage): number;
  /**
   * publish() of the answer to a request (a PubAck, an API response) to its reply
   * subject, which is unlikely to come again: its match is not cached.
   */
  reply(subject: string, hdr: Buffer | null, data: Buffer): number;
  /** reply() of `buf[start, end)`, its first `hdrLen` bytes a header block: no view made. */
  replyRange(subject: string, buf: Buffer, start: number, hdrLen: number, end: number): number;
  /**
   * Bytes waiting to be written to the busiest connection listening on `subject`: a
   * consumer delivering a backlog waits while its receiver is behind.
   */
  backlog(subject: string): number;
  /** The backlog a consumer lets build up before it waits. */
  readonly backlogLimit: number;
  /**
   * With `borrows`, the handler keeps nothing of `hdr` and `data` after it returns (they
   * may be views of the connection's read buffer: no copy is made for it).
   */
  subscribe(
    subject: string,
    handler: (subject: string, reply: string | null, hdr: Buffer | null, data: Buffer) => void,
    borrows?: boolean,
  ): Subscription;
  unsubscribe(sub: Subscription): void;
  /** Whether anyone in the account listens on `subject` (pull requests' replies). */
  hasInterest(subject: string): boolean;
  /**
   * A push consumer's interest, as the reference's: a subscription on the deliver
   * subject itself, in the deliver group's queue when there is one.
   */
  hasDeliveryInterest(subject: string, group: string): boolean;
  /** Calls `w.interestAppeared()` once a subscription on its deliver subject comes. */
  awaitInterest(w: { readonly deliverSubject: string; interestAppeared(): void }): void;
  cancelInterestWait(w: { readonly deliverSubject: string; interestAppeared(): void }): void;
  advisory(subject: string, body: Record<string, unknown>): void;
  /**
   * For PubAcks sent from a durability callback: their output is written at
   * releaseOutput() (as at the end of a read), not in a turn of its own. holdOutput()
   * returns what releaseOutput() takes back.
   */
  holdOutput(): boolean;
  releaseOutput(held: boolean): void;
  warn(text: string): void;
  /** Account-wide limits on stored bytes; true when one more message would pass them. */
  limitsExceeded(storage: 'memory' | 'file', size: number): boolean;
  /** Stored bytes changed by `bytes` (account usage). */
  storageDelta(storage: 'memory' | 'file', bytes: number): void;
}

/** What the stream needs of each of its consumers. */
export interface StreamConsumer {
  readonly name: string;
  readonly filter: string;
  /** A message was stored at `seq`. */
  signal(seq: number, subject: string): void;
  /** Messages were removed under the consumer (purge, limits): pending counts change. */
  streamPurged(firstSeq: number): void;
  /** For interest and work-queue retention: does this consumer still need `seq`? */
  needsAck(seq: number, subject: string): boolean;
  stop(): Promise<void>;
}

interface Dedupe {
  seq: number;
  ts: number;
}

/** The headers the publish path reads (their case is exact, as the reference's). */
const MSG_ID = headerNeedle('Nats-Msg-Id');
const EXPECTED_STREAM = headerNeedle('Nats-Expected-Stream');
const EXPECTED_LAST_SUBJECT_SEQ = headerNeedle('Nats-Expected-Last-Subject-Sequence');
const EXPECTED_LAST_SEQ = headerNeedle('Nats-Expected-Last-Sequence');
const EXPECTED_LAST_MSG_ID = headerNeedle('Nats-Expected-Last-Msg-Id');
const ROLLUP = headerNeedle('Nats-Rollup');
/** Every header the publish path reads starts so (their case is exact, as the reference's). */
const NATS_HEADERS = Buffer.from('\r\nNats-');
/**
 * `NATS/1.0` and that needle: a block no longer (the empty one nats v2's js.publish
 * sends with every publish, a KV put's) holds no header the publish path reads.
 */
const SHORTEST_WITH_NATS = 8 + NATS_HEADERS.length;
const MAX_HEADER = 65535;

export class Stream {
  cfg: StreamConfig;
  readonly store: StreamStore;
  readonly created: number;
  readonly consumers = new Map<string, StreamConsumer>();
  private subs: Subscription[] = [];
  /** The PubAck bodies, `{"stream":"NAME", "seq":N}` as the reference writes them. */
  private readonly pubAcks: PubAckWriter;
  private lastSeq: number;
  private lastMsgId = '';
  private readonly dedupe = new Map<string, Dedupe>();
  private readonly dedupeOrder: string[] = [];
  private dedupeHead = 0;
  /**
   * Acks waiting for the store's durability: reply subjects, their sequences and the
   * store's appendMark() once each was stored.
   */
  private readonly ackReplies: string[] = [];
  private readonly ackSeqs: number[] = [];
  private readonly ackMarks: number[] = [];
  /** An onDurable callback is due (acksDurable). */
  private durableWait = false;
  /** The republish mapping (an update can not change it). */
  private readonly republishTo: SubjectTransform | null;
  closed = false;

  constructor(
    private readonly host: StreamHost,
    cfg: StreamConfig,
    store: StreamStore,
    created: number,
  ) {
    this.cfg = cfg;
    this.store = store;
    this.created = created;
    this.pubAcks = new PubAckWriter(cfg.name, host.domain);
    this.lastSeq = store.state().lastSeq;
    this.republishTo =
      cfg.republish === null
        ? null
        : SubjectTransform.create(cfg.republish.src, cfg.republish.dest);
    store.registerStorageUpdates(this.onStorageUpdate);
  }

  get name(): string {
    return this.cfg.name;
  }

  /** Subscribes to the stream's subjects: from now on published messages are stored. */
  start(): void {
    for (const subject of this.cfg.subjects) {
      // Stores copy what they keep (into a file's write buffer, a memory store's slab):
      // they read the publisher's bytes in place, with no copy made for them before.
      this.subs.push(this.host.subscribe(subject, this.onMessage, true));
    }
  }

  private readonly onMessage = (
    subject: string,
    reply: string | null,
    hdr: Buffer | null,
    data: Buffer,
  ): void => {
    this.processMsg(subject, reply, hdr, data);
  };

  /**
   * A published message (nats-server's processJetStreamMsg). `hdr` and `data` are
   * borrowed (see start()): nothing here may keep them past the call.
   */
  processMsg(subject: string, reply: string | null, hdr: Buffer | null, data: Buffer): void {
    if (this.closed) return;
    const cfg = this.cfg;
    const canRespond = !cfg.noAck && reply !== null && reply !== '';
    if (cfg.sealed) {
      // The reference answers this one even on a no_ack stream.
      if (reply !== null && reply !== '') this.respondError(reply, JsErr.streamSealed());
      return;
    }
    let msgId = '';
    let rollup = '';
    // The header block becomes a string once, and only when it holds a header read here.
    if (hdr !== null && hdr.length > SHORTEST_WITH_NATS && hdr.indexOf(NATS_HEADERS) >= 0) {
      const hdrText = hdr.toString('latin1');
      const expectedStream = headerValueAt(hdrText, EXPECTED_STREAM);
      if (expectedStream !== '' && expectedStream !== cfg.name) {
        if (canRespond) this.respondError(reply, JsErr.streamNotMatch());
        return;
      }
      msgId = headerValueAt(hdrText, MSG_ID);
      if (msgId !== '') {
        const dde = this.checkMsgId(msgId);
        if (dde !== undefined) {
          if (canRespond) this.host.reply(reply, null, this.pubAcks.duplicate(dde.seq));
          return;
        }
      }
      const lssText = headerValueAt(hdrText, EXPECTED_LAST_SUBJECT_SEQ);
      if (lssText !== '') {
        const expected = parseSeq(lssText);
        const last = this.store.loadLastMsg(subject);
        const fseq = last === undefined ? 0 : last.seq;
        if (expected === null || fseq !== expected) {
          if (canRespond) this.respondError(reply, JsErr.streamWrongLastSequence(fseq));
          return;
        }
      }
      const lsText = headerValueAt(hdrText, EXPECTED_LAST_SEQ);
      if (lsText !== '') {
        const expected = parseSeq(lsText);
        if (expected === null || expected !== this.lastSeq) {
          if (canRespond) this.respondError(reply, JsErr.streamWrongLastSequence(this.lastSeq));
          return;
        }
      }
      const lastId = headerValueAt(hdrText, EXPECTED_LAST_MSG_ID);
      if (lastId !== '' && lastId !== this.lastMsgId) {
        if (canRespond) this.respondError(reply, JsErr.streamWrongLastMsgId(this.lastMsgId));
        return;
      }
      rollup = headerValueAt(hdrText, ROLLUP);
      if (rollup !== '') {
        if (!cfg.allowRollup || cfg.denyPurge) {
          if (canRespond)
            this.respondError(reply, JsErr.streamRollupFailed('rollup not permitted'));
          return;
        }
        // nats-server 2.9 drops a message with another value and sends no reply.
        if (rollup !== 'sub' && rollup !== 'all') return;
      }
    }
    const hdrLen = hdr === null ? 0 : hdr.length;
    if (cfg.maxMsgSize >= 0 && hdrLen + data.length > cfg.maxMsgSize) {
      if (canRespond) this.respondError(reply, JsErr.streamMessageExceedsMaximum());
      return;
    }
    if (hdrLen > MAX_HEADER) {
      if (canRespond) this.respondError(reply, JsErr.streamHeaderExceedsMaximum());
      return;
    }
    if (this.host.limitsExceeded(cfg.storage, subject.length + hdrLen + data.length)) {
      if (canRespond) this.respondError(reply, JsErr.accountResourcesExceeded());
      return;
    }
    const ts = nowNs();
    if (cfg.retention === 'interest' && !this.hasInterestIn(subject)) {
      this.lastSeq = this.store.skipMsg();
      this.lastMsgId = msgId;
      if (msgId !== '') this.storeMsgId(msgId, this.lastSeq, ts);
      if (canRespond) this.queueAck(reply, this.lastSeq);
      return;
    }
    // Republish needs the subject's previous sequence before this one is stored.
    let rpSubject = '';
    let rpLast = 0;
    if (this.republishTo !== null) {
      rpSubject = this.republishTo.match(subject);
      if (rpSubject !== '') rpLast = this.store.loadLastMsg(subject)?.seq ?? 0;
    }
    let seq: number;
    try {
      seq = this.store.storeMsg(subject, hdr ?? EMPTY, data, ts);
    } catch (err) {
      if (canRespond) {
        const text = err instanceof StoreError ? err.message : String(err);
        this.respondError(reply, JsErr.streamStoreFailed(text));
      }
      if (!(err instanceof StoreError)) this.host.warn(`failed to store a message: ${String(err)}`);
      return;
    }
    this.lastSeq = seq;
    this.lastMsgId = msgId;
    if (msgId !== '') this.storeMsgId(msgId, seq, ts);
    if (rollup === 'sub') this.purgeEx(subject, 0, 1);
    else if (rollup === 'all') this.purgeEx('', 0, 1);
    if (rpSubject !== '') this.republish(rpSubject, subject, seq, rpLast, hdr, data);
    if (canRespond) this.queueAck(reply, seq);
    if (this.consumers.size > 0) {
      for (const c of this.consumers.values()) c.signal(seq, subject);
    }
  }

  private hasInterestIn(subject: string): boolean {
    for (const c of this.consumers.values()) {
      if (c.filter === '' || subjectMatchesFilter(subject, c.filter)) return true;
    }
    return false;
  }

  private republish(
    to: string,
    subject: string,
    seq: number,
    last: number,
    hdr: Buffer | null,
    data: Buffer,
  ): void {
    const rp = this.cfg.republish!;
    let h = hdr === null || hdr.length === 0 ? Buffer.from('NATS/1.0\r\n\r\n') : hdr;
    h = setHeader(h, 'Nats-Stream', this.cfg.name);
    h = setHeader(h, 'Nats-Subject', subject);
    h = setHeader(h, 'Nats-Sequence', String(seq));
    h = setHeader(h, 'Nats-Last-Sequence', String(last));
    if (rp.headersOnly) h = setHeader(h, 'Nats-Msg-Size', String(data.length));
    this.host.publish(to, null, h, rp.headersOnly ? EMPTY : data);
  }

  /**
   * A PubAck goes out once the store has made the message durable. The first ack of a
   * turn asks the store at once; the round that writes this turn's appends (after the
   * turn's other publishes) calls back with how far it reached, and every ack queued up
   * to there goes then, from the round itself.
   */
  private queueAck(reply: string, seq: number): void {
    // A memory store is durable once stored: the ack goes now, with no queue to fill.
    if (this.store.type === 'memory') {
      this.sendAck(reply, seq);
      return;
    }
    this.ackReplies.push(reply);
    this.ackSeqs.push(seq);
    this.ackMarks.push(this.store.appendMark());
    if (this.durableWait) return;
    this.durableWait = true;
    this.store.onDurable(this.acksDurable);
  }

  private readonly acksDurable = (err: Error | undefined, durable: number): void => {
    const replies = this.ackReplies;
    const seqs = this.ackSeqs;
    const marks = this.ackMarks;
    // A failed store fails every ack waiting: none of them can become durable.
    let n = replies.length;
    if (err === undefined) {
      n = 0;
      while (n < marks.length && marks[n]! <= durable) n++;
    }
    const failed =
      err === undefined
        ? null
        : Buffer.from(
            goJson({
              error: JsErr.streamStoreFailed(err.message),
              stream: this.cfg.name,
              seq: 0,
            }),
          );
    const held = this.host.holdOutput();
    try {
      for (let i = 0; i < n; i++) {
        if (failed === null) this.sendAck(replies[i]!, seqs[i]!);
        else this.host.reply(replies[i]!, null, failed);
      }
    } finally {
      this.host.releaseOutput(held);
    }
    // Messages stored while an `always` write was under way were not in it: they wait again.
    if (replies.length === n) {
      replies.length = 0;
      seqs.length = 0;
      marks.length = 0;
      this.durableWait = false;
    } else {
      replies.splice(0, n);
      seqs.splice(0, n);
      marks.splice(0, n);
      this.store.onDurable(this.acksDurable);
    }
  };

  /** The PubAck of `seq`, routed from the bytes the writer laid out. */
  private sendAck(reply: string, seq: number): void {
    const w = this.pubAcks;
    const end = w.ack(seq);
    this.host.replyRange(reply, w.arena, w.start, 0, end);
  }

  /** A failed publish: `{"error":{...},"stream":"S","seq":0}` as the reference's JSPubAckResponse. */
  private respondError(reply: string, error: ApiError): void {
    const body = goJson({ error, stream: this.cfg.name, seq: 0 });
    this.host.reply(reply, null, Buffer.from(body));
  }

  private checkMsgId(id: string): Dedupe | undefined {
    this.expireMsgIds();
    return this.dedupe.get(id);
  }

  private storeMsgId(id: string, seq: number, ts: number): void {
    if (this.cfg.duplicateWindow <= 0) return;
    this.dedupe.set(id, { seq, ts });
    this.dedupeOrder.push(id);
  }

  private expireMsgIds(): void {
    const order = this.dedupeOrder;
    if (order.length === this.dedupeHead) return;
    const cutoff = nowNs() - this.cfg.duplicateWindow;
    while (this.dedupeHead < order.length) {
      const id = order[this.dedupeHead]!;
      const d = this.dedupe.get(id);
      if (d !== undefined && d.ts > cutoff) break;
      if (d !== undefined) this.dedupe.delete(id);
      this.dedupeHead++;
    }
    if (this.dedupeHead > 1024 && this.dedupeHead * 2 > order.length) {
      order.splice(0, this.dedupeHead);
      this.dedupeHead = 0;
    }
  }

  private readonly onStorageUpdate = (msgsDelta: number, bytesDelta: number): void => {
    this.host.storageDelta(this.cfg.storage, bytesDelta);
    if (msgsDelta < 0 && this.consumers.size > 0) {
      const first = this.store.state().firstSeq;
      for (const c of this.consumers.values()) c.streamPurged(first);
    }
  };

  // ---- operations of the API -----------------------------------------------

  /** PURGE with its options; returns how many messages went. */
  purgeEx(subject: string, seq: number, keep: number): number {
    if (subject === '' && seq === 0 && keep === 0) return this.store.purge();
    return this.store.purgeEx(subject, seq, keep);
  }

  /** After an ack under interest or work-queue retention: removes what no consumer needs. */
  ackedBy(seq: number, subject: string): void {
    if (this.cfg.retention === 'limits') return;
    for (const c of this.consumers.values()) if (c.needsAck(seq, subject)) return;
    this.store.removeMsg(seq);
  }

  update(cfg: StreamConfig): void {
    const oldSubjects = this.cfg.subjects.join('\n');
    this.cfg = cfg;
    this.pubAcks.rename(cfg.name, this.host.domain);
    this.store.updateConfig(storeConfigOf(cfg));
    if (cfg.subjects.join('\n') !== oldSubjects) {
      for (const sub of this.subs) this.host.unsubscribe(sub);
      this.subs = [];
      this.start();
    }
  }

  /** Stops taking messages (delete or shutdown). */
  async stop(): Promise<void> {
    this.closed = true;
    for (const sub of this.subs) this.host.unsubscribe(sub);
    this.subs = [];
    for (const c of this.consumers.values()) await c.stop();
  }

  // ---- what the API reports --------------------------------------------------

  stateJson(state: StreamState = this.store.state()): Record<string, unknown> {
    const o: Record<string, unknown> = {
      messages: state.msgs,
      bytes: state.bytes,
      first_seq: state.firstSeq,
      first_ts:
        state.firstTs === EMPTIED_FIRST_TS ? '1970-01-01T00:00:00Z' : rfc3339Nano(state.firstTs),
      last_seq: state.lastSeq,
      last_ts: rfc3339Nano(state.lastTs),
    };
    if (state.numSubjects > 0) o.num_subjects = state.numSubjects;
    return o;
  }

  /** StreamInfo: config, created, state (with the optional details of STREAM.INFO). */
  /**
   * The StreamInfo of the API. `withDomain`: the answers that name the JetStream domain
   * (INFO, LIST, UPDATE; the reference's CREATE and restore leave it out).
   */
  infoJson(
    opts: { deletedDetails?: boolean; subjectsFilter?: string; withDomain?: boolean } = {},
  ): Record<string, unknown> {
    const state = this.store.state(opts.deletedDetails === true);
    const st = this.stateJson(state);
    if (opts.subjectsFilter !== undefined && opts.subjectsFilter !== '') {
      const subjects = this.store.subjectsState(opts.subjectsFilter);
      if (subjects.size > 0) {
        const o: Record<string, number> = {};
        for (const [s, ss] of subjects) o[s] = ss.msgs;
        st.subjects = o;
      }
    }
    if (state.numDeleted > 0) st.num_deleted = state.numDeleted;
    if (state.deleted !== undefined && state.deleted.length > 0) st.deleted = state.deleted;
    st.consumer_count = this.consumers.size;
    const info: Record<string, unknown> = {
      config: streamConfigJson(this.cfg),
      created: rfc3339Nano(this.created),
      state: st,
    };
    if (opts.withDomain === true && this.host.domain !== '') info.domain = this.host.domain;
    return info;
  }
}

export const EMPTY = Buffer.alloc(0);

function parseSeq(text: string): number | null {
  if (!/^\d+$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

function subjectMatchesFilter(subject: string, filter: string): boolean {
  return filter === '>' || subjectMatches(subject, filter);
}
