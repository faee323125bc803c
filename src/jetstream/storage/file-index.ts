// What the file store keeps in memory: per block, one slot per sequence (offset and
// length of its record, subject id, timestamp: 20 bytes a message, never the payload),
// and the subject index (per subject: count, first, last) that per-subject limits,
// last-by-subject and filtered loads use.
import { subjectMatches } from '../../subjects/validate.js';

const FIRST_SLOTS = 16;
const NO_SLOTS = new Uint32Array(0);
const NO_TIMES = new Float64Array(0);

/** The slots of one block file: sequence `base + i` is slot i; offset 0 means no message. */
export class BlockSlots {
  count = 0;
  off: Uint32Array;
  len: Uint32Array;
  sid: Uint32Array;
  ts: Float64Array;
  live = 0;
  liveBytes = 0;

  /**
   * A new block's arrays start small and double: a fresh server's first block calls
   * grow() from add() a few times before V8 optimises add() (the first calls have no
   * feedback to record it in). Started at a thousand, the 1,025th message of the first
   * block would be the first to need it, and send the optimised publish path back to
   * the interpreter there ("insufficient type feedback").
   */
  constructor(
    public base: number,
    capacity = FIRST_SLOTS,
  ) {
    // Each written twice (see LogFile's constructor): the first growth, a thousand
    // messages into a block, is no first change of a constant.
    this.off = this.len = this.sid = NO_SLOTS;
    this.ts = NO_TIMES;
    this.off = new Uint32Array(capacity);
    this.len = new Uint32Array(capacity);
    this.sid = new Uint32Array(capacity);
    this.ts = new Float64Array(capacity);
  }

  get last(): number {
    return this.base + this.count - 1;
  }

  /** Sequence `seq` (≥ base + count) stored at `off`; the sequences skipped are empty slots. */
  add(seq: number, off: number, len: number, sid: number, ts: number): void {
    // A store on every call, not in a branch first taken by a new block's first message:
    // a named store with no feedback yet sends the optimised write path back to the
    // interpreter there (V8 allocates feedback only once a function has run a few times).
    this.base = this.count === 0 ? seq : this.base;
    const i = seq - this.base;
    if (i >= this.off.length) this.grow(i + 1);
    for (let k = this.count; k < i; k++) {
      this.off[k] = 0;
      this.ts[k] = ts;
    }
    this.off[i] = off;
    this.len[i] = len;
    this.sid[i] = sid;
    this.ts[i] = ts;
    this.count = i + 1;
    if (off !== 0) {
      this.live++;
      this.liveBytes += len;
    }
  }

  private grow(min: number): void {
    let n = Math.max(this.off.length * 2, FIRST_SLOTS);
    while (n < min) n *= 2;
    const off = new Uint32Array(n);
    off.set(this.off);
    this.off = off;
    const len = new Uint32Array(n);
    len.set(this.len);
    this.len = len;
    const sid = new Uint32Array(n);
    sid.set(this.sid);
    this.sid = sid;
    const ts = new Float64Array(n);
    ts.set(this.ts);
    this.ts = ts;
  }

  /** Frees unused capacity (a block no longer written). */
  shrink(): void {
    if (this.off.length === this.count) return;
    this.off = this.off.slice(0, this.count);
    this.len = this.len.slice(0, this.count);
    this.sid = this.sid.slice(0, this.count);
    this.ts = this.ts.slice(0, this.count);
  }
}

/** Per-subject state; `first`/`last` are exact unless marked stale (then bounds). */
export class SubjectInfo {
  msgs = 0;
  first = 0;
  last = 0;
  firstStale = false;
  lastStale = false;
  /** Every sequence of the subject while it has 3..SMALL_LIST messages (KV histories). */
  seqs: number[] | null = null;
  /** A one-entry cache of the last wildcard filter this subject was matched against. */
  matchFilter = '';
  matchResult = false;

  constructor(
    readonly name: string,
    readonly id: number,
  ) {}

  matches(filter: string): boolean {
    if (this.matchFilter !== filter) {
      this.matchFilter = filter;
      this.matchResult = subjectMatches(this.name, filter);
    }
    return this.matchResult;
  }
}

/** Above this many messages a subject keeps only first/last and is scanned when stale. */
export const SMALL_LIST = 64;

/** Subjects by name and by id (ids are reused once a subject has no message left). */
export class SubjectTable {
  readonly byName = new Map<string, SubjectInfo>();
  byId: (SubjectInfo | undefined)[] = [undefined];
  private free: number[] = [];

  get size(): number {
    return this.byName.size;
  }

  intern(name: string): SubjectInfo {
    let info = this.byName.get(name);
    if (info === undefined) {
      const id = this.free.pop() ?? this.byId.length;
      info = new SubjectInfo(name, id);
      this.byId[id] = info;
      this.byName.set(name, info);
    }
    return info;
  }

  /** A message of `info` at `seq`, after all its others. */
  added(info: SubjectInfo, seq: number): void {
    const n = ++info.msgs;
    if (n === 1) {
      info.first = seq;
      info.firstStale = false;
      info.lastStale = false;
    } else if (n === 3 && !info.firstStale && !info.lastStale) {
      info.seqs = [info.first, info.last, seq];
    } else if (info.seqs !== null) {
      if (n > SMALL_LIST) info.seqs = null;
      else info.seqs.push(seq);
    }
    info.last = seq;
    info.lastStale = false;
  }

  /** The message at `seq` of `info` is gone. */
  removed(info: SubjectInfo, seq: number): void {
    const n = --info.msgs;
    if (n === 0) {
      this.byName.delete(info.name);
      this.byId[info.id] = undefined;
      this.free.push(info.id);
      info.seqs = null;
      return;
    }
    const list = info.seqs;
    if (list !== null) {
      const at = seq === list[0] ? 0 : list.indexOf(seq);
      if (at >= 0) list.splice(at, 1);
      info.first = list[0]!;
      info.last = list[list.length - 1]!;
      if (n <= 2) info.seqs = null;
      return;
    }
    if (seq === info.first && !info.firstStale) {
      if (n === 1 && !info.lastStale) info.first = info.last;
      else {
        info.first = seq + 1;
        info.firstStale = true;
      }
    } else if (seq === info.last && !info.lastStale) {
      if (n === 1 && !info.firstStale) info.last = info.first;
      else {
        info.last = seq - 1;
        info.lastStale = true;
      }
    }
  }

  /** Forgets subjects interned for records found dead (recovery). */
  dropUnused(): void {
    for (const info of [...this.byName.values()]) {
      if (info.msgs > 0) continue;
      this.byName.delete(info.name);
      this.byId[info.id] = undefined;
      this.free.push(info.id);
    }
  }

  clear(): void {
    this.byName.clear();
    this.byId = [undefined];
    this.free = [];
  }
}
