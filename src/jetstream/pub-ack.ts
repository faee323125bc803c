// The PubAck bodies of one stream, `{"stream":"S", "seq":N}` (with `"domain":"D", ` in a
// domain, and `,"duplicate": true}` for a duplicate), byte for byte as nats-server 2.9
// writes them. Every acknowledged publish sends one, so they are written without JSON or
// strings: the stream's prefix is encoded once, the sequence's digits are written into an
// arena that later bodies share, and each body is a range of it. An arena is never written
// twice: whoever receives a body (an outbound buffer, an in-process subscriber) may keep
// it.
import { putInt } from '../server/outbound.js';
import { goJson } from './json.js';

const ARENA = 16 * 1024;
const FIRST_ARENA = 256;
/** Room for the longest sequence (2^53: 16 digits) and the longest ending. */
const TAIL_ROOM = 16 + 32;
const CLOSE = Buffer.from('}');
const NO_ARENA = Buffer.alloc(0);
const DUPLICATE = Buffer.from(',"duplicate": true}');

export class PubAckWriter {
  private prefix: Buffer;
  /**
   * Arenas start small and double up to ARENA: a fresh server starts several in its
   * first hundred acks, after V8 has made write() a feedback vector (not at its first
   * calls) and before it optimises it. With 16 KiB from the start, the ~400th ack would
   * be the first to start one, and send the optimised path back to the interpreter.
   */
  arena = NO_ARENA;
  /** Where the last body written begins in `arena` (see ack()). */
  start = 0;
  private at = 0;

  constructor(stream: string, domain: string) {
    this.prefix = pubAckPrefix(stream, domain);
  }

  /** After a stream update (the name stays; the domain is the server's). */
  rename(stream: string, domain: string): void {
    this.prefix = pubAckPrefix(stream, domain);
  }

  /**
   * Writes `{"stream":"S", "seq":N}` at `arena[start]`; returns where it ends. No view of
   * it is made: every acknowledged publish sends one, and a reply can be routed from
   * the range (StreamHost.replyRange).
   */
  ack(seq: number): number {
    return this.write(seq, CLOSE);
  }

  /** `{"stream":"S", "seq":N,"duplicate": true}`: N is the first copy's sequence. */
  duplicate(seq: number): Buffer {
    const end = this.write(seq, DUPLICATE);
    return this.arena.subarray(this.start, end);
  }

  private write(seq: number, end: Buffer): number {
    const prefix = this.prefix;
    if (this.at + prefix.length + TAIL_ROOM > this.arena.length) {
      const next = Math.min(ARENA, Math.max(FIRST_ARENA, this.arena.length * 2));
      this.arena = Buffer.allocUnsafe(Math.max(next, prefix.length + TAIL_ROOM));
      this.at = 0;
    }
    const b = this.arena;
    const start = this.at;
    // TypedArray#set, not Buffer#copy: no argument checks in JavaScript per ack.
    b.set(prefix, start);
    let p = putInt(b, start + prefix.length, seq);
    b.set(end, p);
    p += end.length;
    this.start = start;
    this.at = p;
    return p;
  }
}

/** `{"stream":"S", "seq":` (with `"domain":"D", ` before seq in a domain), as the reference. */
function pubAckPrefix(stream: string, domain: string): Buffer {
  const name = goJson(stream);
  return Buffer.from(
    domain === ''
      ? `{"stream":${name}, "seq":`
      : `{"stream":${name}, "domain":${goJson(domain)}, "seq":`,
  );
}
