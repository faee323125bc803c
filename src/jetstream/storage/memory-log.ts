// The memory store's log: per-message fields in typed columns indexed by sequence, and
// the messages' bytes copied into large shared slabs. No JS object lives per stored
// message: an object (and a boxed timestamp) per message was what the collector copied
// out of the young generation and marked in the old one, about a fifth of a publish's
// CPU. A Buffer of its own per message cost an ArrayBuffer from Node's 8 KiB pool every
// few messages; a Map by sequence a hash insertion, and its rehashing, per message.
//
// A slab is never written twice, so a view of it handed out (a load, an outbound buffer)
// stays valid for as long as it is held; a slab that removals leave mostly dead has its
// survivors copied into the current one, so that a few long-lived messages (the keys of
// a KV that is rarely written) do not hold many slabs.

import { blankStoredSpan, msgOf, type StoredMsg, type StoredSpan } from './types.js';

interface Slab {
  readonly buf: Buffer;
  used: number;
  /** Bytes of messages still stored. */
  live: number;
  /** The sequences copied into it (some since removed or moved: their slab column differs). */
  readonly seqs: number[];
}

/** Below glibc's mmap threshold (128 KiB): slabs come from the heap, not fresh pages. */
const SLAB = 64 * 1024;
/** A stream's first slab: an idle or small stream (a KV bucket of a few keys) costs little. */
const FIRST_SLAB = 4 * 1024;
/** Larger messages get a buffer (a slab) of their own. */
const LARGE = 8 * 1024;
/** The slab column's mark of a sequence without a message (removed, skipped). */
const NONE = -1;
/** Columns start this long and double; a dead front longer than this is cut off. */
const MIN_SLOTS = 1024;

/**
 * Messages by sequence, from `base` on: slot `seq - base` of each column holds the
 * message's slab id (NONE where there is none), offset in it, header and data lengths,
 * subject id (the store interns subjects) and timestamp. Sequences are appended in
 * increasing order; the dead slots before the first message are cut off once they are
 * many and most of the log, so the columns hold about what the stream holds.
 */
export class MemLog {
  /** Messages stored. */
  size = 0;
  private base = 0;
  /** Slots in use: [0, len). */
  private len = 0;
  /** Slots [0, head) hold no message. */
  private head = 0;
  private slab = new Int32Array(0);
  private off = new Int32Array(0);
  private hl = new Int32Array(0);
  private dl = new Int32Array(0);
  private subj = new Int32Array(0);
  private tsCol = new Float64Array(0);

  /** Where load() finds a message before it makes the views. */
  private readonly scratch = blankStoredSpan();
  private slabs: (Slab | undefined)[] = [];
  private freeSlabs: number[] = [];
  /** The slab being filled (NONE before the first message). */
  private cur = NONE;
  /** Slabs double from FIRST_SLAB up to SLAB. */
  private nextSize = FIRST_SLAB;

  /** The slot of `seq`, or -1 when it holds no message. */
  private slot(seq: number): number {
    const i = seq - this.base;
    return i >= 0 && i < this.len && this.slab[i] !== NONE ? i : -1;
  }

  has(seq: number): boolean {
    return this.slot(seq) >= 0;
  }

  /** The subject id of `seq`, or -1 when it has no message. */
  subjectOf(seq: number): number {
    const i = this.slot(seq);
    return i < 0 ? -1 : this.subj[i]!;
  }

  /** The timestamp of `seq` (which must have a message). */
  tsOf(seq: number): number {
    return this.tsCol[seq - this.base]!;
  }

  /** Header plus data bytes of `seq` (which must have a message). */
  bytesOf(seq: number): number {
    const i = seq - this.base;
    return this.hl[i]! + this.dl[i]!;
  }

  /** Fills `into` (or a new StoredMsg) with `seq`'s message, whose subject is `subject`. */
  load(seq: number, subject: string, into: StoredMsg | undefined): StoredMsg {
    return msgOf(this.span(seq, subject, this.scratch), into);
  }

  /** Fills `into` with where `seq`'s message lies; its subject is `subject`. */
  span(seq: number, subject: string, into: StoredSpan): StoredSpan {
    const i = seq - this.base;
    const off = this.off[i]!;
    const dataStart = off + this.hl[i]!;
    into.subject = subject;
    into.seq = seq;
    into.ts = this.tsCol[i]!;
    into.buf = this.slabs[this.slab[i]!]!.buf;
    into.hdrStart = off;
    into.dataStart = dataStart;
    into.dataEnd = dataStart + this.dl[i]!;
    return into;
  }

  /** Stores copies of the given bytes (which the caller may reuse) at `seq`, above every stored one. */
  append(seq: number, subject: number, ts: number, hdr: Buffer, data: Buffer): void {
    if (this.size === 0) this.resetSlots(seq);
    const i = seq - this.base;
    if (i < this.len) throw new RangeError(`sequence ${seq} is not above the log's last`);
    if (i >= this.slab.length) this.resize(Math.max(this.slab.length * 2, i + 1, MIN_SLOTS));
    this.slab.fill(NONE, this.len, i);
    this.len = i + 1;
    this.hl[i] = hdr.length;
    this.dl[i] = data.length;
    this.subj[i] = subject;
    this.tsCol[i] = ts;
    this.place(i, seq);
    const buf = this.slabs[this.slab[i]!]!.buf;
    const off = this.off[i]!;
    // TypedArray set, not Buffer#copy: a builtin memmove, no JS of its own to compile.
    if (hdr.length > 0) buf.set(hdr, off);
    buf.set(data, off + hdr.length);
    this.size++;
  }

