// The memory store's log: messages in an array indexed by sequence (a Map by sequence
// cost a hash insertion, and its rehashing, per message), and their bytes copied into
// large shared slabs (a Buffer of its own per message cost an ArrayBuffer from Node's
// 8 KiB pool every few messages: a fifth of a 1 KiB publish's CPU). A slab is never
// written twice, so a view of it handed out (a load, an outbound buffer) stays valid for
// as long as it is held; a slab that removals leave mostly dead has its survivors copied
// into the current one, so that a few long-lived messages (the keys of a KV that is
// rarely written) do not hold many slabs.

import type { StoredMsg } from './types.js';

/** A stored message and where its bytes are. */
export interface MemMsg extends StoredMsg {
  /** The slab holding hdr and data; null for a large message (a buffer of its own) or once removed. */
  slab: Slab | null;
}

interface Slab {
  readonly buf: Buffer;
  used: number;
  /** Bytes of messages still stored. */
  live: number;
  /** Every message copied into it (removed ones have slab === null). */
  readonly msgs: MemMsg[];
}

const SLAB = 128 * 1024;
/** Larger messages get a buffer of their own. */
const LARGE = 16 * 1024;
const EMPTY = Buffer.alloc(0);

export class MessageSlabs {
  private cur: Slab = newSlab();

  /** A message whose hdr and data are copies of the given bytes (which the caller may reuse). */
  make(subject: string, seq: number, ts: number, hdr: Buffer, data: Buffer): MemMsg {
    const m: MemMsg = { subject, seq, ts, hdr: EMPTY, data: EMPTY, slab: null };
    this.place(m, hdr, data);
    return m;
  }

  private place(m: MemMsg, hdr: Buffer, data: Buffer): void {
    const hl = hdr.length;
    const n = hl + data.length;
    let buf: Buffer;
    let at = 0;
    if (n > LARGE) {
      buf = Buffer.allocUnsafeSlow(n);
      m.slab = null;
    } else {
      let s = this.cur;
      if (s.used + n > s.buf.length) s = this.cur = newSlab();
      buf = s.buf;
      at = s.used;
      s.used += n;
      s.live += n;
      s.msgs.push(m);
      m.slab = s;
    }
    if (hl > 0) {
      hdr.copy(buf, at);
      m.hdr = buf.subarray(at, at + hl);
    } else m.hdr = EMPTY;
    data.copy(buf, at + hl);
    m.data = buf.subarray(at + hl, at + n);
  }

  /** `m` is no longer stored: its slab's survivors move once it is mostly dead. */
  release(m: MemMsg): void {
    const s = m.slab;
    if (s === null) return;
    m.slab = null;
    s.live -= m.hdr.length + m.data.length;
    if (s === this.cur || s.live * 4 > s.used) return;
    // Each slab is emptied at most once; the survivors' bytes (a quarter at most) are
    // copied again, so the copying stays within a third of what was stored.
    const msgs = s.msgs;
    for (let i = 0; i < msgs.length; i++) {
      const k = msgs[i]!;
      if (k.slab === s) this.place(k, k.hdr, k.data);
    }
    msgs.length = 0;
    s.live = 0;
  }

  /** Everything was removed (purge, delete). */
  reset(): void {
    this.cur = newSlab();
  }
}

function newSlab(): Slab {
  return { buf: Buffer.allocUnsafeSlow(SLAB), used: 0, live: 0, msgs: [] };
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
