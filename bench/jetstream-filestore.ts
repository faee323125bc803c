// The JetStream file store alone, without NATS: append throughput (128 B and 1 KiB,
// sync interval and sync always, batches of BATCH stored per event-loop turn with one
// onDurable each, as the engine acks a turn's publishes), loads by sequence (random and
// in order, from disk after a restart), last-by-subject over many subjects, and the
// recovery time and memory of a large stream.
//
// For the "one log engine?" question it runs the streaming FILE store's append the same
// way (src/streaming/store), and with REF=1 it publishes the same messages with acks to
// `nats-server -js` (Debian's 2.9.10) file stream through the nats v2 client, WINDOW
// publishes in flight: the figure the engine's acked publish will be judged against.
//
//   npm run build && node dist/bench/jetstream-filestore.js
//   N=1000000 REF=1 node dist/bench/jetstream-filestore.js
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { FileStorage } from '../src/jetstream/storage/file.js';
import type { StreamStore, StreamStoreConfig } from '../src/jetstream/storage/types.js';
import { nowNanos } from '../src/streaming/protocol/index.js';
import { makeStoredMsg } from '../src/streaming/store/index.js';
import { FileStore } from '../src/streaming/store/file.js';
import { freePort } from '../test/helpers/process.js';
import { streamConfig } from '../test/jetstream/storage/conformance.js';
import { formatRate } from './timing.js';

const N = Number(process.env.N ?? '300000');
const BATCH = Number(process.env.BATCH ?? '256');
const WINDOW = Number(process.env.WINDOW ?? '1024');
const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'wirebus-jsbench-'));
  dirs.push(d);
  return d;
};

const cfg = (name: string, over: Partial<StreamStoreConfig> = {}): StreamStoreConfig =>
  streamConfig(name, 'file', over);

const durable = (s: StreamStore): Promise<void> =>
  new Promise((resolve, reject) => s.onDurable((e) => (e ? reject(e) : resolve())));

async function append(size: number, sync: number | 'always', n: number): Promise<number> {
  const storage = new FileStorage({ storeDir: tempDir(), syncInterval: sync });
  const s = storage.account('$G').openStream(cfg('A'), Buffer.from('{}'));
  const data = Buffer.alloc(size, 0x61);
  const empty = Buffer.alloc(0);
  const start = performance.now();
  for (let i = 0; i < n;) {
    const end = Math.min(n, i + BATCH);
    for (; i < end; i++) s.storeMsg('bench.append', empty, data, Date.now() * 1e6);
    await durable(s);
  }
  const ms = performance.now() - start;
  await storage.close();
  return (n * 1000) / ms;
}

async function streamingAppend(size: number, sync: boolean, n: number): Promise<number> {
  const store = new FileStore({ dir: tempDir(), sync });
  await store.recover();
  const { msgs } = store.createChannel('bench');
  await store.flush();
  const data = Buffer.alloc(size, 0x61);
  const start = performance.now();
  for (let seq = 0; seq < n;) {
    const end = Math.min(n, seq + BATCH);
    while (seq < end) {
      seq++;
      msgs.store(makeStoredMsg(seq, nowNanos(), 'bench.append', '', data));
    }
    await store.flush();
  }
  const ms = performance.now() - start;
  await store.close();
  return (n * 1000) / ms;
}

/** Acked publishes to a nats-server -js file stream, WINDOW in flight. */
async function reference(size: number, n: number): Promise<number | string> {
  const port = await freePort();
  const sd = tempDir();
  const proc = spawn('nats-server', ['-js', '-sd', sd, '-a', '127.0.0.1', '-p', String(port)], {
    stdio: 'ignore',
  });
  try {
    let nc;
    for (let i = 0; ; i++) {
      try {
        nc = await connect({ port, noRandomize: true });
        break;
      } catch (err) {
        if (i > 50) return `nats-server did not start: ${String(err)}`;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'A', subjects: ['bench.>'] });
    // Publishes with a reply subject and one subscription counting the PubAcks: the
    // server's acked rate, without a promise and a timer per message in the client.
    const data = Buffer.alloc(size, 0x61);
    let acked = 0;
    let inflight = 0;
    let wake: (() => void) | undefined;
    let failed: string | undefined;
    nc.subscribe('_ACK.bench.>', {
      callback: (_err, m) => {
        if (failed === undefined && !m.string().startsWith('{"stream"')) failed = m.string();
        acked++;
        inflight--;
        wake?.();
      },
    });
    await nc.flush();
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      inflight++;
      nc.publish('bench.append', data, { reply: `_ACK.bench.${i}` });
      while (inflight >= WINDOW) await new Promise<void>((r) => (wake = r));
    }
    while (acked < n) await new Promise<void>((r) => (wake = r));
    const ms = performance.now() - start;
    await nc.close();
    if (failed !== undefined) return `a publish failed: ${failed}`;
    return (n * 1000) / ms;
  } finally {
    proc.kill('SIGKILL');
  }
}

