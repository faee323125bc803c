// Protocol frames written straight into the `nats` client's outbound queue. Through
// the client's publish() every message builds its protocol line as a string, encodes
// it with a TextEncoder and queues the line, the data and a CRLF apart: the largest
// share of a streaming node's own time when it serves over `-ns` (deliveries and
// PubAcks). Here the frames of a turn are copied into one slab and handed to the
// connection as one slice at the end of the turn (a microtask), or before anything
// else is sent on it (flush()): the client's queue keeps them in order with the rest.
// The next turn writes after that slice in the same slab (the client may still hold
// it), and a new slab is taken only when one is full.
//
// The bytes are what the client would write. A subject the client would write
// differently (empty, white space or control characters, non-ASCII), a message over
// the server's max_payload or a closed connection is left to the client (the add
// methods return false; the caller flushes the queued frames first, to keep the
// order, and publishes through the client, which throws or writes as before).
import type { NatsConnection } from 'nats';
import { putInt } from '../server/outbound.js';

/** The part of the `nats` client's connection that takes raw protocol bytes. */
interface RawProtocol {
  sendCommand(cmd: Uint8Array): void;
}

const PUB = Buffer.from('PUB ');
const SLAB = 256 * 1024;
/** `PUB`, three spaces, the length's digits and two CRLFs at most. */
const PUB_FIXED = 4 + 2 + 16 + 4;

/** The client's raw protocol handler, null when it does not expose one. */
function rawProtocol(nc: NatsConnection): RawProtocol | null {
  const protocol = (nc as unknown as { protocol?: Partial<RawProtocol> }).protocol;
  return typeof protocol?.sendCommand === 'function' ? (protocol as RawProtocol) : null;
}

/** A subject or reply the client writes unchanged: printable ASCII, no spaces. */
export function plainToken(s: string): boolean {
  const n = s.length;
  if (n === 0) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

export class RawFrames {
  protected buf = Buffer.allocUnsafe(SLAB);
  /** Queued frames are buf[start..len). */
  protected len = 0;
  private start = 0;
  private scheduled = false;
  private readonly flushNow = (): void => {
    this.flush();
  };

  protected constructor(
    protected readonly nc: NatsConnection,
    private readonly protocol: RawProtocol,
  ) {}

  /** Null when the client does not expose its protocol handler (then publish() is used). */
  static of(nc: NatsConnection): RawFrames | null {
    const protocol = rawProtocol(nc);
    return protocol === null ? null : new RawFrames(nc, protocol);
  }

  protected static protocolOf(nc: NatsConnection): RawProtocol | null {
    return rawProtocol(nc);
  }

  /**
   * Queues `PUB <subject> [<reply>] <length>` and `data[start..end)`; false: publish()
   * instead.
   */
  addPub(
    subject: string,
    reply: string | null,
    data: Uint8Array,
    start = 0,
    end = data.length,
  ): boolean {
    if (this.nc.isClosed() || !plainToken(subject) || (reply !== null && !plainToken(reply))) {
      return false;
    }
    const limit = this.nc.info?.max_payload;
    const size = end - start;
    if (limit !== undefined && size > limit) return false;
    const replyLength = reply === null ? 0 : reply.length;
    this.reserve(PUB_FIXED + subject.length + replyLength + size);
    const b = this.buf;
    let p = this.len + PUB.copy(b, this.len);
    p += b.write(subject, p, 'latin1');
    b[p++] = 0x20;
    if (reply !== null) {
      p += b.write(reply, p, 'latin1');
      b[p++] = 0x20;
    }
    p = putInt(b, p, size);
    b[p++] = 0x0d;
    b[p++] = 0x0a;
    if (Buffer.isBuffer(data)) data.copy(b, p, start, end);
    else b.set(start === 0 && end === data.length ? data : data.subarray(start, end), p);
    p += size;
    b[p++] = 0x0d;
    b[p++] = 0x0a;
    this.queued(p);
    return true;
  }

  /** Hands the queued frames to the connection (that slice of the slab is its now). */
  flush(): void {
    this.scheduled = false;
    if (this.len === this.start) return;
    const out = this.buf.subarray(this.start, this.len);
    this.start = this.len;
    if (!this.nc.isClosed()) this.protocol.sendCommand(out);
  }

  /** Room for `need` more bytes after `len`: a new slab when this one is full. */
  protected reserve(need: number): void {
    if (need <= this.buf.length - this.len) return;
    const queued = this.len - this.start;
    const next = Buffer.allocUnsafe(Math.max(SLAB, 2 * (queued + need)));
    this.buf.copy(next, 0, this.start, this.len);
    this.buf = next;
    this.start = 0;
    this.len = queued;
  }

  /** A frame was written up to `end`: it goes out at the end of the turn. */
  protected queued(end: number): void {
    this.len = end;
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.flushNow);
    }
  }
}
