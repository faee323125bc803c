// The memory store: a stream's log in a Map by sequence, with a per-subject index for
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
  type RecoveredStream,
  type SimpleState,
  type StorageUpdateHandler,
  type StoredMsg,
  type StreamState,
  type StreamStore,
  type StreamStoreConfig,
  type StreamStoreProvider,
  lowersPerSubject,
} from './types.js';
import { ConsumerBook } from './consumer-state.js';
import { MessageSlabs, SeqLog, loadInto } from './memory-log.js';

const EXPLICIT: ConsumerStoreConfig = { ackPolicy: 'explicit' };

interface SubjectState {
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
  private readonly msgs = new SeqLog();
  private readonly slabs = new MessageSlabs();
  private readonly subjects = new Map<string, SubjectState>();
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
    this.msgs.set(this.slabs.make(subject, seq, ts, hdr, data));
    this.bytes += size;
    let ss = this.subjects.get(subject);
    if (ss === undefined) {
      ss = { msgs: 0, first: seq, last: seq };
      this.subjects.set(subject, ss);
    }
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
    this.lastTs = 0;
    if (this.msgs.size === 0) this.firstSeq = seq + 1;
    return seq;
  }

  onDurable(done: (err?: Error) => void): void {
    done();
  }

  loadMsg(seq: number, into?: StoredMsg): StoredMsg | undefined {
    const m = this.msgs.get(seq);
    return m === undefined ? undefined : loadInto(m, into);
  }

  loadNextMsg(
    filter: string,
    wildcard: boolean,
    start: number,
    into?: StoredMsg,
  ): StoredMsg | undefined {
    const all = isAllSubjects(filter);
    if (start < this.firstSeq) start = this.firstSeq;
    if (!all && !wildcard) {
      const ss = this.subjects.get(filter);
      if (ss === undefined || ss.last < start) return undefined;
      if (start < ss.first) start = ss.first;
    }
    for (let seq = start; seq <= this.lastSeq; seq++) {
      const m = this.msgs.get(seq);
      if (m === undefined) continue;
      if (all || (wildcard ? subjectMatches(m.subject, filter) : m.subject === filter))
        return loadInto(m, into);
    }
    return undefined;
  }

  loadLastMsg(filter: string, into?: StoredMsg): StoredMsg | undefined {
    if (isAllSubjects(filter)) {
      for (let seq = this.lastSeq; seq >= this.firstSeq; seq--) {
        const m = this.msgs.get(seq);
        if (m !== undefined) return loadInto(m, into);
      }
      return undefined;
    }
    if (!isWildcard(filter)) {
      const ss = this.subjects.get(filter);
      if (ss === undefined) return undefined;
      const m = this.msgs.get(ss.last);
      return m === undefined ? undefined : loadInto(m, into);
    }
    let best = 0;
    for (const [subject, ss] of this.subjects) {
      if (ss.last > best && subjectMatches(subject, filter)) best = ss.last;
    }
    const m = best === 0 ? undefined : this.msgs.get(best);
    return m === undefined ? undefined : loadInto(m, into);
  }

  removeMsg(seq: number): boolean {
    const m = this.msgs.get(seq);
    if (m === undefined) return false;
    this.msgs.delete(seq);
    const size = memoryMsgSize(m.subject, m.hl, m.dl);
    this.slabs.release(m, seq === this.firstSeq);
    this.bytes -= size;
    const ss = this.subjects.get(m.subject);
    if (ss !== undefined) {
      ss.msgs--;
      if (ss.msgs === 0) this.subjects.delete(m.subject);
      else if (ss.msgs === 1) {
        // One left: it is both ends, no search (the common case of a KV with history 1).
        if (seq === ss.first) ss.first = ss.last;
        else if (seq === ss.last) ss.last = ss.first;
      } else if (seq === ss.first) ss.first = this.firstOfSubject(m.subject, ss, seq + 1);
      else if (seq === ss.last) ss.last = this.lastOfSubject(m.subject, ss, seq - 1);
    }
    if (this.msgs.size === 0) {
      this.firstSeq = this.lastSeq + 1;
    } else if (seq === this.firstSeq) {
      let s = seq + 1;
      while (!this.msgs.has(s)) s++;
      this.firstSeq = s;
    }
    this.updates?.(-1, -size, seq, m.subject);
    return true;
  }

  eraseMsg(seq: number): boolean {
    const m = this.msgs.get(seq);
    if (m !== undefined) m.buf.fill(0, m.off, m.off + m.hl + m.dl);
    return this.removeMsg(seq);
  }

  purge(): number {
    const n = this.msgs.size;
    const bytes = this.bytes;
    this.msgs.clear();
    this.slabs.reset();
    this.subjects.clear();
    this.bytes = 0;
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
    let n = 0;
    for (let s = state.first; s <= last && n < toRemove; s++) {
      const m = this.msgs.get(s);
      if (m === undefined) continue;
      if (wildcard ? subjectMatches(m.subject, subject) : m.subject === subject) {
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
    const last = this.msgs.get(seq);
    this.lastTs = last === undefined ? 0 : last.ts;
    if (this.msgs.size === 0) this.firstSeq = seq + 1;
  }

  getSeqFromTime(tsNs: number): number {
    for (let s = this.firstSeq; s <= this.lastSeq; s++) {
      const m = this.msgs.get(s);
      if (m !== undefined && m.ts >= tsNs) return s;
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
        const m = this.msgs.get(s);
        if (m === undefined || m.subject !== subject) continue;
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
    const first = n === 0 ? undefined : this.msgs.get(this.firstSeq);
    const last = n === 0 ? undefined : this.msgs.get(this.lastSeq);
    const span = n === 0 ? 0 : this.lastSeq - this.firstSeq + 1;
    const st: StreamState = {
      msgs: n,
      bytes: this.bytes,
      firstSeq: this.firstSeq === 0 ? 0 : this.firstSeq,
      firstTs: first?.ts ?? 0,
      lastSeq: this.lastSeq,
      // Kept through purges and removals, as the reference's stores keep it.
      lastTs: last?.ts ?? this.lastTs,
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
    this.msgs.clear();
    this.slabs.reset();
    this.subjects.clear();
    this.consumers.clear();
    this.bytes = 0;
  }

  /** The first sequence of `subject` at or after `from` (its index entry's first by default). */
  private firstOfSubject(subject: string, ss: SubjectState, from = ss.first): number {
    for (let s = from; s <= ss.last; s++) {
      const m = this.msgs.get(s);
      if (m !== undefined && m.subject === subject) return s;
    }
    return ss.last;
  }

  /** The last sequence of `subject` at or before `from`. */
  private lastOfSubject(subject: string, ss: SubjectState, from: number): number {
    for (let s = from; s >= ss.first; s--) {
      const m = this.msgs.get(s);
      if (m !== undefined && m.subject === subject) return s;
    }
    return ss.first;
  }

  private armAge(): void {
    const first = this.msgs.get(this.firstSeq);
    if (first === undefined || this.cfg.maxAgeNs <= 0) return;
    const dueMs = (first.ts + this.cfg.maxAgeNs - Date.now() * 1e6) / 1e6;
    this.ageTimer = setTimeout(this.expireOld, Math.max(1, Math.ceil(dueMs)));
    this.ageTimer.unref();
  }

  private readonly expireOld = (): void => {
    this.ageTimer = null;
    if (this.closed) return;
    const cutoff = Date.now() * 1e6 - this.cfg.maxAgeNs;
    for (;;) {
      const m = this.msgs.get(this.firstSeq);
      if (m === undefined || m.ts > cutoff) break;
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
