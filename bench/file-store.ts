// The FILE store alone, without NATS, beside the MEMORY store: what the store costs
// per message on the three paths the streaming server drives, measured apart from
// the protocol.
//   store    messages stored as the publish path stores them (marshaled into slabs,
//            storeRange) in batches of BATCH, one flush each (as the server does per
//            event-loop turn: with file_sync, a flush is on disk); [main thread]
//            is the event loop's share of the CPU per message (Linux)
//   deliver  a subscription's round trip per message: sent (a subs.dat record),
//            acked (another), in batches of BATCH
//   read     every message looked up in sequence order (the oldest ones from disk,
//            the newest from the read cache)
//   bytes    the same read as deliveries do it: bytesOf() where the cache or a
//            block read back holds the message (no object, no view), else lookup()
//   crc      the record CRC32 (file-record.ts) against zlib.crc32, ns per call, at
//            the sizes the store checksums: a subscription update, an index record,
//            a 128-byte and a 1 KiB message's record
//   compact  a subscription's subs.dat records (sent, acked) over a window of 16,384
//            pending messages with compaction due whenever it is worth it: CPU and
//            GC per message, and the compactions that ran (their snapshots hold
//            about a window of pending messages each)
//   pending  a subscription's pending set (SeqSet, store/seq-set.ts) against a JS Set:
//            one add and one delete per message over a sliding window of MaxInflight
//            (16,384) sequences, ns per message; and the streaming subscription's
//            pending messages with their expirations (pending.ts: a SeqSet and a mark
//            per millisecond) against the Map of expirations it replaced
// SIZE sets the payload size (128), N the messages (200,000), SYNC=0 turns file_sync
// off. Each figure: messages per second (wall time) and CPU time per message, and
// the time the garbage collector took (all kinds), per message.
//
//   npm run build && node dist/bench/file-store.js
import { mkdtempSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { crc32 } from 'node:zlib';
import { CRC_IEEE, Crc32 } from '../src/streaming/store/file-record.js';
import { Pending } from '../src/streaming/pending.js';
import { SeqSet } from '../src/streaming/store/seq-set.js';
import { FileStore, MemoryStore, type Store } from '../src/streaming/store/index.js';
import {
  mainThreadCpuMicros,
  publishInBatches,
  readBytesInOrder,
  readInOrder,
} from './store-load.js';
import { formatRate } from './timing.js';

const N = Number(process.env.N ?? '200000');
const BATCH = Number(process.env.BATCH ?? '1024');
const data = Buffer.alloc(Number(process.env.SIZE ?? '128'), 0x61);
const sync = process.env.SYNC !== '0';
const limits = { maxMsgs: 0, maxBytes: 0 };

// Milliseconds of garbage collection since the last look.
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

async function run(label: string, store: Store): Promise<void> {
  await store.recover();
  const { msgs, subs } = store.createChannel('bench');
  await store.flush();
  // Wall time gives the rate; the process's CPU time (every thread: the file writes
  // and reads of the thread pool too) per message is steadier on a busy machine.
  let cpu = process.cpuUsage();
  const rate = (ms: number): string => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const us = (used.user + used.system) / N;
    const gc = (gcMs * 1000) / N;
    gcMs = 0;
    return `${formatRate((N * 1000) / ms).padStart(7)} msgs/s ${us.toFixed(2).padStart(5)} µs (gc ${gc.toFixed(2)})`;
  };

  let start = performance.now();
  cpu = process.cpuUsage();
  const main = mainThreadCpuMicros();
  await publishInBatches(store, msgs, N, BATCH, data);
  const mainUs = main === undefined ? NaN : (mainThreadCpuMicros()! - main) / N;
  const stored = `${rate(performance.now() - start)} [main thread ${mainUs.toFixed(2)} µs]`;

  const sub = subs.create({
    clientID: 'bench',
    qGroup: '',
    inbox: '_INBOX.bench',
    ackInbox: '_STAN.ack.bench',
    maxInFlight: BATCH,
    ackWaitInSecs: 30,
    durableName: 'bench',
    lastSent: 0,
    isDurable: true,
    isClosed: false,
  });
  start = performance.now();
  cpu = process.cpuUsage();
  for (let from = 1; from <= N; from += BATCH) {
    const to = Math.min(N, from + BATCH - 1);
    for (let s = from; s <= to; s++) subs.addPending(sub.id, s);
    for (let s = from; s <= to; s++) subs.ack(sub.id, s);
    // One turn's records, written as the server's rounds write them.
    await new Promise<void>((r) => setImmediate(r));
  }
  await store.flush();
  const delivered = rate(performance.now() - start);

  start = performance.now();
  cpu = process.cpuUsage();
  await readInOrder(msgs, N);
  const read = rate(performance.now() - start);
  start = performance.now();
  cpu = process.cpuUsage();
  await readBytesInOrder(msgs, N);
  const bytes = rate(performance.now() - start);
  console.log(
    `${label.padEnd(7)} store ${stored}   deliver ${delivered}   read ${read}   bytes ${bytes}`,
  );
  await store.close();
}

