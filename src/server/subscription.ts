// One subscription of a connection (or of an in-process subscriber).

import type { Account } from './account.js';
import type { Client } from './client.js';
import type { PublishedMessage } from './message.js';
import type { Latin1Memo } from './latin1-memo.js';
import type { PublishTap } from './publish-tap.js';

/** Receives messages for an in-process subscription (the streaming layer, system services). */
export type InternalHandler = (
  subject: string,
  reply: string | null,
  headers: Buffer | null,
  payload: Buffer,
) => void;

/**
 * Receives messages for an in-process subscription as `buf[start, end)`, keeping
 * nothing of `buf` after it returns (Server.subscribeInternalRange).
 */
export type RangeHandler = (
  subject: string,
  reply: string | null,
  buf: Buffer,
  start: number,
  end: number,
) => void;

/**
 * Decides at delivery whether a subscription may receive a message (src/auth:
 * subscribe deny rules under a wider wildcard, allow_responses bookkeeping).
 */
export interface DeliveryFilter {
  admit(subject: string, m: PublishedMessage): boolean;
}

/**
 * The far end of a route's subscription (src/cluster). A message that matches one is
 * not written at once: the route is marked, and after the whole match the message
 * goes to each marked route once, however many of its subscriptions matched. A
 * frame keeps the marks of one message apart from those of a message published
 * meanwhile (an in-process subscriber that publishes while receiving).
 */
export interface RouteSink {
  /** Begins collecting routes for one message; returns its frame. */
  open(): number;
  /** Marks the frame's message for this route; queue is the group it was chosen for. */
  mark(frame: number, queue: string | null): void;
  /** Sends the frame's message once to each route marked in it; returns how many. */
  send(frame: number, account: Account, subject: string, m: PublishedMessage): number;
}

/**
 * Where a subscription that stands for something else sends what it matches: a stream
 * import's stand-in for a subscription of the importing account, placed in the exporting
 * account's index (src/auth/accounts.ts), as the reference's shadow subscription, which
 * passes a message on to the importing subscription under the subject the import maps
 * it to; or the system account's JetStream API import in an account of a server without
 * JetStream (src/cluster/js-api.ts), which passes a request on to the servers with it.
 */
export interface ShadowTarget {
  /**
   * Whether a message that came from another server goes through too: a stream import's
   * does (a stream crosses routes in the exporting account); the JetStream API import's
   * does not (the publisher's server imported the request already), as the reference
   * ignores service imports for routed messages.
   */
  readonly fromRoutes: boolean;
  /** Passes m on; false when it could not be taken (it does not count as delivered). */
  deliver(m: PublishedMessage): boolean;
}

export class Subscription {
  readonly client: Client;
  readonly subject: string;
  readonly queue: string | null;
  readonly sid: string;
  /** The sid's bytes, written into every MSG line. */
  readonly sidBytes: Buffer;
  /** Set for in-process subscriptions, which receive calls instead of MSG lines. */
  readonly internal: InternalHandler | null;
  /**
   * An in-process subscriber that keeps nothing of a payload past its call: it gets a
   * view of the read buffer instead of a copy (the streaming layer's publishes and acks).
   */
  borrows = false;
  /** Set (with `internal`) for a subscription that takes payloads as ranges (RangeHandler). */
  ranged: RangeHandler | null = null;
  /** The account's tap that takes this subscription's publishes (range-tap.ts), if any. */
  tap: PublishTap | null = null;
  /** An in-process subscription's subject when it has no wildcard (delivery reuses it), else null. */
  literal: string | null = null;
  /** An in-process subscription's last subject and reply strings (delivery reuses them). */
  subjectMemo: Latin1Memo | null = null;
  replyMemo: Latin1Memo | null = null;
  /** Messages delivered so far. */
  delivered = 0;
  /** Auto-unsubscribe after this many messages; 0 for none. */
  max = 0;
  closed = false;
  /** Set only for subscriptions of users with permissions that act at delivery. */
  filter: DeliveryFilter | null = null;
  /** Set once for a route's subscription: matching messages go to that route. */
  route: RouteSink | null = null;
  /** Queue members this one stands for: 1, or for a route the remote group's size. */
  weight = 1;
  /**
   * Set for a subscription that stands for something else (see ShadowTarget). Its `internal` is set too,
   * so that delivery leaves the path of socket subscriptions at the one test it has.
   */
  shadow: ShadowTarget | null = null;

  constructor(
    client: Client,
    subject: string,
    queue: string | null,
    sid: string,
    internal: InternalHandler | null = null,
  ) {
    this.client = client;
    this.subject = subject;
    this.queue = queue;
    this.sid = sid;
    this.sidBytes = Buffer.from(sid, 'latin1');
    this.internal = internal;
  }
}
