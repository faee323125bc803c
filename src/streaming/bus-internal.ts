// The in-process bus: an internal client of the core server. Publishes go straight
// into the subject index (publishInternal), subscriptions receive calls (no MSG
// lines, no socket). Requests use one wildcard reply subscription, as the reference
// clients' "new style" requests do.

import type { Client } from '../server/client.js';
import type { Server } from '../server/server.js';
import type { Subscription } from '../server/subscription.js';
import {
  asBuffer,
  type Bus,
  type BusHandler,
  type BusSubscription,
  type RangeBusHandler,
} from './bus.js';
import { nuid } from '../protocol/nuid.js';

interface PendingRequest {
  resolve: (data: Buffer | null) => void;
  timer: NodeJS.Timeout;
}

interface Queued {
  subject: string;
  reply: string | null;
  data: Buffer;
}

export class InternalBus implements Bus {
  readonly description = 'in-process';
  private readonly client: Client;
  private replySub: Subscription | null = null;
  private readonly replyPrefix = `_INBOX.${nuid.next()}.`;
  private readonly requests = new Map<string, PendingRequest>();
  private nextToken = 0;
  /**
   * publishInternal reuses one message object: a handler that publishes while the
   * server is still routing one of our publishes would overwrite it. Publishes made
   * during a publish are queued and sent right after it.
   */
  private depth = 0;
  private readonly queued: Queued[] = [];
  private closed = false;

  constructor(
    private readonly server: Server,
    name: string,
  ) {
    this.client = server.createInternalClient(name);
  }

  subscribe(
    subject: string,
    handler: BusHandler,
    queue?: string,
    borrows = false,
  ): BusSubscription {
    const sub = this.server.subscribeInternal(
      this.client,
      subject,
      queue ?? null,
      (s, r, _h, p) => {
        handler(s, r, p);
      },
      borrows,
    );
    return this.unsubscriber(sub);
  }

  private unsubscriber(sub: Subscription): BusSubscription {
    const client = this.client;
    return {
      unsubscribe: () => {
        client.removeSubscription(sub);
      },
    };
  }

  subscribeRange(subject: string, handler: RangeBusHandler): BusSubscription {
    return this.unsubscriber(this.server.subscribeInternalRange(this.client, subject, handler));
  }

  publish(subject: string, reply: string | null, data: Uint8Array): void {
    this.send(subject, reply, asBuffer(data));
  }

  publishRange(
    subject: string,
    reply: string | null,
    buf: Buffer,
    start: number,
    end: number,
  ): void {
    if (this.closed) return;
    // A publish made while one of ours is being routed waits its turn (see send()).
    if (this.depth > 0) {
      this.queued.push({ subject, reply, data: buf.subarray(start, end) });
      return;
    }
    this.depth++;
    try {
      this.server.publishInternalRange(this.client, subject, reply, buf, start, end);
    } finally {
      this.depth--;
    }
    this.sendQueued();
  }

  /** Publishes; returns how many subscriptions received it (0 while queued). */
  private send(subject: string, reply: string | null, data: Buffer): number {
    if (this.closed) return 0;
    if (this.depth > 0) {
      this.queued.push({ subject, reply, data });
      return 0;
    }
    this.depth++;
    let n: number;
    try {
      n = this.server.publishInternal(this.client, subject, reply, data);
    } finally {
      this.depth--;
    }
    this.sendQueued();
    return n;
  }

  private sendQueued(): void {
    while (this.depth === 0 && this.queued.length > 0) {
      const q = this.queued.shift()!;
      this.depth++;
      try {
        this.server.publishInternal(this.client, q.subject, q.reply, q.data);
      } finally {
        this.depth--;
      }
    }
  }

  congested(subject: string): boolean {
    const limit = this.server.options.maxPending >>> 2;
    return this.server.subjectBacklog(this.client.account, subject) > limit;
  }

  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Buffer | null> {
    if (this.closed) return Promise.resolve(null);
    this.replySub ??= this.server.subscribeInternal(
      this.client,
      this.replyPrefix + '*',
      null,
      (s, _r, _h, p) => {
        this.onReply(s, p);
      },
    );
    const token = String(++this.nextToken);
    return new Promise<Buffer | null>((resolve) => {
      const timer = setTimeout(() => {
        this.requests.delete(token);
        resolve(null);
      }, timeoutMs);
      timer.unref();
      this.requests.set(token, { resolve, timer });
      const reached = this.send(subject, this.replyPrefix + token, asBuffer(data));
      // No responders: answer at once, as a NATS client with headers support does.
      if (reached === 0 && this.depth === 0 && this.requests.has(token)) {
        clearTimeout(timer);
        this.requests.delete(token);
        resolve(null);
      }
    });
  }

  private onReply(subject: string, payload: Buffer): void {
    const token = subject.substring(this.replyPrefix.length);
    const r = this.requests.get(token);
    if (r === undefined) return;
    this.requests.delete(token);
    clearTimeout(r.timer);
    r.resolve(Buffer.from(payload));
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    for (const r of this.requests.values()) {
      clearTimeout(r.timer);
      r.resolve(null);
    }
    this.requests.clear();
    this.client.close('Server Shutdown');
    return Promise.resolve();
  }
}
