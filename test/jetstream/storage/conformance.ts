// The one conformance suite of JetStream's stream stores (memory, file): every store
// runs it through its provider, as aedes-persistence's abstract suite runs every MQTT
// persistence. It depends only on the contract (src/jetstream/storage/types.ts); the
// expectations are nats-server 2.9's memstore/filestore behaviour. With
// `survivesRestart`, each restart case stops the provider and opens a new one on the
// same place, and everything must be as it was.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  blankStoredMsg,
  blankStoredSpan,
  StoreError,
  type ConsumerState,
  type StorageType,
  type StreamStore,
  type StreamStoreConfig,
  type StreamStoreProvider,
} from '../../../src/jetstream/storage/types.js';

export interface ProviderHandle {
  readonly provider: StreamStoreProvider;
  /** A clean shutdown: stops every stream opened through it. */
  close(): Promise<void>;
}

export interface ConformanceOptions {
  readonly storage: StorageType;
  /** A new empty place for streams; the function it returns opens a provider on it (again after a restart). */
  fresh(): Promise<() => Promise<ProviderHandle>>;
  readonly survivesRestart: boolean;
}

const NS = 1e6;

export function streamConfig(
  name: string,
  storage: StorageType,
  over: Partial<StreamStoreConfig> = {},
): StreamStoreConfig {
  return {
    name,
    storage,
    maxMsgs: -1,
    maxBytes: -1,
    maxAgeNs: 0,
    maxMsgsPerSubject: -1,
    discard: 'old',
    discardNewPerSubject: false,
    ...over,
  };
}

/** What nats-server counts for one message (filestore / memstore). */
export function msgBytes(storage: StorageType, subject: string, hdr: Buffer, data: Buffer): number {
  const s = Buffer.byteLength(subject);
  if (storage === 'memory') return s + hdr.length + data.length + 16;
  return 22 + s + (hdr.length > 0 ? 4 + hdr.length : 0) + data.length + 8;
}

const HDR = Buffer.from('NATS/1.0\r\nk: v\r\n\r\n');
const meta = (name: string): Buffer => Buffer.from(JSON.stringify({ name }));
const body = (n: number): Buffer => Buffer.from(`msg-${n}`);