  /**
   * Removes `seq`'s message; false when it has none. Its slab's survivors move once it is
   * mostly dead, unless messages go from the front of the stream (limits, age, acks in
   * order), where the survivors are the next to go and the slab empties by itself.
   */
  remove(seq: number, fromFront: boolean): boolean {
    const i = this.slot(seq);
    if (i < 0) return false;
    const id = this.slab[i]!;
    this.slab[i] = NONE;
    this.size--;
    const s = this.slabs[id]!;
    s.live -= this.hl[i]! + this.dl[i]!;
    if (this.size === 0) {
      this.clear();
      return true;
    }
    if (s.live === 0 && id !== this.cur) this.freeSlab(id);
    else if (!fromFront && id !== this.cur && s.live * 4 <= s.used) this.evacuate(id, s);
    if (i === this.len - 1) {
      // The last went (a truncate): its sequence may be stored again.
      let n = i;
      while (this.slab[n - 1] === NONE) n--;
      this.len = n;
    }
    if (i === this.head) this.advanceHead(i + 1);
    return true;
  }

  /** Zeroes `seq`'s bytes in place (a secure delete), before its removal. */
  erase(seq: number): void {
    const i = this.slot(seq);
    if (i < 0) return;
    const off = this.off[i]!;
    this.slabs[this.slab[i]!]!.buf.fill(0, off, off + this.hl[i]! + this.dl[i]!);
  }

  /** Everything was removed (purge, delete). */
  clear(): void {
    this.size = 0;
    this.resetSlots(0);
    this.slabs = [];
    this.freeSlabs = [];
    this.cur = NONE;
    this.nextSize = FIRST_SLAB;
  }

  private resetSlots(base: number): void {
    this.base = base;
    this.len = 0;
    this.head = 0;
    // Columns a large stream grew are let go once it is empty.
    if (this.slab.length > MIN_SLOTS) this.resize(MIN_SLOTS);
  }

  /** Room for slot i's bytes in the current slab, or in a slab of its own when large. */
  private place(i: number, seq: number): void {
    const n = this.hl[i]! + this.dl[i]!;
    let id = this.cur;
    if (n > LARGE) id = this.newSlab(n);
    else if (id === NONE || this.slabs[id]!.used + n > this.slabs[id]!.buf.length) {
      const old = id;
      id = this.cur = this.newSlab(Math.max(this.nextSize, n));
      if (this.nextSize < SLAB) this.nextSize *= 2;
      if (old !== NONE && this.slabs[old]!.live === 0) this.freeSlab(old);
    }
    const s = this.slabs[id]!;
    this.slab[i] = id;
    this.off[i] = s.used;
    s.used += n;
    s.live += n;
    s.seqs.push(seq);
  }

  /**
   * Copies a mostly dead slab's survivors into the current one. Each slab is emptied at
   * most once; the survivors' bytes (a quarter at most) are copied again, so the copying
   * stays within a third of what was stored. Views made before stay valid: the old slab
   * is never written again.
   */
  private evacuate(id: number, s: Slab): void {
    const seqs = s.seqs;
    for (let k = 0; k < seqs.length; k++) {
      const i = seqs[k]! - this.base;
      if (i < 0 || i >= this.len || this.slab[i] !== id) continue;
      const from = this.off[i]!;
      this.place(i, seqs[k]!);
      const to = this.slabs[this.slab[i]]!;
      s.buf.copy(to.buf, this.off[i], from, from + this.hl[i]! + this.dl[i]!);
    }
    this.freeSlab(id);
  }

  private newSlab(size: number): number {
    const s: Slab = { buf: Buffer.allocUnsafeSlow(size), used: 0, live: 0, seqs: [] };
    const id = this.freeSlabs.pop();
    if (id === undefined) return this.slabs.push(s) - 1;
    this.slabs[id] = s;
    return id;
  }

  private freeSlab(id: number): void {
    this.slabs[id] = undefined;
    this.freeSlabs.push(id);
  }

  /** The first message is gone: find the next, and cut the dead front off once it is most of the log. */
  private advanceHead(from: number): void {
    const slab = this.slab;
    let h = from;
    while (slab[h] === NONE) h++;
    this.head = h;
    if (h < MIN_SLOTS || h * 2 < this.len) return;
    const n = this.len - h;
    this.slab.copyWithin(0, h, this.len);
    this.off.copyWithin(0, h, this.len);
    this.hl.copyWithin(0, h, this.len);
    this.dl.copyWithin(0, h, this.len);
    this.subj.copyWithin(0, h, this.len);
    this.tsCol.copyWithin(0, h, this.len);
    this.base += h;
    this.len = n;
    this.head = 0;
    // A stream that shrank for good gives its columns' room back.
    if (this.slab.length >= 4 * MIN_SLOTS && n * 4 < this.slab.length)
      this.resize(Math.max(MIN_SLOTS, n * 2));
  }

  private resize(cap: number): void {
    const len = this.len;
    this.slab = grown(this.slab, new Int32Array(cap), len);
    this.off = grown(this.off, new Int32Array(cap), len);
    this.hl = grown(this.hl, new Int32Array(cap), len);
    this.dl = grown(this.dl, new Int32Array(cap), len);
    this.subj = grown(this.subj, new Int32Array(cap), len);
    this.tsCol = grown(this.tsCol, new Float64Array(cap), len);
  }
}

function grown<T extends Int32Array | Float64Array>(from: T, to: T, len: number): T {
  to.set(from.subarray(0, len));
  return to;
}
