// JetStream in one account: its streams, its internal client (which holds the streams'
// subscriptions and publishes acks, deliveries and API responses), its limits and usage,
// and the `$JS.API.>` subscription that hands requests to the API router.

import { awaitsResponse } from '../auth/accounts.js';
import type { Account } from '../server/account.js';
import type { Client } from '../server/client.js';
import type { PublishedMessage } from '../server/message.js';
import type { Subscription } from '../server/subscription.js';
import { AckTap } from './ack-tap.js';
import { dispatchApi } from './api/router.js';
import { recoverStreams } from './recover.js';
import { attachTemplateStreams, recoverTemplates, type StreamTemplate } from './templates.js';
import type { ApiBody } from './api/response.js';
import type { JetStream } from './jetstream.js';
import type { JsAccountLimits } from './options.js';
import type { Stream, StreamHost } from './stream.js';
import type { MaxBytesRule } from './stream-config.js';
import type { StorageType, StreamStoreProvider } from './storage/types.js';
import { goJson } from './json.js';
import { openProvider } from './storage/open.js';
import { nowNs, rfc3339Nano } from './time.js';
import { nuid } from '../protocol/nuid.js';

const AUDIT_SUBJECT = '$JS.EVENT.ADVISORY.API';
/**
 * A consumer with more to send waits while its receiver has this much output not yet
 * taken by the kernel: enough to keep a reader busy for milliseconds, and a burst of
 * deliveries never piles up to max_pending.
 */
const BACKLOG_LIMIT = 1024 * 1024;

/** A push consumer that starts delivering once its deliver subject has a subscriber. */
export interface InterestWaiter {
  readonly deliverSubject: string;
  interestAppeared(): void;
}

export class JsAccount implements StreamHost {
  readonly client: Client;
  readonly streams = new Map<string, Stream>();
  readonly templates = new Map<string, StreamTemplate>();
  memoryUsed = 0;
  storeUsed = 0;
  apiTotal = 0;
  apiErrors = 0;
  private apiSub: Subscription | null = null;
  /** `$JS.<domain>.API.>`, the same API under the domain's prefix. */
  private domainSub: Subscription | null = null;
  /** The account's acks taken from the publishers' bytes (ack-tap.ts). */
  private ackTap: AckTap | null = null;
  /** Push consumers waiting for a subscriber on their deliver subject. */
  readonly awaiting = new Set<InterestWaiter>();
  private readonly providers = new Map<StorageType, StreamStoreProvider>();

  constructor(
    readonly js: JetStream,
    readonly account: Account,
    public limits: JsAccountLimits,
    /** False for an account that only answers "JetStream not enabled for account". */
    readonly enabled = true,
  ) {
    this.client = js.server.createInternalClient('jetstream', account);
  }

  get domain(): string {
    return this.js.options.domain;
  }

  get accountName(): string {
    return this.account.name;
  }

  start(): void {
    if (this.enabled) {
      recoverTemplates(this);
      recoverStreams(this);
      attachTemplateStreams(this);
    }
    if (this.enabled) {
      this.ackTap = new AckTap(this.client, this.streams);
      this.account.addTap(this.ackTap);
    }
    this.apiSub = this.js.server.subscribeInternal(
      this.client,
      '$JS.API.>',
      null,
      (subject, reply, hdr, data) => {
        dispatchApi(this, subject, reply, hdr, data);
      },
    );
    const domain = this.js.options.domain;
    if (domain !== '') {
      const prefix = `$JS.${domain}.API.`;
      this.domainSub = this.js.server.subscribeInternal(
        this.client,
        prefix + '>',
        null,
        (subject, reply, hdr, data) => {
          dispatchApi(this, '$JS.API.' + subject.substring(prefix.length), reply, hdr, data);
        },
      );
    }
  }

  provider(storage: StorageType): StreamStoreProvider {
    let p = this.providers.get(storage);
    if (p === undefined) {
      p = openProvider(storage, this.js.files, this.account.name);
      this.providers.set(storage, p);
    }
    return p;
  }

  // ---- StreamHost ---------------------------------------------------------------

  publish(subject: string, reply: string | null, hdr: Buffer | null, data: Buffer): number {
    return this.js.server.publishInternal(this.client, subject, reply, data, hdr);
  }

  /** A request's answer (StreamHost.reply): its reply subject's match is not cached. */
  reply(subject: string, hdr: Buffer | null, data: Buffer): number {
    return this.js.server.publishInternal(this.client, subject, null, data, hdr, true);
  }

  /**
   * reply() of a message laid out by its sender in `buf[start, end)`, the first `hdrLen`
   * bytes its header block (0: none): no view and no concatenation is made of it.
   */
  replyRange(subject: string, buf: Buffer, start: number, hdrLen: number, end: number): number {
    const server = this.js.server;
    return server.publishInternalRange(this.client, subject, null, buf, start, end, hdrLen, true);
  }

  deliver(subject: string, m: PublishedMessage): number {
    return this.js.server.routeInternal(this.client, subject, m);
  }

  backlog(subject: string): number {
    return this.js.server.subjectBacklog(this.account, subject);
  }

  get backlogLimit(): number {
    // Well below max_pending, where the core cuts a subscriber off as a slow consumer.
    return Math.min(BACKLOG_LIMIT, this.js.server.options.maxPending >>> 2);
  }

  subscribe(
    subject: string,
    handler: (subject: string, reply: string | null, hdr: Buffer | null, data: Buffer) => void,
    borrows = false,
  ): Subscription {
    return this.js.server.subscribeInternal(this.client, subject, null, handler, borrows);
  }

  unsubscribe(sub: Subscription): void {
    this.client.removeSubscription(sub);
  }