/** ns per call of `fn`, after a warm-up. */
function nsPerCall(fn: () => number, calls: number): number {
  let x = 0;
  for (let i = 0; i < calls / 10; i++) x ^= fn();
  const t = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) x ^= fn();
  const ns = Number(process.hrtime.bigint() - t) / calls;
  if (x === 0.5) console.log(x); // keeps the results alive
  return ns;
}

function crcBench(): void {
  const crc = Crc32.of(CRC_IEEE);
  const buf = Buffer.alloc(2048, 0x5a);
  const line = [8, 28, 180, 1100].map((n) => {
    const view = buf.subarray(0, n);
    const ours = nsPerCall(() => crc.bytes(buf, 0, n), 2e6);
    const zlib = nsPerCall(() => crc32(view), 2e6);
    return `${n} B ${ours.toFixed(0)} ns (zlib ${zlib.toFixed(0)})`;
  });
  console.log(`crc     ${line.join('   ')}`);
}

function pendingBench(): void {
  const window = 16_384;
  const n = 2_000_000;
  const slide = (set: Set<number>): number => {
    const t = process.hrtime.bigint();
    for (let seq = 1; seq <= n; seq++) {
      set.add(seq);
      if (seq > window) set.delete(seq - window);
    }
    return Number(process.hrtime.bigint() - t) / n;
  };
  slide(new SeqSet());
  slide(new Set<number>());
  const ours = slide(new SeqSet());
  const js = slide(new Set<number>());
  console.log(`pending SeqSet ${ours.toFixed(0)} ns (Set ${js.toFixed(0)}) per add + delete`);
  // A subscription's send and ack, the clock moving 1 ms every 500 messages.
  const expiring = (send: (seq: number, at: number) => void, ack: (seq: number) => void) => {
    const t = process.hrtime.bigint();
    for (let seq = 1; seq <= n; seq++) {
      send(seq, 30_000 + ((seq / 500) | 0));
      if (seq > window) ack(seq - window);
    }
    return Number(process.hrtime.bigint() - t) / n;
  };
  const runPending = (): number => {
    const p = new Pending();
    return expiring(
      (seq, at) => p.sent(seq, at),
      (seq) => p.delete(seq),
    );
  };
  const runMap = (): number => {
    const m = new Map<number, number>();
    return expiring(
      (seq, at) => m.set(seq, at),
      (seq) => m.delete(seq),
    );
  };
  runPending();
  runMap();
  const marks = runPending();
  const map = runMap();
  console.log(
    `pending with expirations: marks ${marks.toFixed(0)} ns (Map ${map.toFixed(0)}) per send + ack`,
  );
}

/**
 * A subscription catching up on the FILE store, as far as subs.dat goes: every
 * message sent and acked over a window of `window` pending ones, in batches of
 * BATCH per turn, with compaction due as soon as it is worth it (so each
 * compaction's snapshot holds about a window of pending messages). CPU and GC per
 * message, and how many compactions ran.
 */
async function compactBench(dir: string, window: number): Promise<void> {
  const store = new FileStore({
    dir,
    limits,
    sync,
    compactMinSize: 64 * 1024,
    compactInterval: 0,
    compactFrag: 50,
  });
  await store.recover();
  const { subs } = store.createChannel('compact');
  const sub = subs.create({
    clientID: 'bench',
    qGroup: '',
    inbox: '_INBOX.bench',
    ackInbox: '_STAN.ack.bench',
    maxInFlight: window,
    ackWaitInSecs: 30,
    durableName: 'bench',
    lastSent: 0,
    isDurable: true,
    isClosed: false,
  });
  await store.flush();
  const before = (await stat(join(dir, 'compact', 'subs.dat'))).size;
  gcMs = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  let written = 0;
  let lastSize = before;
  let compactions = 0;
  for (let from = 1; from <= N; from += BATCH) {
    const to = Math.min(N, from + BATCH - 1);
    for (let s = from; s <= to; s++) {
      subs.addPending(sub.id, s);
      if (s > window) subs.ack(sub.id, s - window);
    }
    written += (to - from + 1) * 2;
    // One turn's records, written (a compaction due runs in the same round).
    await store.flush();
    // A compaction shows as a file that shrank since the last look.
    const size = (await stat(join(dir, 'compact', 'subs.dat'))).size;
    if (size < lastSize) compactions++;
    lastSize = size;
  }
  await store.flush();
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  console.log(
    `compact window ${window}: ${formatRate((N * 1000) / ms).padStart(7)} msgs/s ` +
      `${((used.user + used.system) / N).toFixed(2)} µs (gc ${((gcMs * 1000) / N).toFixed(2)}) ` +
      `per message, ${compactions} compactions (${written} records)`,
  );
  await store.close();
}

crcBench();
pendingBench();
console.log(`${N} msgs of ${data.length} B, batches of ${BATCH}, file_sync ${sync}`);
await run('MEMORY', new MemoryStore({ limits }));
const dir = mkdtempSync(join(tmpdir(), 'wirebus-file-bench-'));
try {
  await run('FILE', new FileStore({ dir, limits, sync }));
  await compactBench(dir, 16_384);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