async function loads(n: number): Promise<void> {
  const dir = tempDir();
  let storage = new FileStorage({ storeDir: dir });
  let s = storage.account('$G').openStream(cfg('L'), Buffer.from('{}'));
  const data = Buffer.alloc(1024, 0x62);
  for (let i = 0; i < n; i++) {
    s.storeMsg(`load.${i % 100}`, Buffer.alloc(0), data, Date.now() * 1e6);
    if (i % BATCH === 0) await durable(s);
  }
  await storage.close();
  // Heap and typed arrays (the slots are ArrayBuffers); exact with node --expose-gc.
  const gc = (globalThis as { gc?: () => void }).gc;
  const used = (): number => {
    gc?.();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const heap0 = used();
  const rec0 = performance.now();
  storage = new FileStorage({ storeDir: dir });
  s = storage.account('$G').openStream(cfg('L'), Buffer.from('{}'));
  const recMs = performance.now() - rec0;
  const heap = used() - heap0;
  const mb = (n * (1024 + 30 + 7)) / 1e6;
  console.log(
    `recovery: ${n} msgs of 1 KiB (${mb.toFixed(0)} MB) in ${recMs.toFixed(0)} ms (${formatRate((n * 1000) / recMs)} msgs/s), memory after recovery ${(heap / 1e6).toFixed(1)} MB${gc === undefined ? ' (run with --expose-gc for an exact figure)' : ''}`,
  );
  const into = { subject: '', seq: 0, ts: 0, hdr: data, data };
  let t = performance.now();
  for (let seq = 1; seq <= n; seq++) s.loadMsg(seq, into);
  let ms = performance.now() - t;
  console.log(
    `load by sequence, in order (from disk, 512 KB read-ahead): ${formatRate((n * 1000) / ms)} msgs/s`,
  );
  const R = Math.min(n, 200_000);
  t = performance.now();
  for (let i = 0; i < R; i++) s.loadMsg(1 + Math.floor(Math.random() * n), into);
  ms = performance.now() - t;
  console.log(
    `load by sequence, random over the whole stream (16 KB pages, 64 MB cache < stream): ${formatRate((R * 1000) / ms)} msgs/s`,
  );
  const hot = Math.floor(n / 10);
  t = performance.now();
  for (let i = 0; i < R; i++) s.loadMsg(n - Math.floor(Math.random() * hot), into);
  ms = performance.now() - t;
  console.log(
    `load by sequence, random over the newest 10% (fits the cache): ${formatRate((R * 1000) / ms)} msgs/s`,
  );
  await storage.close();
}

async function lastBySubject(keys: number): Promise<void> {
  const storage = new FileStorage({ storeDir: tempDir() });
  const s = storage
    .account('$G')
    .openStream(cfg('KV', { maxMsgsPerSubject: 1 }), Buffer.from('{}'));
  const data = Buffer.alloc(128, 0x63);
  let t = performance.now();
  for (let round = 0; round < 2; round++) {
    for (let k = 0; k < keys; k++)
      s.storeMsg(`$KV.b.${k}`, Buffer.alloc(0), data, Date.now() * 1e6);
    await durable(s);
  }
  let ms = performance.now() - t;
  console.log(
    `kv put, ${keys} keys × 2 (per-subject limit 1): ${formatRate((2 * keys * 1000) / ms)} msgs/s`,
  );
  const R = 200_000;
  t = performance.now();
  for (let i = 0; i < R; i++) s.loadLastMsg(`$KV.b.${Math.floor(Math.random() * keys)}`);
  ms = performance.now() - t;
  console.log(`last by subject, ${keys} subjects, random: ${formatRate((R * 1000) / ms)} msgs/s`);
  await storage.close();
}

try {
  for (const size of [128, 1024]) {
    const interval = await append(size, 120_000, N);
    const always = await append(size, 'always', Math.min(N, 100_000));
    const stanWrite = await streamingAppend(size, false, N);
    const stanSync = await streamingAppend(size, true, Math.min(N, 100_000));
    console.log(
      `append ${size} B: jetstream file ${formatRate(interval)} msgs/s (sync interval), ${formatRate(always)} (sync always); streaming FILE store ${formatRate(stanWrite)} (sync false), ${formatRate(stanSync)} (sync true); ratio jetstream/streaming ${(interval / stanWrite).toFixed(2)} / ${(always / stanSync).toFixed(2)}`,
    );
    if (process.env.REF === '1') {
      const ref = await reference(size, Math.min(N, 200_000));
      if (typeof ref === 'string') console.log(`nats-server -js: ${ref}`);
      else {
        console.log(
          `nats-server -js acked publish ${size} B (nats v2 client, ${WINDOW} in flight): ${formatRate(ref)} msgs/s; raw store append / reference = ${(interval / ref).toFixed(1)}`,
        );
      }
    }
  }
  await loads(Math.min(N, 500_000));
  await lastBySubject(Math.min(N, 500_000));
} finally {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
process.exit(0);
