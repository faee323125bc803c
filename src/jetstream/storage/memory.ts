// The memory store: a stream's log in typed columns by sequence, with a per-subject index for
// per-subject limits, last-by-subject reads and subject counts. Limits are enforced as
// nats-server's memstore enforces them (per subject, then messages, then bytes, and a
// max_age timer set for the oldest message); sizes count as the reference's memory
// store counts them (subject + headers + data + 16).

import { subjectMatches } from '../../subjects/validate.js';
import {
  StoreError,
  isAllSubjects,
  type ConsumerState,
  type ConsumerStore,
  type ConsumerStoreConfig,
  type DurableCallback,
  type RecoveredStream,
  type SimpleState,
  type StorageUpdateHandler,
  type StoredMsg,
  type StoredSpan,
  type StreamState,
  type StreamStore,
  type StreamStoreConfig,
  type StreamStoreProvider,
  lowersPerSubject,
} from './types.js';
import { ConsumerBook } from './consumer-state.js';
import { MemLog } from './memory-log.js';
import { nowNs } from '../time.js';

const EXPLICIT: ConsumerStoreConfig = { ackPolicy: 'explicit' };

interface SubjectState {
  /** The subject's id in the log's subject column. */
  readonly id: number;
  msgs: number;
  first: number;
  last: number;
}

export function memoryMsgSize(subject: string, hdrLen: number, dataLen: number): number {
  return subject.length + hdrLen + dataLen + 16;
}

export class MemoryStreamStore implements StreamStore {
  readonly type = 'memory' as const;
  private cfg: StreamStoreConfig;
  private readonly msgs = new MemLog();
  private readonly subjects = new Map<string, SubjectState>();
  /** Subjects by id (undefined once a subject has no message left); ids are reused. */
  private names: (string | undefined)[] = [];
  private freeIds: number[] = [];
  private firstSeq = 0;
  private lastSeq = 0;
  private lastTs = -0; // a double from the start (see blankStoredMsg)
  private bytes = 0;
  private updates: StorageUpdateHandler | null = null;
  private ageTimer: NodeJS.Timeout | null = null;
  private readonly consumers = new Map<string, MemoryConsumerStore>();
  private closed = false;

  constructor(cfg: StreamStoreConfig) {
    this.cfg = cfg;
  }

  storeMsg(subject: string, hdr: Buffer, data: Buffer, ts: number): number {
    if (this.closed) throw new StoreError('closed', 'store is closed');
    const size = memoryMsgSize(subject, hdr.length, data.length);
    const cfg = this.cfg;
    if (cfg.discard === 'new') {
      if (cfg.maxMsgs > 0 && this.msgs.size >= cfg.maxMsgs)
        throw new StoreError('max-msgs', 'maximum messages exceeded');
      if (cfg.maxBytes > 0 && this.bytes + size > cfg.maxBytes)
        throw new StoreError('max-bytes', 'maximum bytes exceeded');
      if (cfg.discardNewPerSubject && cfg.maxMsgsPerSubject > 0) {
        const ss = this.subjects.get(subject);
        if (ss !== undefined && ss.msgs >= cfg.maxMsgsPerSubject)
          throw new StoreError('max-msgs-per-subject', 'maximum messages per subject exceeded');
      }
    }
    const seq = ++this.lastSeq;
    if (this.msgs.size === 0) this.firstSeq = seq;
    this.lastTs = ts;
    let ss = this.subjects.get(subject);
    if (ss === undefined) {
      ss = { id: this.internSubject(subject), msgs: 0, first: seq, last: seq };
      this.subjects.set(subject, ss);
    }
    this.msgs.append(seq, ss.id, ts, hdr, data);
    this.bytes += size;
    ss.msgs++;
    ss.last = seq;
    this.updates?.(1, size, seq, subject);
    if (cfg.maxMsgsPerSubject > 0) {
      while (ss.msgs > cfg.maxMsgsPerSubject) this.removeMsg(ss.first);
    }
    if (cfg.maxMsgs > 0) while (this.msgs.size > cfg.maxMsgs) this.removeMsg(this.firstSeq);
    if (cfg.maxBytes > 0) while (this.bytes > cfg.maxBytes) this.removeMsg(this.firstSeq);
    if (cfg.maxAgeNs > 0 && this.ageTimer === null) this.armAge();
    return seq;
  }

  skipMsg(): number {
    const seq = ++this.lastSeq;
    // The reference's memory store stamps a skipped sequence's time as the last one.
    this.lastTs = nowNs();
    if (this.msgs.size === 0) this.firstSeq = seq + 1;
    return seq;
  }

  onDurable(done: DurableCallback): void {
    done(undefined, 0);
  }

  appendMark(): number {
    return 0;
  }