  /**
   * Whether anyone listens on `subject`. A reply that leads back through a service
   * import (`_R_.`, a pull request made from another account) counts while its way back
   * lasts: the reference's exporter listens on those subjects itself.
   */
  hasInterest(subject: string): boolean {
    const r = this.account.sublist.match(subject);
    if (r.psubs.length > 0 || r.qsubs.length > 0) return true;
    return subject.startsWith('_R_.') && awaitsResponse(this.account, subject);
  }

  /**
   * Whether a push consumer's deliver subject has a listener, as the reference's
   * registerNotification decides it: a subscription on exactly that subject (with the
   * deliver group as its queue when there is one). A wildcard subscription that happens
   * to match (a `>` tap, a muxed inbox) neither binds the consumer nor takes its messages.
   */
  hasDeliveryInterest(subject: string, group: string): boolean {
    const r = this.account.sublist.match(subject);
    if (group === '') {
      for (const sub of r.psubs) if (sub.subject === subject) return true;
      return false;
    }
    for (const members of r.qsubs) {
      const first = members[0];
      if (first !== undefined && first.subject === subject && first.queue === group) return true;
    }
    return false;
  }

  awaitInterest(w: InterestWaiter): void {
    this.awaiting.add(w);
  }

  cancelInterestWait(w: InterestWaiter): void {
    this.awaiting.delete(w);
  }

  /** A subscription on `subject` came: wakes the consumers it delivers to. */
  interestAppeared(subject: string): void {
    for (const w of [...this.awaiting]) {
      if (w.deliverSubject === subject) {
        this.awaiting.delete(w);
        w.interestAppeared();
      }
    }
  }

  advisory(subject: string, body: Record<string, unknown>): void {
    if (!this.hasInterest(subject)) return;
    const o: Record<string, unknown> = {
      type: body.type,
      id: nuid.next(),
      timestamp: rfc3339Nano(nowNs()),
    };
    for (const k of Object.keys(body)) if (k !== 'type') o[k] = body[k];
    // Every advisory and metric of the reference ends with its domain (omitempty).
    if (this.domain !== '') o.domain = this.domain;
    this.publish(subject, null, null, Buffer.from(goJson(o)));
  }

  holdOutput(): boolean {
    return this.js.server.holdFlush();
  }

  releaseOutput(held: boolean): void {
    this.js.server.releaseFlush(held);
  }

  /** A line of the server's log at its info level, as the reference's Noticef. */
  notice(text: string): void {
    this.js.server.logger.info(text);
  }

  warn(text: string): void {
    this.js.server.logger.warn(`JetStream: ${text}`);
  }

  /** The account's rule on a stream's max_bytes for `storage`. */
  maxBytesRule(storage: StorageType): MaxBytesRule {
    const l = this.limits;
    const limit = storage === 'memory' ? l.memoryMaxStreamBytes : l.storeMaxStreamBytes;
    return { required: l.maxBytesRequired, limit };
  }

  limitsExceeded(storage: 'memory' | 'file', size: number): boolean {
    const l = this.limits;
    // As the reference, the per-stream byte limits also bound the account's whole usage.
    if (storage === 'memory') {
      const m = l.memoryMaxStreamBytes;
      if (m > 0 && this.memoryUsed + size > m) return true;
      if (l.maxMemory >= 0 && this.memoryUsed + size > l.maxMemory) return true;
      return this.js.memoryUsed() + size > this.js.maxMemory;
    }
    if (l.storeMaxStreamBytes > 0 && this.storeUsed + size > l.storeMaxStreamBytes) return true;
    if (l.maxStore >= 0 && this.storeUsed + size > l.maxStore) return true;
    return this.js.storeUsed() + size > this.js.maxStore;
  }

  storageDelta(storage: StorageType, bytes: number): void {
    if (storage === 'memory') this.memoryUsed += bytes;
    else this.storeUsed += bytes;
  }

  consumerCount(): number {
    let n = 0;
    for (const s of this.streams.values()) n += s.consumers.size;
    return n;
  }

  /**
   * Sends an API response; counts it for $JS.API.INFO and /jsz (and as an error when it
   * carries one and `countError` holds), as the reference's trackAPI / trackAPIErr.
   */
  respond(reply: string | null, body: ApiBody, countError = true, count = true): string {
    if (count) {
      this.apiTotal++;
      this.js.apiTotal++;
      if (countError && body.error !== undefined) {
        this.apiErrors++;
        this.js.apiErrors++;
      }
    }
    const text = goJson(body);
    if (reply !== null && reply !== '') this.reply(reply, null, Buffer.from(text));
    return text;
  }

  /**
   * `$JS.EVENT.ADVISORY.API`: each API request and its response, for whoever listens
   * (nothing is built when nobody does). The requester's client details are not known
   * to an in-process subscriber: only its account is given.
   */
  audit(subject: string, request: Buffer, response: string): void {
    if (!this.hasInterest(AUDIT_SUBJECT)) return;
    const server = this.js.server.name;
    const body: Record<string, unknown> = {
      type: 'io.nats.jetstream.advisory.v1.api_audit',
      server,
      client: { acc: this.account.name, server },
      subject,
    };
    if (request.length > 0) body.request = request.toString('utf8');
    body.response = response;
    this.advisory(AUDIT_SUBJECT, body);
  }

  async stop(): Promise<void> {
    if (this.ackTap !== null) this.account.removeTap(this.ackTap);
    this.ackTap = null;
    if (this.apiSub !== null) this.client.removeSubscription(this.apiSub);
    if (this.domainSub !== null) this.client.removeSubscription(this.domainSub);
    this.apiSub = null;
    this.domainSub = null;
    for (const t of this.templates.values()) t.unsubscribe();
    this.templates.clear();
    for (const s of this.streams.values()) {
      await s.stop();
      await s.store.stop();
    }
  }
}
