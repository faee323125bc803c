// A file stream larger than the server's heap, through the whole server, wirebus
// (bin/wirebus under `node --max-old-space-size=HEAP`) and `nats-server -js` side by side
// in one run: acked publishing of GB gigabytes, a restart (recovery), every message read
// back in order by a pull consumer, then random MSG.GETs. The server's RSS is sampled
// from /proc every 200 ms (VmHWM is the kernel's peak). What it shows: recovery and reads
// do not load the stream; the memory a server needs does not grow with the stream.
//
//   npm run build && GB=3 SIZE=16384 node dist/bench/jetstream-large-stream.js
//   GB=2 SIZE=1024 HEAP=64 ONLY=wirebus node dist/bench/jetstream-large-stream.js
//
// With KEYS=<n> it fills a KV bucket (file storage, history 1) with n keys instead, then
// overwrites one key in ten (the per-subject limit at work), and times KV gets of random
// keys (nats v2's views.kv, DIRECT.GET) before and after a restart, with the RSS.
//
//   KEYS=2000000 node dist/bench/jetstream-large-stream.js

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AckPolicy, connect, StorageType, type NatsConnection } from 'nats';
import { freePort } from '../test/helpers/process.js';
import { connectWhenReady } from './connect-ready.js';

const GB = Number(process.env.GB ?? '3');
const SIZE = Number(process.env.SIZE ?? '16384');
const HEAP = process.env.HEAP ?? '64';
const ONLY = process.env.ONLY ?? '';
const KEYS = Number(process.env.KEYS ?? '0');
const WIREBUS = resolve(import.meta.dirname, '..', '..', 'bin', 'wirebus');
const MiB = 1024 * 1024;

type Which = 'wirebus' | 'nats-server';

function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1]);
  return { rss: kib('VmRSS') * 1024, hwm: kib('VmHWM') * 1024 };
}