  loadMsg(seq: number, into?: StoredMsg): StoredMsg | undefined {
    const id = this.msgs.subjectOf(seq);
    return id < 0 ? undefined : this.msgs.load(seq, this.names[id]!, into);
  }

  loadSpan(seq: number, into: StoredSpan): StoredSpan | undefined {
    const id = this.msgs.subjectOf(seq);
    return id < 0 ? undefined : this.msgs.span(seq, this.names[id]!, into);
  }

  loadNextMsg(
    filter: string,
    wildcard: boolean,
    start: number,
    into?: StoredMsg,
  ): StoredMsg | undefined {
    const seq = this.nextSeq(filter, wildcard, start);
    return seq === 0 ? undefined : this.loadMsg(seq, into);
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

  /** The first sequence at or after `start` whose subject matches `filter`, or 0. */
  private nextSeq(filter: string, wildcard: boolean, start: number): number {
    const all = isAllSubjects(filter);
    if (start < this.firstSeq) start = this.firstSeq;
    let want = -1;
    if (!all && !wildcard) {
      const ss = this.subjects.get(filter);
      if (ss === undefined || ss.last < start) return 0;
      if (start < ss.first) start = ss.first;
      want = ss.id;
    }
    for (let seq = start; seq <= this.lastSeq; seq++) {
      const id = this.msgs.subjectOf(seq);
      if (id < 0) continue;
      if (all || (wildcard ? subjectMatches(this.names[id]!, filter) : id === want)) return seq;
    }
    return 0;
  }

  loadLastMsg(filter: string, into?: StoredMsg): StoredMsg | undefined {
    if (isAllSubjects(filter)) {
      for (let seq = this.lastSeq; seq >= this.firstSeq; seq--) {
        if (this.msgs.has(seq)) return this.loadMsg(seq, into);
      }
      return undefined;
    }
    if (!isWildcard(filter)) {
      const ss = this.subjects.get(filter);
      return ss === undefined ? undefined : this.loadMsg(ss.last, into);
    }
    let best = 0;
    for (const [subject, ss] of this.subjects) {
      if (ss.last > best && subjectMatches(subject, filter)) best = ss.last;
    }
    return best === 0 ? undefined : this.loadMsg(best, into);
  }

  removeMsg(seq: number): boolean {
    const id = this.msgs.subjectOf(seq);
    if (id < 0) return false;
    const subject = this.names[id]!;
    const size = memoryMsgSize(subject, this.msgs.bytesOf(seq), 0);
    this.msgs.remove(seq, seq === this.firstSeq);
    this.bytes -= size;
    const ss = this.subjects.get(subject);
    if (ss !== undefined) {
      ss.msgs--;
      if (ss.msgs === 0) {
        this.subjects.delete(subject);
        this.names[id] = undefined;
        this.freeIds.push(id);
      } else if (ss.msgs === 1) {
        // One left: it is both ends, no search (the common case of a KV with history 1).
        if (seq === ss.first) ss.first = ss.last;
        else if (seq === ss.last) ss.last = ss.first;
      } else if (seq === ss.first) ss.first = this.firstOfSubject(ss, seq + 1);
      else if (seq === ss.last) ss.last = this.lastOfSubject(ss, seq - 1);
    }
    if (this.msgs.size === 0) {
      this.firstSeq = this.lastSeq + 1;
    } else if (seq === this.firstSeq) {
      let s = seq + 1;
      while (!this.msgs.has(s)) s++;
      this.firstSeq = s;
    }
    this.updates?.(-1, -size, seq, subject);
    return true;
  }

  eraseMsg(seq: number): boolean {
    this.msgs.erase(seq);
    return this.removeMsg(seq);
  }

  purge(): number {
    const n = this.msgs.size;
    const bytes = this.bytes;
    this.clearAll();
    this.firstSeq = this.lastSeq + 1;
    if (n > 0) this.updates?.(-n, -bytes, 0, '');
    return n;
  }

  purgeEx(subject: string, seq: number, keep: number): number {
    if (seq > 1 && keep > 0) throw new Error('sequence > 1 && keep > 0 not allowed');
    if (isAllSubjects(subject)) {
      if (keep === 0 && seq <= 1) return this.purge();
      if (seq > 1) return this.compact(seq);
      // As the reference: everything below the last `keep` sequences goes.
      if (keep >= this.msgs.size) return 0;
      return this.compact(this.lastSeq - keep + 1);
    }
    const wildcard = isWildcard(subject);
    const state = this.filteredState(0, subject);
    if (state.msgs === 0) return 0;
    let last = state.last;
    if (seq > 0 && seq - 1 < last) last = seq - 1;
    let toRemove = state.msgs;
    if (keep > 0) toRemove = keep >= state.msgs ? 0 : state.msgs - keep;
    const want = wildcard ? -1 : this.subjects.get(subject)!.id;
    let n = 0;
    for (let s = state.first; s <= last && n < toRemove; s++) {
      const id = this.msgs.subjectOf(s);
      if (id < 0) continue;
      if (wildcard ? subjectMatches(this.names[id]!, subject) : id === want) {
        if (this.removeMsg(s)) n++;
      }
    }
    return n;
  }

  compact(seq: number): number {
    if (seq === 0) return this.purge();
    if (seq <= this.firstSeq) return 0;
    if (seq > this.lastSeq + 1) {
      const n = this.purge();
      this.lastSeq = seq - 1;
      this.firstSeq = seq;
      return n;
    }
    let n = 0;
    for (let s = this.firstSeq; s < seq; s++) if (this.removeMsg(s)) n++;
    this.firstSeq = Math.max(this.firstSeq, seq);
    return n;
  }

  truncate(seq: number): void {
    if (seq >= this.lastSeq) return;
    if (seq !== 0 && !this.msgs.has(seq)) throw new Error('invalid sequence');
    for (let s = this.lastSeq; s > seq; s--) this.removeMsg(s);
    this.lastSeq = seq;
    this.lastTs = this.msgs.has(seq) ? this.msgs.tsOf(seq) : 0;
    if (this.msgs.size === 0) this.firstSeq = seq + 1;
  }

  getSeqFromTime(tsNs: number): number {
    for (let s = this.firstSeq; s <= this.lastSeq; s++) {
      if (this.msgs.has(s) && this.msgs.tsOf(s) >= tsNs) return s;
    }
    return this.lastSeq + 1;
  }

  filteredState(startSeq: number, filter: string): SimpleState {
    const st: SimpleState = { msgs: 0, first: 0, last: 0 };
    if (startSeq < this.firstSeq) startSeq = this.firstSeq;
    const all = isAllSubjects(filter);
    if (all) {
      for (let s = startSeq; s <= this.lastSeq; s++) {
        if (!this.msgs.has(s)) continue;
        if (st.first === 0) st.first = s;
        st.last = s;
        st.msgs++;
      }
      return st;
    }
    // Per subject from the index when the start is at or before each subject's first.
    const wildcard = isWildcard(filter);
    for (const [subject, ss] of this.subjects) {
      if (wildcard ? !subjectMatches(subject, filter) : subject !== filter) continue;
      if (ss.last < startSeq) continue;
      if (startSeq <= ss.first) {
        st.msgs += ss.msgs;
        if (st.first === 0 || ss.first < st.first) st.first = ss.first;
        if (ss.last > st.last) st.last = ss.last;
        continue;
      }
      for (let s = startSeq; s <= ss.last; s++) {
        if (this.msgs.subjectOf(s) !== ss.id) continue;
        st.msgs++;
        if (st.first === 0 || s < st.first) st.first = s;
        if (s > st.last) st.last = s;
      }
    }
    return st;
  }

  subjectsState(filter: string): Map<string, SimpleState> {
    const out = new Map<string, SimpleState>();
    const all = isAllSubjects(filter);
    for (const [subject, ss] of this.subjects) {
      if (all || subjectMatches(subject, filter)) {
        out.set(subject, { msgs: ss.msgs, first: ss.first, last: ss.last });
      }
    }
    return out;
  }

  state(withDeleted = false): StreamState {
    const n = this.msgs.size;
    const firstTs = this.msgs.has(this.firstSeq) ? this.msgs.tsOf(this.firstSeq) : 0;
    const last = n > 0 && this.msgs.has(this.lastSeq);
    const span = n === 0 ? 0 : this.lastSeq - this.firstSeq + 1;
    const st: StreamState = {
      msgs: n,
      bytes: this.bytes,
      firstSeq: this.firstSeq === 0 ? 0 : this.firstSeq,
      firstTs,
      lastSeq: this.lastSeq,
      // Kept through purges and removals, as the reference's stores keep it.
      lastTs: last ? this.msgs.tsOf(this.lastSeq) : this.lastTs,
      numSubjects: this.subjects.size,
      numDeleted: span - n,
      consumers: this.consumers.size,
    };
    if (n === 0 && this.lastSeq > 0) st.firstSeq = this.lastSeq + 1;
    if (withDeleted) {
      const deleted: number[] = [];
      for (let s = this.firstSeq; s <= this.lastSeq; s++) if (!this.msgs.has(s)) deleted.push(s);
      st.deleted = deleted;
    }
    return st;
  }

  registerStorageUpdates(handler: StorageUpdateHandler): void {
    this.updates = handler;
  }

  updateConfig(cfg: StreamStoreConfig): void {
    const lower = lowersPerSubject(this.cfg, cfg);
    this.cfg = cfg;
    const max = cfg.maxMsgsPerSubject;
    if (lower) {
      for (const ss of [...this.subjects.values()]) {
        while (ss.msgs > max) this.removeMsg(ss.first);
      }
    }
    if (cfg.maxMsgs > 0) while (this.msgs.size > cfg.maxMsgs) this.removeMsg(this.firstSeq);
    if (cfg.maxBytes > 0) while (this.bytes > cfg.maxBytes) this.removeMsg(this.firstSeq);
    if (this.ageTimer !== null) clearTimeout(this.ageTimer);
    this.ageTimer = null;
    if (cfg.maxAgeNs > 0) this.expireOld();
  }

  consumerStore(name: string, cfg: ConsumerStoreConfig = EXPLICIT): ConsumerStore {
    let cs = this.consumers.get(name);
    if (cs === undefined) {
      cs = new MemoryConsumerStore(cfg, () => this.consumers.delete(name));
      this.consumers.set(name, cs);
    }
    return cs;
  }

  stop(): Promise<void> {
    this.closed = true;
    if (this.ageTimer !== null) clearTimeout(this.ageTimer);
    this.ageTimer = null;
    return Promise.resolve();
  }

  async delete(): Promise<void> {
    await this.stop();
    this.clearAll();
    this.consumers.clear();
  }

  private clearAll(): void {
    this.msgs.clear();
    this.subjects.clear();
    this.names = [];
    this.freeIds = [];
    this.bytes = 0;
  }

  private internSubject(subject: string): number {
    const id = this.freeIds.pop();
    if (id === undefined) return this.names.push(subject) - 1;
    this.names[id] = subject;
    return id;
  }

  /** The first sequence of `ss`'s subject at or after `from`. */
  private firstOfSubject(ss: SubjectState, from: number): number {
    for (let s = from; s <= ss.last; s++) {
      if (this.msgs.subjectOf(s) === ss.id) return s;
    }
    return ss.last;
  }

  /** The last sequence of `ss`'s subject at or before `from`. */
  private lastOfSubject(ss: SubjectState, from: number): number {
    for (let s = from; s >= ss.first; s--) {
      if (this.msgs.subjectOf(s) === ss.id) return s;
    }
    return ss.first;
  }

  private armAge(): void {
    if (!this.msgs.has(this.firstSeq) || this.cfg.maxAgeNs <= 0) return;
    const dueMs = (this.msgs.tsOf(this.firstSeq) + this.cfg.maxAgeNs - Date.now() * 1e6) / 1e6;
    this.ageTimer = setTimeout(this.expireOld, Math.max(1, Math.ceil(dueMs)));
    this.ageTimer.unref();
  }

  private readonly expireOld = (): void => {
    this.ageTimer = null;
    if (this.closed) return;
    const cutoff = Date.now() * 1e6 - this.cfg.maxAgeNs;
    for (;;) {
      if (!this.msgs.has(this.firstSeq) || this.msgs.tsOf(this.firstSeq) > cutoff) break;
      this.removeMsg(this.firstSeq);
    }
    if (this.msgs.size > 0) this.armAge();
  };
}

export function isWildcard(subject: string): boolean {
  return subject.includes('*') || subject.includes('>');
}

/** A consumer's position kept in memory only, by the rules every store shares. */
export class MemoryConsumerStore implements ConsumerStore {
  private readonly book: ConsumerBook;

  constructor(
    cfg: ConsumerStoreConfig,
    private readonly onDelete: () => void,
  ) {
    this.book = new ConsumerBook(cfg);
  }

  setStarting(streamSeq: number): void {
    this.book.setStarting(streamSeq);
  }

  updateDelivered(dseq: number, sseq: number, deliveryCount: number, ts: number): void {
    this.book.updateDelivered(dseq, sseq, deliveryCount, ts);
  }

  updateAcks(dseq: number, sseq: number): void {
    this.book.updateAcks(dseq, sseq);
  }

  update(state: ConsumerState): void {
    this.book.update(state);
  }

  state(): ConsumerState {
    return this.book.copy();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  delete(): Promise<void> {
    this.onDelete();
    return Promise.resolve();
  }
}

/** Memory stores keep nothing across restarts: nothing to write, nothing to recover. */
export class MemoryStoreProvider implements StreamStoreProvider {
  openStream(cfg: StreamStoreConfig): StreamStore {
    return new MemoryStreamStore(cfg);
  }
  writeStreamMeta(): void {}
  writeConsumerMeta(): void {}
  removeConsumerMeta(): void {}
  recover(): RecoveredStream[] {
    return [];
  }
}
