// Small buffers carved out of larger ones. Every stored message and every PubAck is
// a buffer of its own; allocating each separately (or through Node's 8 KiB pool) costs
// an ArrayBuffer and its external-memory bookkeeping every few dozen messages, which
// showed as a fifth of the server's time under stan-pub. A slab is freed by the
// garbage collector once no view of it is left.
//
// Whoever frees the views in allocation order (a channel's messages leave by limits
// oldest first) pins at most one slab beyond what it holds; a channel gets its own
// Slabs, so a quiet channel's few messages never keep a busy channel's slabs alive.
// Slabs start small and double up to MAX_SLAB, so a channel of a few messages costs
// little and a busy one allocates rarely.

const MIN_SLAB = 4 * 1024;
const MAX_SLAB = 256 * 1024;
/** Buffers above this get their own allocation: a slab holds many of them or none. */
const OWN_ABOVE = 32 * 1024;

export class Slabs {
  private slab: Buffer = Buffer.alloc(0);
  private used = 0;
  private nextSize = MIN_SLAB;
  /** The last reservation: `buf[start, start + n)`. */
  buf: Buffer = this.slab;
  start = 0;

  /** `n` bytes, uninitialised, as a view of their own. */
  alloc(n: number): Buffer {
    this.reserve(n);
    return this.buf.subarray(this.start, this.start + n);
  }

  /**
   * Reserves `n` uninitialised bytes at `buf[start, start + n)`, without a view (the
   * publish path: a Buffer view costs as much as writing a small message).
   */
  reserve(n: number): void {
    if (n > OWN_ABOVE) {
      this.buf = Buffer.allocUnsafeSlow(n);
      this.start = 0;
      return;
    }
    if (this.used + n > this.slab.length) {
      // A message larger than the next slab size (up to OWN_ABOVE) while slabs are
      // still small gets a slab it fits in: the second message of a fresh channel,
      // 20 KB after one of 100 B, ran past a slab of 8 KiB ("offset is out of bounds").
      this.slab = Buffer.allocUnsafeSlow(n > this.nextSize ? n : this.nextSize);
      this.used = 0;
      if (this.nextSize < MAX_SLAB) this.nextSize *= 2;
    }
    const start = this.used;
    // 8-byte aligned, as Node's pool does.
    this.used = (start + n + 7) & ~7;
    this.buf = this.slab;
    this.start = start;
  }
}
