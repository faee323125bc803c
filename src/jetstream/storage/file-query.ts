// The read side of a file stream: its blocks' slots and subject index in memory, and
// every query the engine asks (loads, filtered state, per-subject state, sequence for
// a time, deleted details). Payloads come from LogFile.read: the block's unwritten or
// recent chunks, else the pages read back from disk.
import {
  blankStoredSpan,
  isAllSubjects,
  msgOf,
  type SimpleState,
  type StoredMsg,
  type StoredSpan,
} from './types.js';
import { BlockSlots, SubjectTable, type SubjectInfo } from './file-index.js';
import type { LogFile } from './file-io.js';
import { msgParts } from './file-record.js';
import { hasWildcard } from '../../subjects/validate.js';

/**
 * A block of a file stream: its file, its slots, its tombstones. A class, not an object
 * literal: V8 makes a literal's boilerplate at the literal's second run, and for a fresh
 * stream that was its first block roll (8 MB in), whose boilerplate widened the fields'
 * types and threw away the optimised publish path that relied on them (storeMsg).
 */
export class Block {
  /** `<id>.dlt`: tombstones of this block's interior deletes (created on the first). */
  deletes: LogFile | undefined = undefined;
  compacting = false;

  constructor(
    readonly id: number,
    public file: LogFile,
    public slots: BlockSlots,
  ) {}
}

/** The first of a subject's few ascending sequences at or after `from`, else 0 (no closure per read). */
function firstAtOrAfter(seqs: readonly number[], from: number): number {
  for (let i = 0; i < seqs.length; i++) if (seqs[i]! >= from) return seqs[i]!;
  return 0;
}

export abstract class StreamQueries {
  protected blocks: Block[] = [];
  protected readonly subjects = new SubjectTable();
  protected msgs = 0;
  protected bytes = 0;
  protected firstSeq = 0;
  // Nanosecond times: -0 makes them doubles from the start (see blankStoredMsg).
  protected firstTs = -0;
  protected lastSeq = 0;
  protected lastTs = -0;
  private hint = 0;
  /** Where loadMsg finds a message before it makes the views. */
  private readonly scratch = blankStoredSpan();

