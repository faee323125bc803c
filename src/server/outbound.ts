// A connection's pending output: deliveries are appended here and handed to the
// socket once per turn of the event loop, so a burst of messages costs one write.

import type { Transport } from './transport.js';

/** Size of each output block; a larger message gets a block of its own size. */
const BLOCK = 64 * 1024;
const INITIAL_BLOCK = 512;
/** Below this much free room, the next flush starts a fresh block. */
const MIN_FREE = 4 * 1024;
/** Payloads this large are passed to the socket by reference instead of copied. */
export const ZERO_COPY_MIN = 16 * 1024;
/**
 * Full blocks the sockets have written out, for the next block any connection needs:
 * a subscriber that reads slower than the server writes (a streaming catch-up) kept
 * the socket busy, so every 64 KiB of its output was a new ArrayBuffer, and that
 * external memory, not the heap, started most mark-compacts of a catch-up (five to
 * seven for 50,000 x 1 KiB; bench/RESULTS.md). At most POOL_MAX blocks are kept.
 */
const pool: Buffer[] = [];
const POOL_MAX = 64;
/** Entries of Outbound.written called back before they are dropped from its front. */
const WRITTEN_COMPACT = 1024;

/** Blocks in the pool (tests). */
export function pooledBlocks(): number {
  return pool.length;
}

function takeBlock(): Buffer {
  return pool.pop() ?? Buffer.allocUnsafe(BLOCK);
}

export class Outbound {
  /** The block being filled; writers reserve() then write at pos. */
  // Starts small so that an idle connection costs little; the first burst of
  // deliveries moves to a full block, which is then reused.
  buf: Buffer = Buffer.allocUnsafe(INITIAL_BLOCK);
  /** First byte of buf not yet handed to the socket. */
  private start = 0;
  pos = 0;
  /** Filled blocks and referenced payloads waiting for the next flush. */
  private readonly parts: Buffer[] = [];
  /** The block each part was cut from; null for a payload passed by reference. */
  private readonly partBlocks: (Buffer | null)[] = [];
  private partsBytes = 0;
  /**
   * Set for a socket whose write callbacks mean "the kernel has these bytes" (TCP and
   * TLS; net.Socket): its full blocks go back to the pool once written.
   */
  recycles = false;
  /**
   * The block of each write handed to the socket and not yet called back, in write
   * order (a stream calls back in that order). A block's writes are consecutive here:
   * it is returned to the pool at its last one, once it is neither the block filled nor
   * in parts not handed over yet.
   */
  private readonly written: (Buffer | null)[] = [];
  private writtenHead = 0;

  /** Bytes queued here and not yet handed to the socket. */
  get queued(): number {
    return this.partsBytes + this.pos - this.start;
  }

  /** Makes room for n more bytes at pos. */
  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.seal();
    this.buf = n > BLOCK ? Buffer.allocUnsafe(n) : takeBlock();
    this.start = 0;
    this.pos = 0;
  }

  /** Queues bytes by reference: the caller must never change them afterwards. */
  appendRef(data: Buffer): void {
    this.seal();
    this.parts.push(data);
    this.partBlocks.push(null);
    this.partsBytes += data.length;
  }

  /** Hands everything queued to the socket in one corked burst; returns how many bytes. */
  flush(socket: Transport): number {
    const parts = this.parts;
    let handed = 0;
    if (parts.length === 0) {
      if (this.pos > this.start) {
        handed = this.pos - this.start;
        const part = this.buf.subarray(this.start, this.pos);
        if (this.recycles) {
          this.written.push(this.buf);
          socket.write(part, this.onWritten);
        } else socket.write(part);
        this.start = this.pos;
      }
    } else {
      this.seal();
      handed = this.partsBytes;
      const blocks = this.partBlocks;
      socket.cork();
      if (this.recycles) {
        for (let i = 0; i < parts.length; i++) {
          this.written.push(blocks[i]!);
          socket.write(parts[i]!, this.onWritten);
        }
      } else {
        for (let i = 0; i < parts.length; i++) socket.write(parts[i]!);
      }
      // Emptied before uncork(): a transport may call the writes back there, and a
      // block still listed in partBlocks would not go back to the pool.
      parts.length = 0;
      blocks.length = 0;
      this.partsBytes = 0;
      socket.uncork();
    }
    if (socket.writableLength === 0) {
      // Everything went straight into the kernel and the socket keeps no reference
      // to our bytes, so the block can be filled again from the start: the common
      // case costs no allocation at all.
      this.start = 0;
      this.pos = 0;
    } else if (this.buf.length - this.pos < MIN_FREE) {
      // The socket still holds part of this block: start a new one.
      this.buf = takeBlock();
      this.start = 0;
      this.pos = 0;
    }
    return handed;
  }

  /**
   * The socket is done with the oldest write (written, or dropped with the socket): its
   * block goes back to the pool after its last write, unless it is still being filled.
   * One function per connection, made once: no closure per write.
   */
  private readonly onWritten = (): void => {
    const written = this.written;
    const b = written[this.writtenHead];
    written[this.writtenHead++] = null;
    let next: Buffer | null | undefined;
    if (this.writtenHead === written.length) {
      written.length = 0;
      this.writtenHead = 0;
    } else {
      next = written[this.writtenHead];
      // A socket that is never quite done (a subscriber always behind) must not grow
      // the queue without end: the entries called back are dropped now and then.
      if (this.writtenHead >= WRITTEN_COMPACT) {
        written.splice(0, this.writtenHead);
        this.writtenHead = 0;
      }
    }
    if (
      b != null &&
      b !== next &&
      b !== this.buf &&
      b.length === BLOCK &&
      pool.length < POOL_MAX &&
      // Sealed into the parts since, and not written yet.
      this.partBlocks.indexOf(b) < 0
    ) {
      pool.push(b);
    }
  };

  /** Drops everything queued (the connection is going away). */
  discard(): void {
    this.parts.length = 0;
    this.partBlocks.length = 0;
    this.partsBytes = 0;
    this.start = this.pos;
  }

  /** Moves the filled part of the current block to the parts list. */
  private seal(): void {
    if (this.pos > this.start) {
      this.parts.push(this.buf.subarray(this.start, this.pos));
      this.partBlocks.push(this.buf);
      this.partsBytes += this.pos - this.start;
      this.start = this.pos;
    }
  }
}

