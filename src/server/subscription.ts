// One subscription of a connection (or of an in-process subscriber).

import type { Client } from './client.js';
import type { PublishedMessage } from './message.js';

/** Receives messages for an in-process subscription (the streaming layer, system services). */
export type InternalHandler = (
  subject: string,
  reply: string | null,
  headers: Buffer | null,
  payload: Buffer,
) => void;

/**
 * Decides at delivery whether a subscription may receive a message (src/auth:
 * subscribe deny rules under a wider wildcard, allow_responses bookkeeping).
 */
export interface DeliveryFilter {
  admit(subject: string, m: PublishedMessage): boolean;
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
  /** Messages delivered so far. */
  delivered = 0;
  /** Auto-unsubscribe after this many messages; 0 for none. */
  max = 0;
  closed = false;
  /** Set only for subscriptions of users with permissions that act at delivery. */
  filter: DeliveryFilter | null = null;

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
