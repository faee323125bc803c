// The PubAcks of one publish batch, written one after the other into one buffer: a
// PubAck per publish is on the hot path, and a Buffer of its own for each (even a
// view of a shared slab) cost as much as writing it. The batch is sent once the
// store has flushed what it stored (server.ts), each PubAck as a range of the buffer.
// A batch's buffer is never reused: a TCP bus may still hold its bytes after sending.

import type { Bus } from './bus.js';
import { encodePubAckError } from './encode.js';
import { PubAck } from './protocol/index.js';
import { putBytes } from '../server/outbound.js';

const FIRST_SIZE = 8 * 1024;

export class PubAckBatch {
  /** Reply subjects, in arrival order (the first `size` entries). */
  private readonly replies: string[] = [];
  /** Where each PubAck ends in `buf` (each starts where the previous ended). */
  private readonly ends: number[] = [];
  private buf: Buffer = EMPTY;
  private len = 0;
  /** PubAcks queued. The arrays keep their length across clear(): no regrowth per batch. */
  size = 0;

  constructor(
    /**
     * Bytes of a batch's first buffer (grown as needed). Smaller for a batch of one
     * channel (publish-lane.ts): a turn may run one batch per channel.
     */
    private readonly firstSize = FIRST_SIZE,
  ) {}

  /** Empties the batch once sent, for the next one (its bytes go with the old buffer). */
  clear(): void {
    this.buf = EMPTY;
    this.len = 0;
    this.size = 0;
  }

  /** PubAck{guid} without error, the guid being `src[start, end)` (a PubMsg's bytes). */
  addFrom(reply: string, src: Buffer, start: number, end: number): void {
    const n = end - start;
    // One length byte: longer guids (never seen from clients) take the general path.
    if (n > 127) {
      this.add(
        reply,
        Buffer.from(PubAck.encode({ guid: src.toString('utf8', start, end) }).finish()),
      );
      return;
    }
    const at = this.room(n === 0 ? 0 : n + 2);
    if (n > 0) {
      const b = this.buf;
      b[at] = 0x0a;
      b[at + 1] = n;
      putBytes(b, at + 2, src, start, end);
    }
    this.push(reply);
  }

  /** A PubAck already encoded (an error). */
  add(reply: string, ack: Uint8Array): void {
    const at = this.room(ack.length);
    this.buf.set(ack, at);
    this.push(reply);
  }

  /** Publishes every PubAck; `failure` replaces the PubAcks that reported success. */
  send(bus: Bus, failure: string | null): void {
    const buf = this.buf;
    const replies = this.replies;
    const ends = this.ends;
    let start = 0;
    const n = this.size;
    for (let i = 0; i < n; i++) {
      const end = ends[i]!;
      if (failure === null) {
        bus.publishRange(replies[i]!, null, buf, start, end);
      } else {
        // What was stored is not durable: a PubAck that said so gets the error instead.
        const sent = PubAck.decode(buf.subarray(start, end));
        const ack =
          sent.error === '' ? encodePubAckError(sent.guid, failure) : buf.subarray(start, end);
        bus.publish(replies[i]!, null, ack);
      }
      start = end;
    }
  }

  private push(reply: string): void {
    const i = this.size++;
    if (i < this.replies.length) {
      this.replies[i] = reply;
      this.ends[i] = this.len;
    } else {
      this.replies.push(reply);
      this.ends.push(this.len);
    }
  }

  /** Makes room for `n` more bytes; returns where they go. */
  private room(n: number): number {
    const at = this.len;
    if (at + n > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.firstSize, (at + n) * 2));
      this.buf.copy(grown, 0, 0, at);
      this.buf = grown;
    }
    this.len = at + n;
    return at;
  }
}

const EMPTY = Buffer.alloc(0);