/** Copies src[start, end) to dst at pos; short spans in a loop, which beats a native call. */
export function putBytes(
  dst: Buffer,
  pos: number,
  src: Buffer,
  start: number,
  end: number,
): number {
  const n = end - start;
  if (n < 48) {
    for (let i = 0; i < n; i++) dst[pos + i] = src[start + i]!;
  } else {
    // The typed-array copy, without the argument checks of Buffer.copy (twice as fast
    // for short payloads, more while cold): a whole buffer (a stored message's data) as
    // it is, a range through a view (Buffer.copy makes the same view inside, through a
    // chain of JS calls a fresh server runs interpreted: bench/delivery.ts, `putBytes`).
    // One call site and no test that stops early: a consumer's first whole buffer
    // after thousands of ranges (or the other way round) then costs V8 no deopt.
    const whole = start + (src.length - end) === 0;
    dst.set(whole ? src : new Uint8Array(src.buffer, src.byteOffset + start, n), pos);
  }
  return pos + n;
}

/** Node's own latin1 writer, which `buf.write(s, pos, 'latin1')` calls after its checks. */
type Latin1Writer = (this: Buffer, s: string, pos: number, max: number) => number;
const latin1Write = (Buffer.prototype as unknown as { latin1Write?: Latin1Writer }).latin1Write;

/**
 * Writes `s` (a subject: one byte per character) at `pos`; returns the end. Straight to
 * Node's writer: Buffer#write's argument checks and encoding lookup are JavaScript, run
 * interpreted by a fresh server for every in-process publish's reply subject.
 */
export function putLatin1(dst: Buffer, pos: number, s: string): number {
  if (latin1Write === undefined) return pos + dst.write(s, pos, 'latin1');
  return pos + latin1Write.call(dst, s, pos, dst.length - pos);
}

/**
 * Writes a non-negative safe integer in decimal at `pos`; returns the end. Integer
 * arithmetic below 2^31 and no calls: it runs for several numbers of every delivery
 * (sizes, JetStream ack replies), and a freshly started server runs it before the
 * optimising compiler has.
 */
export function putInt(dst: Buffer, pos: number, value: number): number {
  if (value < 10) {
    dst[pos] = 0x30 + value;
    return pos + 1;
  }
  let end = pos + 2;
  for (let t = 100; t <= value; t *= 10) end++;
  let at = end;
  let v = value;
  if (v < 2147483648) {
    while (v > 0) {
      const q = (v / 10) | 0;
      dst[--at] = 0x30 + v - q * 10;
      v = q;
    }
  } else {
    while (v > 0) {
      const d = v % 10;
      dst[--at] = 0x30 + d;
      v = (v - d) / 10;
    }
  }
  return end;
}

/**
 * Runs `reserve` up to its slow path once, at load, on an Outbound of no connection. V8
 * gives a function its feedback vector only after its first calls (about eight times
 * its bytecode run) and records no types before: a fresh server's first block change
 * (the small first block outgrown by a connection's first burst) comes within those
 * calls, so the optimised `reserve` met its slow path as if for the first time at the
 * first full 64 KiB block, and V8 threw it away with the writers that depend on it
 * (finishMessage): in one fresh JetStream file async 1 KiB window in two
 * (bench/RESULTS.md, s10perf). The block taken here is dropped, not pooled.
 */
function primeReserve(): void {
  const o = new Outbound();
  for (let i = 0; i <= INITIAL_BLOCK / 4; i++) {
    o.reserve(4);
    o.pos += 4;
  }
}
primeReserve();
