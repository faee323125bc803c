// A clustered node's bus, with a gate. While the Leader is suspended (its lease ran
// out without being taken, cluster/lease.ts) nothing it does may reach a client: the
// gate holds every message that comes in for it and every message it sends, in the
// order they came. resume() lets them through in that order, as if the network had
// been slow; discard() drops them (the node stepped down: the next Leader serves the
// clients, which send again what got no answer).
//
// Messages come in held also when the lease has lapsed and its timer has not fired
// yet (`open()` false): a publish then is held, not lost.
import type { Bus, BusHandler, BusSubscription, RangeBusHandler } from './bus.js';

/**
 * Beyond this many bytes of held incoming messages, what comes in is dropped (clients
 * send it again once their wait is over): a suspension lasts seconds, not gigabytes.
 */
const MAX_HELD_BYTES = 64 * 1024 * 1024;

export class GatedBus implements Bus {
  /** Held work in arrival order; null while the gate is open. */
  private held: (() => void)[] | null = null;
  /** Held requests' answers when they are dropped: "no reply", as after their timeout. */
  private drops: (() => void)[] = [];
  /** Bytes of the incoming messages held. */
  private heldBytes = 0;

  constructor(
    private readonly inner: Bus,
    /** False while the node may not act (its lease lapsed): what comes in is held. */
    private readonly open: () => boolean,
  ) {}

  get description(): string {
    return this.inner.description;
  }

  get holding(): boolean {
    return this.held !== null;
  }

  /** Closes the gate: from now on everything is held. */
  hold(): void {
    this.held ??= [];
  }

  /** Opens the gate and lets through what it held, in order. */
  resume(): void {
    const held = this.held;
    this.held = null;
    this.drops = [];
    this.heldBytes = 0;
    if (held === null) return;
    for (const run of held) run();
  }

  /** Opens the gate, dropping what it held. */
  discard(): void {
    this.held = null;
    this.heldBytes = 0;
    const drops = this.drops;
    this.drops = [];
    for (const drop of drops) drop();
  }

  /** Whether an incoming message must be held (and the gate closes if it was open). */
  private mustHold(): boolean {
    if (this.held === null) {
      if (this.open()) return false;
      this.held = [];
    }
    return true;
  }

  /** Makes room for an incoming message of `size` bytes; false when too much is held. */
  private room(size: number): boolean {
    if (this.heldBytes + size > MAX_HELD_BYTES) return false;
    this.heldBytes += size;
    return true;
  }

  subscribe(
    subject: string,
    handler: BusHandler,
    queue?: string,
    borrows?: boolean,
  ): BusSubscription {
    return this.inner.subscribe(
      subject,
      (s, reply, data) => {
        if (!this.mustHold()) {
          handler(s, reply, data);
          return;
        }
        if (!this.room(data.length)) return;
        const copy = Buffer.from(data);
        this.held!.push(() => {
          handler(s, reply, copy);
        });
      },
      queue,
      borrows,
    );
  }

  subscribeRange(subject: string, handler: RangeBusHandler): BusSubscription {
    return this.inner.subscribeRange(subject, (s, reply, buf, start, end) => {
      if (!this.mustHold()) {
        handler(s, reply, buf, start, end);
        return;
      }
      if (!this.room(end - start)) return;
      const copy = Buffer.from(buf.subarray(start, end));
      this.held!.push(() => {
        handler(s, reply, copy, 0, copy.length);
      });
    });
  }

  publish(subject: string, reply: string | null, data: Uint8Array): void {
    if (this.held === null) {
      this.inner.publish(subject, reply, data);
      return;
    }
    // The caller may reuse its buffer once publish() returns.
    const copy = Buffer.from(data);
    this.held.push(() => {
      this.inner.publish(subject, reply, copy);
    });
  }

  publishRange(
    subject: string,
    reply: string | null,
    buf: Buffer,
    start: number,
    end: number,
  ): void {
    if (this.held === null) {
      this.inner.publishRange(subject, reply, buf, start, end);
      return;
    }
    // publishRange()'s bytes stay as they are (bus.ts): no copy.
    this.held.push(() => {
      this.inner.publishRange(subject, reply, buf, start, end);
    });
  }

  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Buffer | null> {
    if (this.held === null) return this.inner.request(subject, data, timeoutMs);
    const copy = Buffer.from(data);
    const held = this.held;
    return new Promise((resolve) => {
      held.push(() => {
        resolve(this.inner.request(subject, copy, timeoutMs));
      });
      this.drops.push(() => {
        resolve(null);
      });
    });
  }

  congested(subject: string): boolean {
    return this.inner.congested(subject);
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  close(): Promise<void> {
    this.discard();
    return this.inner.close();
  }
}