async function waitFor(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function durable(store: StreamStore): Promise<void> {
  return new Promise((resolve, reject) =>
    store.onDurable((err) => (err ? reject(err) : resolve())),
  );
}

export function storageConformance(label: string, o: ConformanceOptions): void {
  const T = o.storage;
  const cfg = (name: string, over: Partial<StreamStoreConfig> = {}): StreamStoreConfig =>
    streamConfig(name, T, over);

  /** A provider on a fresh place and a helper to restart it (stop, reopen, reopen the stream). */
  async function setup() {
    const openProvider = await o.fresh();
    let handle = await openProvider();
    return {
      get provider() {
        return handle.provider;
      },
      open(c: StreamStoreConfig): StreamStore {
        return handle.provider.openStream(c, meta(c.name));
      },
      async restart(c: StreamStoreConfig): Promise<StreamStore> {
        await handle.close();
        handle = await openProvider();
        return handle.provider.openStream(c, meta(c.name));
      },
      close: () => handle.close(),
    };
  }

  function fill(
    store: StreamStore,
    subjects: string[],
    n: number,
    ts0 = Date.now() * NS,
  ): number[] {
    const seqs: number[] = [];
    for (let i = 0; i < n; i++) {
      seqs.push(
        store.storeMsg(
          subjects[i % subjects.length]!,
          Buffer.alloc(0),
          body(i + 1),
          ts0 + i * 1000,
        ),
      );
    }
    return seqs;
  }

  describe(`${label}: stream store conformance`, () => {
    it('stores and loads messages with headers, sequences from 1, counts bytes as the reference', async () => {
      const e = await setup();
      const s = e.open(cfg('S'));
      assert.equal(s.type, T);
      const st0 = s.state();
      assert.deepEqual([st0.msgs, st0.bytes, st0.firstSeq, st0.lastSeq], [0, 0, 0, 0]);
      const ts = Date.now() * NS;
      assert.equal(s.storeMsg('foo', HDR, Buffer.from('hello'), ts), 1);
      assert.equal(s.storeMsg('bar', Buffer.alloc(0), Buffer.from('world'), ts + 1000), 2);
      assert.equal(s.storeMsg('foo', Buffer.alloc(0), Buffer.alloc(0), ts + 2000), 3);
      const m = s.loadMsg(1)!;
      assert.equal(m.subject, 'foo');
      assert.equal(m.seq, 1);
      assert.equal(m.ts, ts);
      assert.deepEqual(m.hdr, HDR);
      assert.equal(m.data.toString(), 'hello');
      const into = blankStoredMsg();
      assert.equal(s.loadMsg(2, into), into);
      assert.equal(into.subject, 'bar');
      assert.equal(into.hdr.length, 0);
      assert.equal(into.data.toString(), 'world');
      assert.equal(s.loadMsg(3)!.data.length, 0);
      assert.equal(s.loadMsg(4), undefined);
      assert.equal(s.loadMsg(0), undefined);
      const st = s.state();
      assert.equal(st.msgs, 3);
      assert.equal(
        st.bytes,
        msgBytes(T, 'foo', HDR, Buffer.from('hello')) +
          msgBytes(T, 'bar', Buffer.alloc(0), Buffer.from('world')) +
          msgBytes(T, 'foo', Buffer.alloc(0), Buffer.alloc(0)),
      );
      assert.deepEqual([st.firstSeq, st.lastSeq, st.firstTs, st.lastTs], [1, 3, ts, ts + 2000]);
      assert.equal(st.numSubjects, 2);
      assert.equal(st.numDeleted, 0);
      await durable(s);
      await e.close();
    });

    it('removes and erases: first moves, interior deletes are counted and listed', async () => {
      const e = await setup();
      const s = e.open(cfg('S'));
      fill(s, ['a', 'b'], 6);
      assert.equal(s.removeMsg(3), true);
      assert.equal(s.removeMsg(3), false);
      assert.equal(s.eraseMsg(4), true);
      assert.equal(s.removeMsg(99), false);
      assert.equal(s.loadMsg(3), undefined);
      assert.equal(s.loadMsg(4), undefined);
      let st = s.state(true);
      assert.deepEqual([st.msgs, st.firstSeq, st.lastSeq, st.numDeleted], [4, 1, 6, 2]);
      assert.deepEqual(st.deleted, [3, 4]);
      assert.equal(s.removeMsg(1), true);
      assert.equal(s.removeMsg(2), true);
      st = s.state(true);
      assert.deepEqual([st.msgs, st.firstSeq, st.lastSeq, st.numDeleted], [2, 5, 6, 0]);
      assert.deepEqual(st.deleted, []);
      assert.equal(st.firstTs, s.loadMsg(5)!.ts);
      await e.close();
    });

    it('max_msgs and max_bytes: discard old drops the oldest, discard new refuses', async () => {
      const e = await setup();
      const old = e.open(cfg('OLD', { maxMsgs: 3 }));
      fill(old, ['x'], 5);
      assert.deepEqual([old.state().msgs, old.state().firstSeq, old.state().lastSeq], [3, 3, 5]);
      const one = msgBytes(T, 'x', Buffer.alloc(0), body(1));
      const ob = e.open(cfg('OB', { maxBytes: one * 2 }));
      fill(ob, ['x'], 4);
      assert.deepEqual([ob.state().msgs, ob.state().firstSeq], [2, 3]);
      const nw = e.open(cfg('NEW', { maxMsgs: 2, discard: 'new' }));
      fill(nw, ['x'], 2);
      assert.throws(
        () => nw.storeMsg('x', Buffer.alloc(0), body(3), Date.now() * NS),
        (err: unknown) => err instanceof StoreError && err.refusal === 'max-msgs',
      );
      const nb = e.open(cfg('NB', { maxBytes: 100, discard: 'new' }));
      nb.storeMsg('x', Buffer.alloc(0), Buffer.alloc(40), Date.now() * NS);
      assert.throws(
        () => nb.storeMsg('x', Buffer.alloc(0), Buffer.alloc(60), Date.now() * NS),
        (err: unknown) => err instanceof StoreError && err.refusal === 'max-bytes',
      );
      assert.equal(nw.state().lastSeq, 2);
      assert.equal(nb.state().msgs, 1);
      await e.close();
    });

    it('max_msgs_per_subject keeps the newest per subject; discard new per subject refuses', async () => {
      const e = await setup();
      const s = e.open(cfg('KV', { maxMsgsPerSubject: 2 }));
      fill(s, ['k.a', 'k.b', 'k.c'], 12);
      const st = s.state();
      assert.equal(st.msgs, 6);
      assert.deepEqual([...s.subjectsState('>')].sort(), [
        ['k.a', { msgs: 2, first: 7, last: 10 }],
        ['k.b', { msgs: 2, first: 8, last: 11 }],
        ['k.c', { msgs: 2, first: 9, last: 12 }],
      ]);
      const h = e.open(cfg('H1', { maxMsgsPerSubject: 1 }));
      for (let i = 0; i < 50; i++)
        h.storeMsg(`key.${i % 5}`, Buffer.alloc(0), body(i), Date.now() * NS);
      assert.equal(h.state().msgs, 5);
      assert.equal(h.loadLastMsg('key.3')!.data.toString(), 'msg-48');
      const d = e.open(
        cfg('DN', { maxMsgsPerSubject: 1, discard: 'new', discardNewPerSubject: true }),
      );
      d.storeMsg('a', Buffer.alloc(0), body(1), Date.now() * NS);
      assert.throws(
        () => d.storeMsg('a', Buffer.alloc(0), body(2), Date.now() * NS),
        (err: unknown) => err instanceof StoreError && err.refusal === 'max-msgs-per-subject',
      );
      d.storeMsg('b', Buffer.alloc(0), body(3), Date.now() * NS);
      assert.equal(d.state().msgs, 2);
      // Lowering the limit applies it at once.
      s.updateConfig(cfg('KV', { maxMsgsPerSubject: 1 }));
      assert.equal(s.state().msgs, 3);
      assert.deepEqual(s.filteredState(1, 'k.a'), { msgs: 1, first: 10, last: 10 });
      // A limit where there was none applies to a subject at its next message, as the
      // reference's stores do (fixtures/api.json, step "update").
      const u = e.open(cfg('UNL'));
      fill(u, ['u.a', 'u.b'], 6);
      u.updateConfig(cfg('UNL', { maxMsgsPerSubject: 1 }));
      assert.equal(u.state().msgs, 6);
      u.storeMsg('u.a', Buffer.alloc(0), body(7), Date.now() * NS);
      assert.deepEqual(u.filteredState(1, 'u.a'), { msgs: 1, first: 7, last: 7 });
      assert.deepEqual(u.filteredState(1, 'u.b'), { msgs: 3, first: 2, last: 6 });
      await e.close();
    });

    it('max_age removes messages once they are older', async () => {
      const e = await setup();
      const s = e.open(cfg('AGE', { maxAgeNs: 200 * NS }));
      const now = Date.now() * NS;
      s.storeMsg('a', Buffer.alloc(0), body(1), now - 150 * NS);
      s.storeMsg('a', Buffer.alloc(0), body(2), now + 5000 * NS);
      await waitFor('the old message to expire', () => s.state().msgs === 1);
      assert.equal(s.state().firstSeq, 2);
      await e.close();
    });

    it('updateConfig lowering max_msgs and max_bytes enforces them', async () => {
      const e = await setup();
      const s = e.open(cfg('U'));
      fill(s, ['a'], 10);
      s.updateConfig(cfg('U', { maxMsgs: 4 }));
      assert.deepEqual([s.state().msgs, s.state().firstSeq], [4, 7]);
      s.updateConfig(cfg('U', { maxBytes: msgBytes(T, 'a', Buffer.alloc(0), body(10)) }));
      assert.deepEqual([s.state().msgs, s.state().firstSeq], [1, 10]);
      await e.close();
    });

    it('purge, purgeEx (filter, seq, keep), compact and truncate', async () => {
      const e = await setup();
      const s = e.open(cfg('P'));
      fill(s, ['a', 'b'], 10);
      assert.equal(s.purgeEx('a', 0, 2), 3);
      assert.deepEqual(s.filteredState(1, 'a'), { msgs: 2, first: 7, last: 9 });
      assert.equal(s.purgeEx('b', 6, 0), 2);
      assert.deepEqual(s.filteredState(1, 'b'), { msgs: 3, first: 6, last: 10 });
      assert.equal(s.compact(8), 2);
      assert.deepEqual([s.state().msgs, s.state().firstSeq], [3, 8]);
      assert.throws(() => s.purgeEx('', 5, 1));
      assert.equal(s.purgeEx('>', 0, 1), 2);
      assert.deepEqual([s.state().msgs, s.state().firstSeq, s.state().lastSeq], [1, 10, 10]);
      assert.equal(s.purge(), 1);
      let st = s.state();
      assert.deepEqual(
        [st.msgs, st.bytes, st.firstSeq, st.lastSeq, st.numSubjects],
        [0, 0, 11, 10, 0],
      );
      assert.equal(s.storeMsg('c', Buffer.alloc(0), body(11), Date.now() * NS), 11);
      assert.equal(s.compact(20), 1);
      st = s.state();
      assert.deepEqual([st.msgs, st.firstSeq, st.lastSeq], [0, 20, 19]);
      assert.equal(s.storeMsg('c', Buffer.alloc(0), body(20), Date.now() * NS), 20);
      fill(s, ['d'], 5);
      s.truncate(22);
      st = s.state();
      assert.deepEqual([st.msgs, st.firstSeq, st.lastSeq], [3, 20, 22]);
      assert.equal(s.loadMsg(23), undefined);
      assert.equal(s.storeMsg('e', Buffer.alloc(0), body(23), Date.now() * NS), 23);
      assert.equal(s.loadMsg(23)!.subject, 'e');
      await e.close();
    });

    it('loadNextMsg and loadLastMsg: all, literal and wildcard filters', async () => {
      const e = await setup();
      const s = e.open(cfg('L'));
      fill(s, ['orders.new', 'orders.paid', 'audit'], 9);
      assert.equal(s.loadNextMsg('', false, 0)!.seq, 1);
      assert.equal(s.loadNextMsg('>', true, 5)!.seq, 5);
      assert.equal(s.loadNextMsg('audit', false, 1)!.seq, 3);
      assert.equal(s.loadNextMsg('audit', false, 4)!.seq, 6);
      assert.equal(s.loadNextMsg('orders.*', true, 3)!.seq, 4);
      assert.equal(s.loadNextMsg('orders.>', true, 9), undefined);
      assert.equal(s.loadNextMsg('nope', false, 1), undefined);
      assert.equal(s.loadNextMsg('', false, 10), undefined);
      s.removeMsg(4);
      assert.equal(s.loadNextMsg('orders.new', false, 2)!.seq, 7);
      assert.equal(s.loadLastMsg('')!.seq, 9);
      assert.equal(s.loadLastMsg('orders.new')!.seq, 7);
      assert.equal(s.loadLastMsg('orders.*')!.seq, 8);
      assert.equal(s.loadLastMsg('nope'), undefined);
      s.removeMsg(9);
      assert.equal(s.loadLastMsg('>')!.seq, 8);
      assert.equal(s.loadLastMsg('audit')!.seq, 6);
      await e.close();
    });

    it('loadSpan and loadNextSpan locate the bytes loadMsg and loadNextMsg return', async () => {
      const e = await setup();
      const s = e.open(cfg('SPAN'));
      const hdr = Buffer.from('NATS/1.0\r\nK: v\r\n\r\n');
      s.storeMsg('a.1', Buffer.alloc(0), body(1), Date.now() * NS);
      s.storeMsg('b.2', hdr, body(2), Date.now() * NS);
      s.storeMsg('a.3', hdr, Buffer.alloc(0), Date.now() * NS);
      await durable(s);
      const into = blankStoredSpan();
      for (const seq of [1, 2, 3]) {
        const m = s.loadMsg(seq)!;
        assert.equal(s.loadSpan(seq, into), into);
        assert.deepEqual(
          {
            subject: into.subject,
            seq: into.seq,
            ts: into.ts,
            hdr: into.buf.subarray(into.hdrStart, into.dataStart),
            data: into.buf.subarray(into.dataStart, into.dataEnd),
          },
          { subject: m.subject, seq: m.seq, ts: m.ts, hdr: m.hdr, data: m.data },
          `message ${seq}`,
        );
      }
      assert.equal(s.loadNextSpan('a.*', true, 2, into)!.seq, 3);
      assert.equal(s.loadNextSpan('b.2', false, 1, into)!.seq, 2);
      assert.equal(
        into.buf.toString('latin1', into.hdrStart, into.dataEnd),
        `${hdr.toString()}msg-2`,
      );
      assert.equal(s.loadNextSpan('', false, 4, into), undefined);
      s.removeMsg(2);
      assert.equal(s.loadSpan(2, into), undefined);
      assert.equal(s.loadNextSpan('>', true, 2, into)!.seq, 3);
      await e.close();
    });

    it('filteredState and subjectsState', async () => {
      const e = await setup();
      const s = e.open(cfg('F'));
      fill(s, ['a.1', 'a.2', 'b.1'], 9);
      assert.deepEqual(s.filteredState(1, ''), { msgs: 9, first: 1, last: 9 });
      assert.deepEqual(s.filteredState(4, '>'), { msgs: 6, first: 4, last: 9 });
      assert.deepEqual(s.filteredState(1, 'a.*'), { msgs: 6, first: 1, last: 8 });
      assert.deepEqual(s.filteredState(3, 'a.*'), { msgs: 4, first: 4, last: 8 });
      assert.deepEqual(s.filteredState(5, 'b.1'), { msgs: 2, first: 6, last: 9 });
      assert.deepEqual(s.filteredState(1, 'zzz'), { msgs: 0, first: 0, last: 0 });
      assert.deepEqual(s.filteredState(10, ''), { msgs: 0, first: 0, last: 0 });
      s.removeMsg(5);
      assert.deepEqual(s.filteredState(1, 'a.2'), { msgs: 2, first: 2, last: 8 });
      assert.deepEqual(s.filteredState(1, '>'), { msgs: 8, first: 1, last: 9 });
      const subs = s.subjectsState('a.>');
      assert.deepEqual([...subs.keys()].sort(), ['a.1', 'a.2']);
      assert.deepEqual(subs.get('a.1'), { msgs: 3, first: 1, last: 7 });
      assert.equal(s.subjectsState('').size, 3);
      assert.equal(s.subjectsState('c.>').size, 0);
      assert.deepEqual([...s.subjectsState('b.1')], [['b.1', { msgs: 3, first: 3, last: 9 }]]);
      await e.close();
    });

    it('getSeqFromTime and skipMsg', async () => {
      const e = await setup();
      const s = e.open(cfg('T'));
      const t0 = 1_700_000_000_000 * NS;
      for (let i = 0; i < 5; i++) s.storeMsg('a', Buffer.alloc(0), body(i), t0 + i * 1000 * NS);
      assert.equal(s.getSeqFromTime(t0 - 1), 1);
      assert.equal(s.getSeqFromTime(t0 + 2000 * NS), 3);
      assert.equal(s.getSeqFromTime(t0 + 2500 * NS), 4);
      assert.equal(s.getSeqFromTime(t0 + 9000 * NS), 6);
      assert.equal(s.skipMsg(), 6);
      assert.equal(s.state().lastSeq, 6);
      assert.equal(s.storeMsg('a', Buffer.alloc(0), body(7), t0 + 7000 * NS), 7);
      assert.deepEqual(s.state(true).deleted, [6]);
      const empty = e.open(cfg('E'));
      assert.equal(empty.skipMsg(), 1);
      assert.deepEqual([empty.state().firstSeq, empty.state().lastSeq], [2, 1]);
      assert.equal(empty.storeMsg('a', Buffer.alloc(0), body(2), Date.now() * NS), 2);
      await e.close();
    });

    it('reports every change of the stored totals', async () => {
      const e = await setup();
      const s = e.open(cfg('CB', { maxMsgs: 3 }));
      let msgs = 0;
      let bytes = 0;
      s.registerStorageUpdates((dm, db) => {
        msgs += dm;
        bytes += db;
      });
      fill(s, ['a', 'b'], 6);
      s.removeMsg(5);
      s.purgeEx('b', 0, 0);
      assert.deepEqual([msgs, bytes], [s.state().msgs, s.state().bytes]);
      s.purge();
      assert.deepEqual([msgs, bytes], [0, 0]);
      await e.close();
    });

    it('onDurable calls back for what was stored before it', async () => {
      const e = await setup();
      const s = e.open(cfg('D'));
      let calls = 0;
      fill(s, ['a'], 3);
      s.onDurable(() => calls++);
      s.onDurable(() => calls++);
      await durable(s);
      assert.equal(calls, 2);
      await e.close();
    });

    it('onDurable reports how far it reached: stores after the call that it covers', async () => {
      const e = await setup();
      const s = e.open(cfg('MARK'));
      const marks: number[] = [];
      const reached: number[] = [];
      fill(s, ['a'], 1);
      marks.push(s.appendMark());
      s.onDurable((err, durable) => {
        assert.equal(err, undefined);
        reached.push(durable);
      });
      // Stored in the same turn, after the call: the same write covers them.
      fill(s, ['b'], 2);
      marks.push(s.appendMark());
      s.skipMsg();
      marks.push(s.appendMark());
      await durable(s);
      assert.equal(reached.length, 1);
      for (const m of marks) assert.ok(m <= reached[0]!, `mark ${m} within ${reached[0]}`);
      // Marks never go back; a later store needs a later write (the memory store: none).
      fill(s, ['c'], 1);
      const later = s.appendMark();
      assert.ok(later >= marks[2]!);
      let last = -1;
      s.onDurable((_err, d) => (last = d));
      await durable(s);
      assert.ok(last >= later);
      await e.close();
    });

    it('many subjects (KV with history 1): last-by-subject and per-subject state', async () => {
      const e = await setup();
      const s = e.open(cfg('MANY', { maxMsgsPerSubject: 1 }));
      const keys = 20_000;
      for (let round = 0; round < 2; round++) {
        for (let k = 0; k < keys; k++)
          s.storeMsg(`$KV.b.k${k}`, Buffer.alloc(0), Buffer.from(`${round}:${k}`), Date.now() * NS);
      }
      assert.equal(s.state().msgs, keys);
      assert.equal(s.state().numSubjects, keys);
      assert.equal(s.loadLastMsg('$KV.b.k123')!.data.toString(), '1:123');
      assert.deepEqual(s.filteredState(1, '$KV.b.k7'), {
        msgs: 1,
        first: keys + 8,
        last: keys + 8,
      });
      assert.equal(s.loadNextMsg('$KV.b.>', true, 0)!.seq, keys + 1);
      await e.close();
    });
  });

  describe(`${label}: consumer store conformance`, () => {
    it('explicit acks: pending, redelivered, the ack floor', async () => {
      const e = await setup();
      const s = e.open(cfg('C'));
      fill(s, ['a'], 10);
      const c = s.consumerStore('dur', { ackPolicy: 'explicit' });
      assert.equal(s.state().consumers, 1);
      c.setStarting(0);
      const ts = Date.now() * NS;
      for (let i = 1; i <= 5; i++) c.updateDelivered(i, i, 1, ts + i);
      c.updateDelivered(6, 2, 2, ts + 6);
      let st = c.state();
      assert.deepEqual(st.delivered, { consumer: 6, stream: 5 });
      assert.deepEqual(st.ackFloor, { consumer: 0, stream: 0 });
      assert.deepEqual(
        [...st.pending.keys()].sort((a, b) => a - b),
        [1, 2, 3, 4, 5],
      );
      assert.deepEqual(st.pending.get(2), { sequence: 6, ts: ts + 6 });
      assert.deepEqual([...st.redelivered], [[2, 1]]);
      c.updateAcks(1, 1);
      st = c.state();
      assert.deepEqual(st.ackFloor, { consumer: 1, stream: 1 });
      c.updateAcks(3, 3);
      c.updateAcks(6, 2);
      st = c.state();
      assert.deepEqual(
        [...st.pending.keys()].sort((a, b) => a - b),
        [4, 5],
      );
      assert.equal(st.redelivered.size, 0);
      c.updateAcks(4, 4);
      c.updateAcks(5, 5);
      st = c.state();
      assert.equal(st.pending.size, 0);
      assert.deepEqual(st.ackFloor, { consumer: 6, stream: 5 });
      // state() is a copy.
      st.pending.set(99, { sequence: 1, ts: 1 });
      assert.equal(c.state().pending.size, 0);
      await e.close();
    });

    it('ack all and ack none move the floor as nats-server does', async () => {
      const e = await setup();
      const s = e.open(cfg('C2'));
      const all = s.consumerStore('all', { ackPolicy: 'all' });
      for (let i = 1; i <= 4; i++) all.updateDelivered(i, i + 10, 1, i);
      all.updateAcks(3, 13);
      let st = all.state();
      assert.deepEqual(st.ackFloor, { consumer: 3, stream: 13 });
      assert.deepEqual([...st.pending.keys()], [14]);
      const none = s.consumerStore('none', { ackPolicy: 'none' });
      none.updateDelivered(1, 5, 1, 1);
      none.updateDelivered(2, 7, 1, 2);
      st = none.state();
      assert.deepEqual(st.delivered, { consumer: 2, stream: 7 });
      assert.deepEqual(st.ackFloor, { consumer: 2, stream: 7 });
      assert.equal(st.pending.size, 0);
      await e.close();
    });

    it('update replaces the state and refuses an inconsistent one', async () => {
      const e = await setup();
      const s = e.open(cfg('C3'));
      const c = s.consumerStore('u');
      const next: ConsumerState = {
        delivered: { consumer: 10, stream: 20 },
        ackFloor: { consumer: 5, stream: 15 },
        pending: new Map([[18, { sequence: 8, ts: 123 }]]),
        redelivered: new Map([[18, 2]]),
      };
      c.update(next);
      assert.deepEqual(c.state(), next);
      assert.throws(() => c.update({ ...next, ackFloor: { consumer: 11, stream: 15 } }));
      assert.throws(() => c.update({ ...next, pending: new Map([[2, { sequence: 1, ts: 1 }]]) }));
      await c.delete();
      assert.equal(s.state().consumers, 0);
      await e.close();
    });
  });

  describe(`${label}: provider`, () => {
    it(
      'keeps stream and consumer configuration' + (o.survivesRestart ? ' across a restart' : ''),
      async () => {
        const e = await setup();
        const s = e.open(cfg('M1'));
        e.open(cfg('M2'));
        e.provider.writeConsumerMeta('M1', 'c1', Buffer.from('{"c":1}'));
        e.provider.writeConsumerMeta('M1', 'c2', Buffer.from('{"c":2}'));
        e.provider.removeConsumerMeta('M1', 'c2');
        e.provider.writeStreamMeta('M1', Buffer.from('{"name":"M1","v":2}'));
        fill(s, ['a'], 1);
        if (!o.survivesRestart) {
          await e.close();
          return;
        }
        await e.restart(cfg('M1'));
        const rec = e.provider.recover().sort((a, b) => a.meta.compare(b.meta));
        assert.deepEqual(
          rec.map((r) => [r.meta.toString(), r.consumers.map((c) => [c.name, c.meta.toString()])]),
          [
            ['{"name":"M1"}', [['c1', '{"c":1}']]],
            ['{"name":"M2"}', []],
          ],
        );
        await e.close();
      },
    );

    it('delete removes a stream and its consumers', async () => {
      const e = await setup();
      const s = e.open(cfg('GONE'));
      fill(s, ['a'], 3);
      s.consumerStore('c');
      e.provider.writeConsumerMeta('GONE', 'c', Buffer.from('{}'));
      await s.delete();
      if (o.survivesRestart) {
        assert.deepEqual(e.provider.recover(), []);
        const again = e.open(cfg('GONE'));
        assert.equal(again.state().msgs, 0);
      }
      await e.close();
    });
  });

  if (!o.survivesRestart) return;

  describe(`${label}: restart`, () => {
    it('messages, deletes, subjects, skips and first sequence survive a restart', async () => {
      const e = await setup();
      const c = cfg('R');
      let s = e.open(c);
      fill(s, ['a', 'b', 'c'], 30);
      s.removeMsg(1);
      s.removeMsg(10);
      s.eraseMsg(11);
      s.purgeEx('c', 20, 0);
      s.skipMsg();
      const before = s.state(true);
      const subjects = s.subjectsState('>');
      const loads = [2, 5, 12, 29, 30].map((q) => s.loadMsg(q));
      s = await e.restart(c);
      assert.deepEqual(s.state(true), before);
      assert.deepEqual(s.subjectsState('>'), subjects);
      assert.deepEqual(
        [2, 5, 12, 29, 30].map((q) => s.loadMsg(q)),
        loads,
      );
      assert.equal(s.loadMsg(10), undefined);
      assert.equal(s.loadMsg(11), undefined);
      assert.equal(s.storeMsg('d', Buffer.alloc(0), body(32), Date.now() * NS), 32);
      s.purge();
      s = await e.restart(c);
      assert.deepEqual([s.state().msgs, s.state().firstSeq, s.state().lastSeq], [0, 33, 32]);
      assert.equal(s.storeMsg('d', Buffer.alloc(0), body(33), Date.now() * NS), 33);
      s.compact(40);
      s = await e.restart(c);
      assert.deepEqual([s.state().msgs, s.state().firstSeq, s.state().lastSeq], [0, 40, 39]);
      await e.close();
    });

    it('limits removals survive a restart', async () => {
      const e = await setup();
      const c = cfg('LIM', { maxMsgs: 100, maxMsgsPerSubject: 3 });
      let s = e.open(c);
      for (let i = 0; i < 1000; i++)
        s.storeMsg(`s.${i % 50}`, Buffer.alloc(0), body(i), Date.now() * NS);
      const before = s.state(true);
      s = await e.restart(c);
      assert.deepEqual(s.state(true), before);
      assert.equal(s.loadLastMsg('s.7')!.data.toString(), 'msg-957');
      await e.close();
    });

    it('a consumer resumes mid-stream: position, pending acks and redeliveries', async () => {
      const e = await setup();
      const c = cfg('CR');
      let s = e.open(c);
      fill(s, ['a'], 20);
      let dur = s.consumerStore('dur', { ackPolicy: 'explicit' });
      for (let i = 1; i <= 10; i++) dur.updateDelivered(i, i, 1, i * 1000);
      dur.updateDelivered(11, 4, 2, 11_000);
      for (const q of [1, 2, 3, 5]) dur.updateAcks(q, q);
      const before = dur.state();
      s = await e.restart(c);
      dur = s.consumerStore('dur', { ackPolicy: 'explicit' });
      assert.deepEqual(dur.state(), before);
      assert.equal(before.pending.size, 7);
      assert.deepEqual([...before.redelivered], [[4, 1]]);
      assert.equal(s.state().consumers, 1);
      await e.close();
    });
  });
}
