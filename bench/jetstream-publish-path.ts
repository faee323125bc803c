// The publish side of JetStream piece by piece, in one process, each beside the way it
// was done before (issue 15's performance work; bench/RESULTS.md has the figures):
//
// - PubAck bodies: PubAckWriter (prefix bytes + digits into an arena) against a string
//   and Buffer.from per message;
// - the headers a publish reads: a search for `\r\nNats-` in the block's bytes, then one
//   latin1 string of it, against six headerValue() calls, each converting the block again;
// - memory store appends (128 B and 1 KiB, max_msgs 100,000 so the oldest go): the
//   store's columnar log and slabs against a Map by sequence of per-message copies, each
//   with the share of its time spent in garbage collection;
// - file store appends, one message per durability round (a sync publisher) and 256
//   (an async one): storeMsg then onDurable, with the default sync interval.
//
//   npx tsc -p tsconfig.json && node dist/bench/jetstream-publish-path.js
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import { headerNeedle, headerValue, headerValueAt } from '../src/jetstream/headers.js';
import { PubAckWriter } from '../src/jetstream/pub-ack.js';
import { FileStorage } from '../src/jetstream/storage/file.js';
import { MemoryStoreProvider } from '../src/jetstream/storage/memory.js';
import type { StoredMsg, StreamStore } from '../src/jetstream/storage/types.js';
import { streamConfig } from '../test/jetstream/storage/conformance.js';
import { formatRate, measure, printTable, type BenchResult } from './timing.js';

const MS = Number(process.env.MS ?? '1500');
const results: BenchResult[] = [];
let sink = 0;

// ---- PubAck bodies ---------------------------------------------------------------
{
  const w = new PubAckWriter('ORDERS', '');
  const prefix = '{"stream":"ORDERS", "seq":';
  let seq = 1_000_000;
  results.push(
    measure('PubAck body, string + Buffer.from (before)', MS, 1000, () => {
      sink += Buffer.from(prefix + String(seq++) + '}').length;
    }),
  );
  results.push(
    measure('PubAck body, PubAckWriter (after)', MS, 1000, () => {
      sink += w.ack(seq++) - w.start;
    }),
  );
}

// ---- header reads ------------------------------------------------------------------
{
  const KEYS = [
    'Nats-Expected-Stream',
    'Nats-Msg-Id',
    'Nats-Expected-Last-Subject-Sequence',
    'Nats-Expected-Last-Sequence',
    'Nats-Expected-Last-Msg-Id',
    'Nats-Rollup',
  ];
  const NATS = Buffer.from('\r\nNats-');
  const withId = Buffer.from(
    'NATS/1.0\r\nNats-Msg-Id: 5f3a9c1e\r\nContent-Type: text/plain\r\n\r\n',
  );
  const plain = Buffer.from('NATS/1.0\r\nContent-Type: text/plain\r\nX-Trace: abc\r\n\r\n');
  for (const [label, hdr] of [
    ['Nats-Msg-Id', withId],
    ['no Nats- header', plain],
  ] as const) {
    results.push(
      measure(`publish header reads, ${label}: 6 x headerValue (before)`, MS, 1000, () => {
        for (const k of KEYS) sink += headerValue(hdr, k).length;
      }),
    );
    results.push(
      measure(`publish header reads, ${label}: one string (after)`, MS, 1000, () => {
        if (hdr.indexOf(NATS) < 0) return;
        const text = hdr.toString('latin1');
        for (const k of KEYS) sink += headerValueAt(text, headerNeedle(k)).length;
      }),
    );
  }
}

// ---- memory store appends ----------------------------------------------------------
/** The former memory log: a Map by sequence of messages whose bytes were copied one by one. */
class MapLog {
  private readonly msgs = new Map<number, StoredMsg>();
  private first = 1;
  private last = 0;
  store(subject: string, hdr: Buffer, data: Buffer, ts: number, max: number): void {
    const copy = Buffer.allocUnsafe(data.length);
    data.copy(copy, 0);
    const seq = ++this.last;
    this.msgs.set(seq, { subject, seq, ts, hdr, data: copy });
    while (this.msgs.size > max) this.msgs.delete(this.first++);
  }
}

/** Runs `run`, noting the share of its time the garbage collections during it took. */
async function withGc(run: () => BenchResult): Promise<BenchResult> {
  let gcMs = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  });
  obs.observe({ entryTypes: ['gc'] });
  const start = performance.now();
  const r = run();
  const elapsed = performance.now() - start;
  // Entries arrive asynchronously.
  await new Promise((resolve) => setTimeout(resolve, 20));
  obs.disconnect();
  r.note = `GC ${((100 * gcMs) / elapsed).toFixed(0)}% of the time`;
  return r;
}

for (const size of [128, 1024]) {
  // A view of a larger buffer, as a message in a connection's read buffer is.
  const read = Buffer.alloc(64 * 1024, 0x61);
  const data = read.subarray(100, 100 + size);
  const empty = Buffer.alloc(0);
  const max = 100_000;
  const old = new MapLog();
  results.push(
    await withGc(() =>
      measure(`memory store append ${size} B, Map + copy per message (before)`, MS, 1000, () => {
        old.store('orders.new', empty, data, 1, max);
      }),
    ),
  );
  const store = new MemoryStoreProvider().openStream(streamConfig('M', 'memory', { maxMsgs: max }));
  let ts = 1.7e18;
  results.push(
    await withGc(() =>
      measure(`memory store append ${size} B, MemoryStreamStore (after)`, MS, 1000, () => {
        store.storeMsg('orders.new', empty, data, (ts += 1000));
      }),
    ),
  );
  await store.delete();
}

// ---- file store appends, per durability round -------------------------------------
const dirs: string[] = [];
const durable = (s: StreamStore): Promise<void> =>
  new Promise((resolve, reject) => s.onDurable((e) => (e ? reject(e) : resolve())));

async function fileAppend(size: number, perRound: number): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-jspub-'));
  dirs.push(dir);
  const storage = new FileStorage({ storeDir: dir });
  const s = storage.account('$G').openStream(streamConfig('F', 'file'), Buffer.from('{}'));
  const data = Buffer.alloc(size, 0x61);
  const empty = Buffer.alloc(0);
  const run = async (ms: number): Promise<number> => {
    let n = 0;
    const start = performance.now();
    while (performance.now() - start < ms) {
      for (let i = 0; i < perRound; i++) s.storeMsg('orders.new', empty, data, 1);
      await durable(s);
      n += perRound;
    }
    return (n * 1000) / (performance.now() - start);
  };
  await run(200);
  const rate = await run(MS);
  await storage.close();
  return {
    name: `file store append ${size} B, ${perRound} per durability round`,
    opsPerSec: rate,
    note: 'sync interval (default)',
  };
}

try {
  for (const size of [128, 1024]) {
    for (const perRound of [1, 256]) results.push(await fileAppend(size, perRound));
  }
} finally {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

printTable(results);
if (sink === 0) console.log(formatRate(sink));
