// The TCP bus: the streaming layer as a client of any NATS server (`-ns URL`, as the
// reference's --nats_server), through the `nats` v2 client. Reconnects forever with a
// 250 ms wait and no reconnect buffer, as the reference's own connections do.
// Publishes go out as ready-made PUB frames (raw-frames.ts), queued in order ahead of
// every other command of the bus.

import { connect, type NatsConnection, type Subscription } from 'nats';
import { isLent } from '../server/shared-read.js';
import {
  asBuffer,
  type Bus,
  type BusHandler,
  type BusSubscription,
  type RangeBusHandler,
} from './bus.js';
import { RawFrames } from './raw-frames.js';

/** The URLs of a `-ns` value (a comma-separated list is accepted, as the reference's). */
export function serverList(urls: string): string[] {
  return urls
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
}

export class NatsBus implements Bus {
  /** Null: the client's publish() (its protocol handler is not exposed). */
  private readonly frames: RawFrames | null;

  private constructor(
    private readonly nc: NatsConnection,
    readonly description: string,
  ) {
    this.frames = RawFrames.of(nc);
  }

  /** Connects to `urls` (a comma-separated list is accepted, as the reference's -ns). */
  static async connect(urls: string, name: string): Promise<NatsBus> {
    const servers = serverList(urls);
    const nc = await connect({
      servers,
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 10_000,
    });
    return new NatsBus(nc, servers.join(','));
  }

  subscribe(subject: string, handler: BusHandler, queue?: string): BusSubscription {
    this.frames?.flush();
    const sub: Subscription = this.nc.subscribe(subject, {
      ...(queue !== undefined ? { queue } : {}),
      callback: (err, msg) => {
        if (err !== null) return;
        handler(msg.subject, msg.reply ?? null, asBuffer(msg.data));
      },
    });
    return {
      unsubscribe: () => {
        this.frames?.flush();
        sub.unsubscribe();
      },
    };
  }

  subscribeRange(subject: string, handler: RangeBusHandler): BusSubscription {
    return this.subscribe(subject, (s, r, data) => {
      handler(s, r, data, 0, data.length);
    });
  }

  publishRange(
    subject: string,
    reply: string | null,
    buf: Buffer,
    start: number,
    end: number,
  ): void {
    // Frames are copied into the bus's own buffer at once (no view made).
    if (this.frames?.addPub(subject, reply, buf, start, end) === true) return;
    this.publish(subject, reply, buf.subarray(start, end));
  }

  publish(subject: string, reply: string | null, data: Uint8Array): void {
    if (this.nc.isClosed()) return;
    const frames = this.frames;
    if (frames !== null) {
      if (frames.addPub(subject, reply, data)) return;
      frames.flush();
    }
    // The client library queues the bytes until its next flush: a lent buffer (a FILE
    // store's read block, src/server/shared-read.ts) may be filled again by then.
    this.nc.publish(
      subject,
      isLent(data) ? Buffer.from(data) : data,
      reply !== null ? { reply } : undefined,
    );
  }

  /** The NATS server in between buffers and applies its own limits. */
  congested(_subject: string): boolean {
    return false;
  }

  async request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Buffer | null> {
    if (this.nc.isClosed()) return null;
    this.frames?.flush();
    try {
      const msg = await this.nc.request(subject, data, { timeout: timeoutMs });
      return Buffer.from(msg.data);
    } catch {
      // Timeout, no responders, or a closed connection: all mean "no answer".
      return null;
    }
  }

  flush(): Promise<void> {
    this.frames?.flush();
    return this.nc.isClosed() ? Promise.resolve() : this.nc.flush();
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    this.frames?.flush();
    await this.nc.drain().catch(() => this.nc.close());
  }
}
