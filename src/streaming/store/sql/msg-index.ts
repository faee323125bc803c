// What the SQL store keeps in memory for every stored message: its size and its
// timestamp, in typed arrays (12 bytes a message, no object). That is all the limits
// need (max_msgs / max_bytes drop the oldest and must know its size, max_age its
// age) and all sequenceFromTimestamp needs, so none of them costs a query. Entry i
// is sequence first + i: a channel's stored sequences are contiguous.
import Long from 'long';

const INITIAL = 1024;

export class MsgIndex {
  private sizes: Int32Array<ArrayBuffer> = new Int32Array(INITIAL);
  private hi: Int32Array<ArrayBuffer> = new Int32Array(INITIAL);
  private lo: Int32Array<ArrayBuffer> = new Int32Array(INITIAL);
  /** Live entries are [head, tail). */
  private head = 0;
  private tail = 0;

  get length(): number {
    return this.tail - this.head;
  }

  push(size: number, timestamp: Long): void {
    if (this.tail === this.sizes.length) this.grow();
    const i = this.tail++;
    this.sizes[i] = size;
    this.hi[i] = timestamp.high;
    this.lo[i] = timestamp.low;
  }

  /** Removes the oldest entry and returns its size. */
  shift(): number {
    return this.sizes[this.head++]!;
  }

  /** Timestamp of entry i (0 = oldest). */
  timestamp(i: number): Long {
    const at = this.head + i;
    return Long.fromBits(this.lo[at]!, this.hi[at]!);
  }

  /** Index of the first entry with timestamp >= ts (length if none): timestamps never decrease. */
  firstAtOrAfter(ts: Long): number {
    let lo = this.head;
    let hi = this.tail;
    const th = ts.high;
    const tl = ts.low >>> 0;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const mh = this.hi[mid]!;
      const before = mh < th || (mh === th && this.lo[mid]! >>> 0 < tl);
      if (before) lo = mid + 1;
      else hi = mid;
    }
    return lo - this.head;
  }

  clear(): void {
    this.head = 0;
    this.tail = 0;
    if (this.sizes.length > INITIAL) {
      this.sizes = new Int32Array(INITIAL);
      this.hi = new Int32Array(INITIAL);
      this.lo = new Int32Array(INITIAL);
    }
  }

  // Compacts when at least half is dead space, doubles otherwise.
  private grow(): void {
    const live = this.length;
    const cap = live * 2 <= this.sizes.length ? this.sizes.length : this.sizes.length * 2;
    const move = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const b = cap === a.length ? a : new Int32Array(cap);
      // set() copies through a temporary when source and target share a buffer.
      b.set(a.subarray(this.head, this.tail), 0);
      return b;
    };
    this.sizes = move(this.sizes);
    this.hi = move(this.hi);
    this.lo = move(this.lo);
    this.head = 0;
    this.tail = live;
  }
}
