// The one interface between the streaming layer and NATS: subscribe, publish, and a
// request with a timeout (heartbeats, the duplicate client id probe). Two
// implementations: in-process (bus-internal.ts, the default: an internal client of
// the core server, no TCP hop) and a TCP client of any NATS server (bus-nats.ts,
// `-ns nats://host:port`), so streaming can sit on a real NATS cluster.

/**
 * A message handler. `data` may be a view into a buffer the bus reuses: a handler
 * copies whatever it keeps after it returns.
 */
export type BusHandler = (subject: string, reply: string | null, data: Buffer) => void;

/**
 * A handler of the hot subjects (publishes, acks): the payload is `buf[start, end)`,
 * and nothing of `buf` may be kept after it returns. No Buffer view is made per
 * message for it.
 */
export type RangeBusHandler = (
  subject: string,
  reply: string | null,
  buf: Buffer,
  start: number,
  end: number,
) => void;

export interface BusSubscription {
  unsubscribe(): void;
}

export interface Bus {
  /** A description for the log: "in-process" or the server URL. */
  readonly description: string;
  /**
   * With `borrows`, the handler promises to keep nothing of `data` after it returns,
   * and the in-process bus hands it a view of the connection's read buffer instead
   * of a copy (the publish and ack paths).
   */
  subscribe(
    subject: string,
    handler: BusHandler,
    queue?: string,
    borrows?: boolean,
  ): BusSubscription;
  /** subscribe() with borrowing, for a handler that takes the payload as a range. */
  subscribeRange(subject: string, handler: RangeBusHandler): BusSubscription;
  publish(subject: string, reply: string | null, data: Uint8Array): void;
  /**
   * publish() of `buf[start, end)`. The bytes must stay as they are afterwards (a TCP
   * bus may send them later): never reuse the buffer.
   */
  publishRange(
    subject: string,
    reply: string | null,
    buf: Buffer,
    start: number,
    end: number,
  ): void;
  /**
   * A request: the first reply's payload, or null on timeout or when nobody is
   * subscribed to `subject` (no responders).
   */
  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Buffer | null>;
  /**
   * True while a subscriber of `subject` has much output waiting (a quarter of
   * max_pending): delivery pauses instead of piling a whole MaxInflight window into
   * one connection's buffer and getting it cut off as a slow consumer.
   */
  congested(subject: string): boolean;
  /** Resolves once everything published so far has left this process. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export const EMPTY = Buffer.alloc(0);

/** Buffer view over bytes without copying. */
export function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