/** A connection once the server listens: after a restart that waits for its recovery. */
async function connectAfterRecovery(port: number, who: string): Promise<NatsConnection> {
  for (let i = 0; ; i++) {
    try {
      return await connect({ servers: `127.0.0.1:${port}` });
    } catch (err) {
      if (i === 1200) throw new Error(`${who} did not start in 2 minutes: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The highest RSS seen while `work` runs. */
async function peakDuring(pid: number, work: () => Promise<void>): Promise<number> {
  let peak = memory(pid).rss;
  const timer = setInterval(() => (peak = Math.max(peak, memory(pid).rss)), 200);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, memory(pid).rss);
}

const stopping = new Set<ChildProcess>();

/** The server; one that dies on its own ends the run with its last words. */
function spawnServer(which: Which, port: number, dir: string): ChildProcess {
  const common = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir];
  const child =
    which === 'nats-server'
      ? spawn('nats-server', common, { stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn('node', [`--max-old-space-size=${HEAP}`, WIREBUS, ...common], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  child.once('exit', (code, signal) => {
    if (stopping.has(child)) return;
    process.stderr.write(`${which} died (${code ?? signal}):\n${stderr}\n`);
    process.exit(1);
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  stopping.add(child);
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function publishAll(
  nc: NatsConnection,
  total: number,
  subject: (i: number) => string = (i) => `big.${i % 1000}`,
  payload: Uint8Array = new Uint8Array(SIZE).map((_, i) => i & 255),
): Promise<void> {
  const js = nc.jetstream();
  const inflight = new Set<Promise<unknown>>();
  for (let i = 0; i < total; i++) {
    const p: Promise<unknown> = js.publish(subject(i), payload).finally(() => {
      inflight.delete(p);
    });
    inflight.add(p);
    if (inflight.size >= 256) await Promise.race(inflight);
  }
  await Promise.all(inflight);
}

async function readAll(nc: NatsConnection, total: number): Promise<number> {
  const jsm = await nc.jetstreamManager();
  await jsm.consumers.add('BIG', { durable_name: 'r', ack_policy: AckPolicy.None });
  const c = await nc.jetstream().consumers.get('BIG', 'r');
  let n = 0;
  let wrong = 0;
  for await (const m of await c.consume({ max_messages: 256 })) {
    if (m.seq !== ++n || m.data.length !== SIZE) wrong++;
    if (n === total) break;
  }
  return wrong;
}

async function run(which: Which): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-large-'));
  const port = await freePort();
  const total = Math.floor((GB * 1024 * MiB) / SIZE);
  const line = (what: string, v: string): void => {
    process.stdout.write(`${which.padEnd(11)} ${what.padEnd(34)} ${v}\n`);
  };
  try {
    let child = spawnServer(which, port, dir);
    let nc = await connectWhenReady(port, which);
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'BIG', subjects: ['big.>'], storage: StorageType.File });
    let t = Date.now();
    const writing = await peakDuring(child.pid!, () => publishAll(nc, total));
    const bytes = (await jsm.streams.info('BIG')).state.bytes;
    line(
      `${total} x ${SIZE} B acked`,
      `${(bytes / 1024 / MiB).toFixed(2)} GiB in ${(Date.now() - t) / 1000} s`,
    );
    line('RSS peak while publishing', `${(writing / MiB).toFixed(0)} MiB`);
    await nc.close();
    await stop(child);

    t = Date.now();
    child = spawnServer(which, port, dir);
    nc = await connectAfterRecovery(port, which);
    const after = await nc.jetstreamManager();
    const msgs = (await after.streams.info('BIG')).state.messages;
    line('restart to first STREAM.INFO', `${Date.now() - t} ms (${msgs} messages)`);
    const recovered = memory(child.pid!);
    line(
      'RSS after recovery (peak)',
      `${(recovered.rss / MiB).toFixed(0)} MiB (${(recovered.hwm / MiB).toFixed(0)} MiB)`,
    );
    t = Date.now();
    let wrong = 0;
    const reading = await peakDuring(child.pid!, async () => {
      wrong = await readAll(nc, total);
    });
    line('pull consume, in order', `${(Date.now() - t) / 1000} s, ${wrong} out of place`);
    line('RSS peak while reading', `${(reading / MiB).toFixed(0)} MiB`);
    t = Date.now();
    for (let i = 0; i < 2000; i++) {
      const seq = 1 + Math.floor(Math.random() * total);
      const m = await after.streams.getMessage('BIG', { seq });
      if (m.seq !== seq) throw new Error(`MSG.GET ${seq} answered ${m.seq}`);
    }
    line('2,000 random MSG.GET', `${Date.now() - t} ms`);
    line('RSS after the random reads', `${(memory(child.pid!).rss / MiB).toFixed(0)} MiB`);
    await nc.close();
    await stop(child);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The median time of `n` KV gets of random keys, in microseconds; checks each value. */
async function randomGets(nc: NatsConnection, n: number): Promise<number> {
  const kv = await nc.jetstream().views.kv('M', { bindOnly: true });
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const k = Math.floor(Math.random() * KEYS);
    const t = process.hrtime.bigint();
    const e = await kv.get(`k${k}`);
    times.push(Number(process.hrtime.bigint() - t) / 1000);
    const want = k % 10 === 0 ? 'w' : 'v';
    const got = e === null ? 'nothing' : new TextDecoder().decode(e.value);
    if (got !== want) throw new Error(`k${k}: ${got}`);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]!;
}

async function runKeys(which: Which): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-large-'));
  const port = await freePort();
  const line = (what: string, v: string): void => {
    process.stdout.write(`${which.padEnd(11)} ${what.padEnd(34)} ${v}\n`);
  };
  try {
    let child = spawnServer(which, port, dir);
    let nc = await connectWhenReady(port, which);
    await nc.jetstream().views.kv('M', { history: 1, storage: StorageType.File });
    let t = Date.now();
    const enc = new TextEncoder();
    const filling = await peakDuring(child.pid!, async () => {
      await publishAll(nc, KEYS, (i) => `$KV.M.k${i}`, enc.encode('v'));
      await publishAll(nc, KEYS / 10, (i) => `$KV.M.k${i * 10}`, enc.encode('w'));
    });
    const state = (await (await nc.jetstreamManager()).streams.info('KV_M')).state;
    line(
      `${KEYS} keys put, 1 in 10 twice`,
      `${(Date.now() - t) / 1000} s, ${state.messages} values`,
    );
    line('RSS peak while putting', `${(filling / MiB).toFixed(0)} MiB`);
    line('KV get of a random key, median', `${(await randomGets(nc, 2000)).toFixed(0)} µs`);
    await nc.close();
    await stop(child);

    t = Date.now();
    child = spawnServer(which, port, dir);
    nc = await connectAfterRecovery(port, which);
    const msgs = (await (await nc.jetstreamManager()).streams.info('KV_M')).state.messages;
    line('restart to first STREAM.INFO', `${Date.now() - t} ms (${msgs} values)`);
    const recovered = memory(child.pid!);
    line(
      'RSS after recovery (peak)',
      `${(recovered.rss / MiB).toFixed(0)} MiB (${(recovered.hwm / MiB).toFixed(0)} MiB)`,
    );
    line('KV get after the restart, median', `${(await randomGets(nc, 2000)).toFixed(0)} µs`);
    await nc.close();
    await stop(child);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const which of ['wirebus', 'nats-server'] as const)
  if (ONLY === '' || ONLY === which) await (KEYS > 0 ? runKeys(which) : run(which));
