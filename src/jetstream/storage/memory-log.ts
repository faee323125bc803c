// The memory store's log: messages in an array indexed by sequence (a Map by sequence
// cost a hash insertion, and its rehashing, per message), and their bytes copied into
// large shared slabs (a Buffer of its own per message cost an ArrayBuffer from Node's
// 8 KiB pool every few messages: a fifth of a 1 KiB publish's CPU). A slab is never
// written twice, so a view of it handed out (a load, an outbound buffer) stays valid for
// as long as it is held; a slab that removals leave mostly dead has its survivors copied
// into the current one, so that a few long-lived messages (the keys of a KV that is
// rarely written) do not hold many slabs.

import type { StoredMsg } from './types.js';

/**
 * A stored message: its bytes are `buf[off, off + hl)` (header block) and
 * `buf[off + hl, off + hl + dl)` (data). The views a load hands out are made on the first
 * load and kept: a message nobody reads (a publish-only stream) costs no view, and the
 * long-lived objects per message the collector must trace are this one alone.
 */
export interface MemMsg {
  readonly subject: string;
  readonly seq: number;
  readonly ts: number;
  buf: Buffer;
  off: number;
  readonly hl: number;
  readonly dl: number;
  /** The slab holding the bytes; null for a large message (a buffer of its own) or once removed. */
  slab: Slab | null;
  hdr: Buffer | null;
  data: Buffer | null;
}

interface Slab {
  readonly buf: Buffer;
  used: number;
  /** Bytes of messages still stored. */
  live: number;
  /** Every message copied into it (removed ones have slab === null). */
  readonly msgs: MemMsg[];
}

/** Below glibc's mmap threshold (128 KiB): slabs come from the heap, not fresh pages. */
const SLAB = 64 * 1024;
/** A stream's first slab: an idle or small stream (a KV bucket of a few keys) costs little. */
const FIRST_SLAB = 4 * 1024;
/** Larger messages get a buffer of their own. */
const LARGE = 8 * 1024;
const EMPTY = Buffer.alloc(0);

/** Fills `into` (or a new StoredMsg) with `m`, its views made once. */
export function loadInto(m: MemMsg, into: StoredMsg | undefined): StoredMsg {
  let data = m.data;
  if (data === null) {
    m.hdr = m.hl === 0 ? EMPTY : m.buf.subarray(m.off, m.off + m.hl);
    data = m.data = m.buf.subarray(m.off + m.hl, m.off + m.hl + m.dl);
  }
  if (into === undefined) return { subject: m.subject, seq: m.seq, ts: m.ts, hdr: m.hdr!, data };
  into.subject = m.subject;
  into.seq = m.seq;
  into.ts = m.ts;
  into.hdr = m.hdr!;
  into.data = data;
  return into;
}

export class MessageSlabs {
  /** No slab until the first message; then slabs double from FIRST_SLAB up to SLAB. */
  private cur: Slab = newSlab(0);
  private nextSize = FIRST_SLAB;

  /** A message holding copies of the given bytes (which the caller may reuse). */
  make(subject: string, seq: number, ts: number, hdr: Buffer, data: Buffer): MemMsg {
    const m: MemMsg = {
      subject,
      seq,
      ts,
      buf: EMPTY,
      off: 0,
      hl: hdr.length,
      dl: data.length,
      slab: null,
      hdr: null,
      data: null,
    };
    this.place(m);
    // TypedArray set, not Buffer#copy: a builtin memmove, no JS of its own to compile.
    if (m.hl > 0) m.buf.set(hdr, m.off);
    m.buf.set(data, m.off + m.hl);
    return m;
  }

