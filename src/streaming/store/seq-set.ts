// A set of message sequences (non-negative safe integers) made for a subscription's
// pending messages: sequences are added in rising order as they are sent and removed
// as they are acked, so the live ones sit in a window that slides forward. A JS Set
// under that churn (a 16,384-message window: each add and delete leaves a deleted
// entry behind, and the table is rebuilt over and over) cost 330-360 ns per add and
// delete; here the window is a ring of bits, a few ns each.
//
// Sequences below the window (an old message still unacked after the window moved
// on, or one added out of order) go to a plain Set beside it. The window grows while
// it is at least a quarter full, up to MAX_WORDS words; past that, or when it is
// sparse, what it leaves behind moves to that Set. Iteration is in ascending order.

const MIN_WORDS = 32;
const MAX_WORDS = 32 * 1024;

/** Placeholder of the fields until the constructor's clear() (see there). */
const NO_WORDS = new Uint32Array(0);

export class SeqSet implements Set<number> {
  /** words[(head + k) & mask] holds sequences base + 32k .. base + 32k + 31. */
  private words = NO_WORDS;
  private mask = -1;
  private head = -1;
  /** First sequence of the window, a multiple of 32. */
  private base = -1;
  /** Sequences held in the window. */
  private bits = -1;
  /** Sequences below the window. */
  private low: Set<number> | null = null;

  constructor(values?: Iterable<number>) {
    // Each field is written twice (placeholder, then clear()). V8 treats a field
    // written only once as a constant, compiles code that relies on it, and throws
    // that code away at the field's first change: for a pending set, the first
    // delivery, growth or slide of a fresh server's first catch-up, in the middle of
    // it, with every delivery and ack function inlining these methods.
    this.clear();
    if (values !== undefined) for (const v of values) this.add(v);
  }

  get size(): number {
    return this.bits + (this.low === null ? 0 : this.low.size);
  }

  has(value: number): boolean {
    const i = value - this.base;
    if (i < 0) return this.low !== null && this.low.has(value);
    if (i >= (this.mask + 1) * 32) return false;
    return (this.words[(this.head + (i >>> 5)) & this.mask]! & (1 << (i & 31))) !== 0;
  }

  add(value: number): this {
    if (
      this.bits === 0 &&
      (value >= this.base + (this.mask + 1) * 32 ||
        (value < this.base && (this.low === null || this.low.size === 0)))
    ) {
      // An empty window moves to the value (its words are all zero); never back over
      // values kept below it.
      this.base = value - (value % 32);
      this.head = 0;
    }
    let i = value - this.base;
    if (i < 0) {
      (this.low ??= new Set<number>()).add(value);
      return this;
    }
    if (i >= (this.mask + 1) * 32) {
      this.reach(value);
      i = value - this.base;
    }
    const w = (this.head + (i >>> 5)) & this.mask;
    const bit = 1 << (i & 31);
    const word = this.words[w]!;
    if ((word & bit) === 0) {
      this.words[w] = word | bit;
      this.bits++;
    }
    return this;
  }

  delete(value: number): boolean {
    const i = value - this.base;
    if (i < 0) return this.low !== null && this.low.delete(value);
    if (i >= (this.mask + 1) * 32) return false;
    const w = (this.head + (i >>> 5)) & this.mask;
    const bit = 1 << (i & 31);
    const word = this.words[w]!;
    if ((word & bit) === 0) return false;
    this.words[w] = word & ~bit;
    this.bits--;
    return true;
  }

  clear(): void {
    this.words = new Uint32Array(MIN_WORDS);
    this.mask = MIN_WORDS - 1;
    this.head = 0;
    this.base = 0;
    this.bits = 0;
    this.low = null;
  }

  // Makes the window reach `value` (past its end): grown while dense enough, else
  // slid forward, the words it leaves moved to `low`.
  private reach(value: number): void {
    while (value - this.base >= (this.mask + 1) * 32) {
      const words = this.mask + 1;
      if (words < MAX_WORDS && this.bits * 4 >= words * 32) {
        this.grow();
        continue;
      }
      const newBase = value - (value % 32) - (words - 1) * 32;
      let leaving = Math.min(words, (newBase - this.base) / 32);
      while (leaving-- > 0) {
        const word = this.words[this.head]!;
        if (word !== 0) this.spill(word, this.base);
        this.words[this.head] = 0;
        this.head = (this.head + 1) & this.mask;
        this.base += 32;
      }
      if (this.base < newBase) {
        // Everything left (the window was empty past what it spilled): jump.
        this.base = newBase;
        this.head = 0;
      }
    }
  }

  private spill(word: number, from: number): void {
    const low = (this.low ??= new Set<number>());
    for (let b = 0; b < 32; b++) {
      if ((word & (1 << b)) !== 0) {
        low.add(from + b);
        this.bits--;
      }
    }
  }

  private grow(): void {
    const words = this.mask + 1;
    const grown = new Uint32Array(words * 2);
    for (let k = 0; k < words; k++) grown[k] = this.words[(this.head + k) & this.mask]!;
    this.words = grown;
    this.mask = words * 2 - 1;
    this.head = 0;
  }

  *values(): SetIterator<number> {
    if (this.low !== null && this.low.size > 0) {
      yield* [...this.low].sort((a, b) => a - b);
    }
    const words = this.mask + 1;
    for (let k = 0; k < words && this.bits > 0; k++) {
      const word = this.words[(this.head + k) & this.mask]!;
      if (word === 0) continue;
      for (let b = 0; b < 32; b++) if ((word & (1 << b)) !== 0) yield this.base + k * 32 + b;
    }
  }

  keys(): SetIterator<number> {
    return this.values();
  }

  *entries(): SetIterator<[number, number]> {
    for (const v of this.values()) yield [v, v];
  }

  [Symbol.iterator](): SetIterator<number> {
    return this.values();
  }

  forEach(fn: (value: number, key: number, set: Set<number>) => void, thisArg?: unknown): void {
    for (const v of this.values()) fn.call(thisArg, v, v, this);
  }

  get [Symbol.toStringTag](): string {
    return 'SeqSet';
  }
}