  /** Index in `blocks` of the block holding `seq`, or of the first block after it (may be length). */
  protected blockIndex(seq: number): number {
    const blocks = this.blocks;
    const h = blocks[this.hint];
    if (h !== undefined && seq >= h.slots.base && seq <= h.slots.last) return this.hint;
    let lo = 0;
    let hi = blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (blocks[mid]!.slots.last < seq) lo = mid + 1;
      else hi = mid;
    }
    if (lo < blocks.length) this.hint = lo;
    return lo;
  }

  /** The block holding a live message `seq` (slot index in `slotAt`), or undefined. */
  protected liveBlock(seq: number): Block | undefined {
    const b = this.blocks[this.blockIndex(seq)];
    if (b === undefined || seq < b.slots.base || b.slots.off[seq - b.slots.base] === 0)
      return undefined;
    return b;
  }

  /** The first live sequence ≥ `from` whose subject id passes `want` (0: any), or 0. */
  protected nextLive(from: number, sid: number, filter: string | null, to = Infinity): number {
    const blocks = this.blocks;
    for (let bi = this.blockIndex(from); bi < blocks.length; bi++) {
      const s = blocks[bi]!.slots;
      if (s.live === 0) continue;
      let i = from > s.base ? from - s.base : 0;
      const end = Math.min(s.count, to - s.base + 1);
      const { off, sid: ids } = s;
      if (filter !== null) {
        const byId = this.subjects.byId;
        for (; i < end; i++) if (off[i] !== 0 && byId[ids[i]!]!.matches(filter)) return s.base + i;
      } else if (sid !== 0) {
        for (; i < end; i++) if (off[i] !== 0 && ids[i] === sid) return s.base + i;
      } else {
        for (; i < end; i++) if (off[i] !== 0) return s.base + i;
      }
      if (s.base + s.count > to) return 0;
    }
    return 0;
  }

  /** The last live sequence ≤ `from` whose subject passes (as nextLive), or 0. */
  protected prevLive(from: number, sid: number, filter: string | null): number {
    const blocks = this.blocks;
    let bi = Math.min(this.blockIndex(from), blocks.length - 1);
    for (; bi >= 0; bi--) {
      const s = blocks[bi]!.slots;
      if (s.live === 0) continue;
      let i = Math.min(from - s.base, s.count - 1);
      const { off, sid: ids } = s;
      if (filter !== null) {
        const byId = this.subjects.byId;
        for (; i >= 0; i--) if (off[i] !== 0 && byId[ids[i]!]!.matches(filter)) return s.base + i;
      } else if (sid !== 0) {
        for (; i >= 0; i--) if (off[i] !== 0 && ids[i] === sid) return s.base + i;
      } else {
        for (; i >= 0; i--) if (off[i] !== 0) return s.base + i;
      }
    }
    return 0;
  }

  protected firstOf(info: SubjectInfo): number {
    if (info.firstStale) {
      info.first = this.nextLive(info.first, info.id, null);
      info.firstStale = false;
    }
    return info.first;
  }

  protected lastOf(info: SubjectInfo): number {
    if (info.lastStale) {
      info.last = this.prevLive(info.last, info.id, null);
      info.lastStale = false;
    }
    return info.last;
  }

  /** Fills `into` with where the live message `seq` of block `b` lies. */
  protected fillSpan(b: Block, seq: number, into: StoredSpan): StoredSpan {
    const s = b.slots;
    const i = seq - s.base;
    const r = b.file.read(s.off[i]!, s.len[i]!);
    const p = msgParts(r.buf, r.at);
    into.subject = this.subjects.byId[s.sid[i]!]!.name;
    into.seq = seq;
    into.ts = s.ts[i]!;
    into.buf = r.buf;
    into.hdrStart = p.hdrStart;
    into.dataStart = p.hdrEnd;
    into.dataEnd = p.dataEnd;
    return into;
  }

  protected loadSeq(seq: number, into?: StoredMsg): StoredMsg | undefined {
    if (seq <= 0) return undefined;
    const b = this.liveBlock(seq);
    return b === undefined ? undefined : msgOf(this.fillSpan(b, seq, this.scratch), into);
  }

  loadMsg(seq: number, into?: StoredMsg): StoredMsg | undefined {
    return this.loadSeq(seq, into);
  }

  loadSpan(seq: number, into: StoredSpan): StoredSpan | undefined {
    if (seq <= 0) return undefined;
    const b = this.liveBlock(seq);
    return b === undefined ? undefined : this.fillSpan(b, seq, into);
  }

  loadNextMsg(
    filter: string,
    wildcard: boolean,
    start: number,
    into?: StoredMsg,
  ): StoredMsg | undefined {
    const seq = this.nextSeq(filter, wildcard, start);
    return seq === 0 ? undefined : this.loadSeq(seq, into);
  }

  loadNextSpan(
    filter: string,
    wildcard: boolean,
    start: number,
    into: StoredSpan,
  ): StoredSpan | undefined {
    const seq = this.nextSeq(filter, wildcard, start);
    return seq === 0 ? undefined : this.loadSpan(seq, into);
  }

  /** The first live sequence at or after `start` whose subject matches `filter`, or 0. */
  private nextSeq(filter: string, wildcard: boolean, start: number): number {
    const from = Math.max(start, this.firstSeq, 1);
    if (from > this.lastSeq || this.msgs === 0) return 0;
    if (isAllSubjects(filter)) return this.nextLive(from, 0, null);
    if (wildcard) return this.nextLive(from, 0, filter);
    const info = this.subjects.byName.get(filter);
    if (info === undefined) return 0;
    const first = this.firstOf(info);
    if (from <= first) return first;
    if (info.seqs !== null) return firstAtOrAfter(info.seqs, from);
    return this.nextLive(from, info.id, null, this.lastOf(info));
  }

  loadLastMsg(filter: string, into?: StoredMsg): StoredMsg | undefined {
    if (this.msgs === 0) return undefined;
    let seq = 0;
    if (isAllSubjects(filter)) seq = this.prevLive(this.lastSeq, 0, null);
    else if (!hasWildcard(filter)) {
      const info = this.subjects.byName.get(filter);
      if (info !== undefined) seq = this.lastOf(info);
    } else if (this.subjects.size < this.lastSeq - this.firstSeq) {
      for (const info of this.subjects.byName.values()) {
        if (info.matches(filter)) seq = Math.max(seq, this.lastOf(info));
      }
    } else seq = this.prevLive(this.lastSeq, 0, filter);
    return seq === 0 ? undefined : this.loadSeq(seq, into);
  }

  filteredState(startSeq: number, filter: string): SimpleState {
    const out: SimpleState = { msgs: 0, first: 0, last: 0 };
    const from = Math.max(startSeq, this.firstSeq, 1);
    if (from > this.lastSeq || this.msgs === 0) return out;
    if (isAllSubjects(filter)) {
      this.countRange(from, 0, null, out);
      return out;
    }
    if (!hasWildcard(filter)) {
      const info = this.subjects.byName.get(filter);
      if (info === undefined) return out;
      if (from <= this.firstOf(info)) {
        out.msgs = info.msgs;
        out.first = info.first;
        out.last = this.lastOf(info);
      } else if (info.seqs !== null) {
        for (const q of info.seqs) {
          if (q < from) continue;
          if (out.msgs++ === 0) out.first = q;
          out.last = q;
        }
      } else this.countRange(from, info.id, null, out);
      return out;
    }
    if (from <= this.firstSeq) {
      for (const info of this.subjects.byName.values()) {
        if (!info.matches(filter)) continue;
        const f = this.firstOf(info);
        const l = this.lastOf(info);
        out.msgs += info.msgs;
        if (out.first === 0 || f < out.first) out.first = f;
        if (l > out.last) out.last = l;
      }
      return out;
    }
    this.countRange(from, 0, filter, out);
    return out;
  }

  /** Counts live messages from `from` to the end that pass (as nextLive). */
  private countRange(from: number, sid: number, filter: string | null, out: SimpleState): void {
    const byId = this.subjects.byId;
    for (let bi = this.blockIndex(from); bi < this.blocks.length; bi++) {
      const s = this.blocks[bi]!.slots;
      if (s.live === 0) continue;
      const i0 = from > s.base ? from - s.base : 0;
      const { off, sid: ids } = s;
      if (sid === 0 && filter === null && i0 === 0) {
        // The whole block: its live count, and first/last found from each end.
        let i = 0;
        while (off[i] === 0) i++;
        if (out.msgs === 0) out.first = s.base + i;
        let j = s.count - 1;
        while (off[j] === 0) j--;
        out.last = s.base + j;
        out.msgs += s.live;
        continue;
      }
      for (let i = i0; i < s.count; i++) {
        if (off[i] === 0) continue;
        if (sid !== 0 ? ids[i] !== sid : filter !== null && !byId[ids[i]!]!.matches(filter))
          continue;
        if (out.msgs++ === 0) out.first = s.base + i;
        out.last = s.base + i;
      }
    }
  }

  subjectsState(filter: string): Map<string, SimpleState> {
    const out = new Map<string, SimpleState>();
    const all = isAllSubjects(filter);
    if (!all && !hasWildcard(filter)) {
      const info = this.subjects.byName.get(filter);
      if (info !== undefined) {
        out.set(info.name, { msgs: info.msgs, first: this.firstOf(info), last: this.lastOf(info) });
      }
      return out;
    }
    for (const info of this.subjects.byName.values()) {
      if (!all && !info.matches(filter)) continue;
      out.set(info.name, { msgs: info.msgs, first: this.firstOf(info), last: this.lastOf(info) });
    }
    return out;
  }

  getSeqFromTime(tsNs: number): number {
    if (this.msgs === 0) return this.lastSeq + 1;
    if (tsNs <= this.firstTs) return this.firstSeq;
    // Timestamps grow with sequences (dead slots keep theirs): binary search.
    const blocks = this.blocks;
    let lo = 0;
    let hi = blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = blocks[mid]!.slots;
      if (s.count === 0 || s.ts[s.count - 1]! < tsNs) lo = mid + 1;
      else hi = mid;
    }
    const b = blocks[lo];
    if (b === undefined) return this.lastSeq + 1;
    const s = b.slots;
    let l = 0;
    let h = s.count;
    while (l < h) {
      const mid = (l + h) >>> 1;
      if (s.ts[mid]! < tsNs) l = mid + 1;
      else h = mid;
    }
    const seq = this.nextLive(s.base + l, 0, null);
    return seq === 0 ? this.lastSeq + 1 : seq;
  }

  /** Sequences between first and last with no message (STREAM.INFO `deleted_details`). */
  protected deletedSeqs(): number[] {
    const out: number[] = [];
    if (this.msgs === 0) return out;
    let next = this.firstSeq;
    for (const b of this.blocks) {
      const s = b.slots;
      if (s.count === 0 || s.last < next) continue;
      for (; next < s.base && next <= this.lastSeq; next++) out.push(next);
      for (; next <= s.last && next <= this.lastSeq; next++)
        if (s.off[next - s.base] === 0) out.push(next);
    }
    for (; next <= this.lastSeq; next++) out.push(next);
    return out;
  }
}