  /** Room for m's bytes in a slab (or a buffer of its own): sets m.buf and m.off. */
  private place(m: MemMsg): void {
    const n = m.hl + m.dl;
    if (n > LARGE) {
      m.buf = Buffer.allocUnsafeSlow(n);
      m.off = 0;
      m.slab = null;
      return;
    }
    let s = this.cur;
    if (s.used + n > s.buf.length) {
      s = this.cur = newSlab(Math.max(this.nextSize, n));
      if (this.nextSize < SLAB) this.nextSize *= 2;
    }
    m.buf = s.buf;
    m.off = s.used;
    s.used += n;
    s.live += n;
    s.msgs.push(m);
    m.slab = s;
  }

  /**
   * `m` is no longer stored: its slab's survivors move once it is mostly dead, unless
   * messages go from the front of the stream (limits, age, acks in order), where the
   * survivors are the next to go and the slab empties by itself.
   */
  release(m: MemMsg, fromFront: boolean): void {
    const s = m.slab;
    if (s === null) return;
    m.slab = null;
    s.live -= m.hl + m.dl;
    if (fromFront || s === this.cur || s.live * 4 > s.used) return;
    // Each slab is emptied at most once; the survivors' bytes (a quarter at most) are
    // copied again, so the copying stays within a third of what was stored. Views made
    // before stay valid: the old slab is never written again.
    const msgs = s.msgs;
    for (let i = 0; i < msgs.length; i++) {
      const k = msgs[i]!;
      if (k.slab !== s) continue;
      const from = k.buf;
      const off = k.off;
      this.place(k);
      from.copy(k.buf, k.off, off, off + k.hl + k.dl);
      k.hdr = null;
      k.data = null;
    }
    msgs.length = 0;
    s.live = 0;
  }

  /** Everything was removed (purge, delete). */
  reset(): void {
    this.cur = newSlab(0);
    this.nextSize = FIRST_SLAB;
  }
}

function newSlab(size: number): Slab {
  return { buf: size === 0 ? EMPTY : Buffer.allocUnsafeSlow(size), used: 0, live: 0, msgs: [] };
}

/**
 * Messages by sequence: slots from `base` on, undefined where a sequence has no message
 * (removed, skipped). The dead slots before the first message (`head` of them) are cut
 * off once they are many and most of the array, so it holds about what the stream holds.
 */
export class SeqLog {
  private slots: (MemMsg | undefined)[] = [];
  private base = 0;
  /** slots[0, head) are all undefined. */
  private head = 0;
  /** Messages stored. */
  size = 0;

  get(seq: number): MemMsg | undefined {
    const i = seq - this.base;
    return i >= 0 && i < this.slots.length ? this.slots[i] : undefined;
  }

  has(seq: number): boolean {
    return this.get(seq) !== undefined;
  }

  /** Stores `m` at its sequence. */
  set(m: MemMsg): void {
    if (this.size === 0) this.clear();
    if (this.slots.length === 0) this.base = m.seq;
    let i = m.seq - this.base;
    if (i < 0) {
      // Below the base (never so for new messages, which only go up): shift up.
      this.slots = new Array<MemMsg | undefined>(-i).fill(undefined).concat(this.slots);
      this.base = m.seq;
      this.head = 0;
      i = 0;
    }
    const s = this.slots;
    while (s.length < i) s.push(undefined);
    if (i === s.length) s.push(m);
    else {
      if (s[i] !== undefined) this.size--;
      s[i] = m;
    }
    this.size++;
    if (i < this.head) this.head = i;
  }

  delete(seq: number): boolean {
    const i = seq - this.base;
    const s = this.slots;
    if (i < 0 || i >= s.length || s[i] === undefined) return false;
    s[i] = undefined;
    this.size--;
    if (this.size === 0) {
      this.clear();
      return true;
    }
    if (i === this.head) {
      let h = i + 1;
      while (s[h] === undefined) h++;
      this.head = h;
      if (h >= 1024 && h * 2 >= s.length) {
        this.slots = s.slice(h);
        this.base += h;
        this.head = 0;
      }
    }
    return true;
  }

  clear(): void {
    this.slots = [];
    this.base = 0;
    this.head = 0;
    this.size = 0;
  }
}
