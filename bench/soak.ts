// The soak of issue 19: wirebus and nats-streaming-server side by side, each in one
// process on its own port, each under the same mixed load for DURATION_S seconds
// (soak-load.ts: core publishers, a queue group, requests, connection churn, and a
// streaming client at 500 acked msgs/s over three channels held at max_msgs 5,000,
// with a durable and a durable queue group on each), each watched by an idle client
// in a separate process that PINGs every 50 ms (soak-ping.ts). Reports the slowest
// PONG, RSS after warm-up and at the end, RSS growth over the second half (least
// squares over one sample a second), losses, and for wirebus the longest event-loop
// delay per 5 s (soak-probe.ts). A benchmark with a report, not a test.
//
//   npm run build && node dist/bench/soak.js
//   DURATION_S=600 STORE=FILE node dist/bench/soak.js
//
// DURATION_S (180), WARMUP_S (30, or a sixth of a shorter run), STORE (MEMORY or
// FILE), SERVERS (wirebus,reference; `wirebus+--flag` adds a wirebus run with that
// node flag, e.g. SERVERS=wirebus,wirebus+--single-threaded-gc,reference), CORE_RATE (2500 msgs/s in all), STAN_RATE
// (500), PROFILE=1 (wirebus runs with --cpu-prof), WIREBUS_NODE_ARGS (more node
// flags for wirebus, e.g. --trace-gc; its stdout is kept), STAN_REF_BIN (default
// /tmp/stan-ref/nats-streaming-server; without it only wirebus runs). Results go to
// bench/results/soak-<time>/ (ignored by git).

import { spawn, type ChildProcess } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const durationS = Number(process.env.DURATION_S ?? '180');
const warmupS = Number(process.env.WARMUP_S ?? String(Math.min(30, Math.floor(durationS / 6))));
const store = process.env.STORE ?? 'MEMORY';
const refBin = process.env.STAN_REF_BIN ?? '/tmp/stan-ref/nats-streaming-server';
const wanted = (process.env.SERVERS ?? 'wirebus,reference').split(',');
const profile = process.env.PROFILE === '1';
const loadArgs = [
  '--core-rate',
  process.env.CORE_RATE ?? '2500',
  '--stan-rate',
  process.env.STAN_RATE ?? '500',
];
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const resultsDir = join(repo, 'bench', 'results', `soak-${stamp}`);

interface Side {
  name: string;
  port: number;
  dataDir: string;
  server: ChildProcess;
  ping: ChildProcess | null;
  load: ChildProcess | null;
  /** [seconds since start, RSS MiB], one a second. */
  rss: [number, number][];
  probeFile: string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m !== null ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Resolves once the server answers PING on its client port (30 s at most). */
async function waitReady(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port });
      let buf = '';
      s.setEncoding('latin1');
      s.on('connect', () => s.write('CONNECT {}\r\nPING\r\n'));
      s.on('data', (d: string) => {
        buf += d;
        if (buf.includes('PONG')) {
          s.destroy();
          resolve(true);
        }
      });
      s.on('error', () => resolve(false));
      setTimeout(() => {
        s.destroy();
        resolve(false);
      }, 1000);
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`server on port ${port} did not answer`);
}

/** The last line a child printed on stdout, parsed, once it exits. */
function lastJson(child: ChildProcess): Promise<Record<string, unknown>> {
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve) => {
    child.on('exit', () => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as Record<string, unknown>);
      } catch {
        resolve({ error: `no result (${line.slice(0, 200)})` });
      }
    });
  });
}

async function startSide(name: string): Promise<Side> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `soak-${name}-`));
  const storeArgs = ['-st', store, '-mm', '5000', ...(store === 'FILE' ? ['--dir', dataDir] : [])];
  const common = ['-a', '127.0.0.1', '-p', String(port), '-cid', 'test-cluster', ...storeArgs];
  const probeFile = join(resultsDir, `${name}-probe.jsonl`);
  let server: ChildProcess;
  if (name.startsWith('wirebus')) {
    const nodeArgs = ['--import', join(here, 'soak-probe.js')];
    if (profile) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${resultsDir}`);
    nodeArgs.push(...(process.env.WIREBUS_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''));
    // `wirebus+--flag+--other`: one more wirebus with these node flags, side by side.
    nodeArgs.push(...name.split('+').slice(1));
    server = spawn(process.execPath, [...nodeArgs, join(repo, 'bin', 'wirebus'), ...common], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, SOAK_PROBE_OUT: probeFile },
    });
  } else {
    server = spawn(refBin, common, { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  // The server's stdout (GC traces with WIREBUS_NODE_ARGS=--trace-gc) goes to a file.
  server.stdout?.pipe(createWriteStream(join(resultsDir, `${name}-stdout.log`)));
  await waitReady(port);
  return { name, port, dataDir, server, ping: null, load: null, rss: [], probeFile };
}

/** Least-squares slope of [t s, MiB] points, in MiB per minute. */
function slopePerMin(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (const [x, y] of points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const d = n * sxx - sx * sx;
  return d === 0 ? 0 : ((n * sxy - sx * sy) / d) * 60;
}

function rssAt(points: [number, number][], t: number): number {
  let best = points[0]?.[1] ?? 0;
  for (const [x, y] of points) if (x <= t) best = y;
  return best;
}

interface Probe {
  t: number;
  loop_max_ms: number;
  tick_cpu_max_ms?: number;
  turn_max_ms?: number;
  heap_used_mb: number;
  array_buffers_mb: number;
}

/** One long turn as soak-probe.ts saw it: its gap, and what the main thread did in it. */
interface Stall {
  t: number;
  stall_ms: number;
  cpu_ms: number;
  wait_ms: number;
  gc_ms: number;
}

/** A tick that used more than SOAK_BUSY_MS of main-thread CPU (soak-probe.ts). */
interface Busy {
  t: number;
  busy_ms: number;
  wait_ms: number;
  prev_wait_ms: number;
  gc_ms: number;
  turns: number;
  turn_max_ms: number;
  turn_type: string;
  read_kb: number;
}

/** One callback over SOAK_TURN_MS, with SOAK_TURNS=1 (soak-probe.ts). */
interface LongTurn {
  t: number;
  turn_ms: number;
  type: string;
  gc_ms: number;
}

/** The busiest tick, and whether busy ticks follow waits for a core (a backlog handled at once). */
function busyNote(name: string, busy: Busy[]): string {
  if (busy.length === 0) return `${name}: no tick over the probe's CPU threshold after warm-up`;
  const top = busy.reduce((a, b) => (b.busy_ms > a.busy_ms ? b : a));
  const afterWait = busy.filter((b) => b.prev_wait_ms + b.wait_ms >= b.busy_ms).length;
  return (
    `${name}: ${busy.length} ticks over the CPU threshold after warm-up, ${afterWait} of them ` +
    `after waiting at least as long for a core; the busiest ${top.busy_ms} ms at ${top.t} s ` +
    `(waited ${top.prev_wait_ms} ms in the tick before and ${top.wait_ms} ms in it, GC ${top.gc_ms} ms, ` +
    `${top.read_kb} KiB read, ${top.turns} callbacks, the longest ${top.turn_max_ms} ms ${top.turn_type})`
  );
}

/** The callbacks that ran longest (wall time), with the GC inside them. */
function turnNote(name: string, turns: LongTurn[], after: Probe[]): string {
  const maxes = after
    .map((p) => p.turn_max_ms)
    .filter((m): m is number => m !== undefined)
    .sort((a, b) => a - b);
  if (maxes.length === 0) return '';
  const worst = turns
    .slice()
    .sort((a, b) => b.turn_ms - a.turn_ms)
    .slice(0, 5)
    .map((x) => `${x.turn_ms} ms ${x.type} at ${x.t} s (GC ${x.gc_ms} ms)`);
  return (
    `${name}: longest callback per 5 s after warm-up: median ${maxes[maxes.length >> 1]!.toFixed(1)} ms, ` +
    `max ${maxes[maxes.length - 1]!.toFixed(1)} ms; ${turns.length} callbacks over the threshold` +
    (worst.length > 0 ? `, the longest: ${worst.join('; ')}` : '')
  );
}

/** The longest turn and the turn that ran longest on a CPU, split into run / wait / GC. */
function stallNote(name: string, stalls: Stall[]): string {
  if (stalls.length === 0) return `${name}: no turn over the probe's threshold after warm-up`;
  const fmt = (s: Stall): string =>
    `${s.stall_ms} ms at ${s.t} s (on a CPU ${s.cpu_ms} ms, of it GC ${s.gc_ms} ms; waiting for a core ${s.wait_ms} ms)`;
  const longest = stalls.reduce((a, b) => (b.stall_ms > a.stall_ms ? b : a));
  const busiest = stalls.reduce((a, b) => (b.cpu_ms - b.gc_ms > a.cpu_ms - a.gc_ms ? b : a));
  // Neither running nor waiting for a core: blocked (in a GC pause waiting for V8's
  // helper threads, or in a system call).
  const asleep = (s: Stall): number => s.stall_ms - s.cpu_ms - s.wait_ms;
  const sleepiest = stalls.reduce((a, b) => (asleep(b) > asleep(a) ? b : a));
  const blocked = stalls.filter((s) => asleep(s) > 30).length;
  return (
    `${name}: ${stalls.length} turns over the threshold after warm-up; longest ${fmt(longest)}; ` +
    `most CPU outside GC ${fmt(busiest)}; ${blocked} blocked (neither running nor waiting) ` +
    `over 30 ms, the longest ${fmt(sleepiest)}`
  );
}

/** JS heap in use and ArrayBuffer bytes: medians of the first and of the last minute after warm-up. */
function heapNote(name: string, after: Probe[]): string {
  if (after.length === 0) return '';
  const t0 = after[0]!.t;
  const t1 = after[after.length - 1]!.t;
  const first = after.filter((p) => p.t < t0 + 60);
  const last = after.filter((p) => p.t > t1 - 60);
  const median = (xs: number[]): number => xs.slice().sort((a, b) => a - b)[xs.length >> 1] ?? 0;
  const fig = (f: (p: Probe) => number): string =>
    `${median(first.map(f)).toFixed(1)} → ${median(last.map(f)).toFixed(1)} MB`;
  return (
    `${name}: JS heap in use ${fig((p) => p.heap_used_mb)}, ArrayBuffers ` +
    `${fig((p) => p.array_buffers_mb)} (medians of the first and last minute after warm-up)`
  );
}

async function main(): Promise<void> {
  mkdirSync(resultsDir, { recursive: true });
  const names = wanted.filter((n) => {
    if (n !== 'reference') return true;
    if (existsSync(refBin)) return true;
    process.stderr.write(`soak: no reference binary at ${refBin}, wirebus only\n`);
    return false;
  });
  const sides = await Promise.all(names.map((n) => startSide(n)));
  const pingResults: Promise<Record<string, unknown>>[] = [];
  const loadResults: Promise<Record<string, unknown>>[] = [];
  for (const side of sides) {
    side.ping = spawn(process.execPath, [join(here, 'soak-ping.js'), String(side.port)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    pingResults.push(lastJson(side.ping));
    side.load = spawn(
      process.execPath,
      [join(here, 'soak-load.js'), String(side.port), ...loadArgs],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    loadResults.push(lastJson(side.load));
  }
  process.stderr.write(
    `soak: ${names.join(' and ')}, ${store}, ${durationS} s (warm-up ${warmupS} s), results in ${resultsDir}\n`,
  );
  const t0 = Date.now();
  const sampler = setInterval(() => {
    const t = (Date.now() - t0) / 1000;
    for (const side of sides) side.rss.push([t, rssMiB(side.server.pid ?? 0)]);
  }, 1000);
  await new Promise((r) => setTimeout(r, durationS * 1000));
  clearInterval(sampler);
  for (const side of sides) {
    side.ping?.kill('SIGTERM');
    side.load?.kill('SIGTERM');
  }
  const pings = await Promise.all(pingResults);
  const loads = await Promise.all(loadResults);
  for (const side of sides) {
    side.server.kill('SIGINT');
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        side.server.kill('SIGKILL');
      }, 10_000);
      side.server.on('exit', () => {
        clearTimeout(t);
        resolve();
      });
    });
    rmSync(side.dataDir, { recursive: true, force: true });
  }
  const rows: string[] = [];
  const notes: string[] = [];
  const report: Record<string, unknown>[] = [];
  sides.forEach((side, i) => {
    const ping = pings[i]!;
    const load = loads[i]!;
    const rss = side.rss;
    const half = durationS / 2;
    const growth = slopePerMin(rss.filter(([t]) => t >= half));
    const start = rssAt(rss, warmupS);
    const end = rss[rss.length - 1]?.[1] ?? 0;
    let loopMax = '';
    if (existsSync(side.probeFile)) {
      const lines = readFileSync(side.probeFile, 'utf8').trim().split('\n');
      const parsed = lines.map((l) => JSON.parse(l) as Probe | Stall | Busy | LongTurn);
      const probes = parsed.filter((p): p is Probe => 'loop_max_ms' in p);
      const after = probes.filter((p) => p.t > warmupS);
      const worst = after.reduce((m, p) => Math.max(m, p.loop_max_ms), 0);
      loopMax = `${worst.toFixed(1)} ms`;
      notes.push(heapNote(side.name, after));
      const stalls = parsed.filter((p): p is Stall => 'stall_ms' in p && p.t > warmupS);
      notes.push(stallNote(side.name, stalls));
      notes.push(
        busyNote(
          side.name,
          parsed.filter((p): p is Busy => 'busy_ms' in p && p.t > warmupS),
        ),
      );
      const turnLine = turnNote(
        side.name,
        parsed.filter((p): p is LongTurn => 'turn_ms' in p && p.t > warmupS),
        after,
      );
      if (turnLine !== '') notes.push(turnLine);
      const cpus = after.map((p) => p.tick_cpu_max_ms ?? 0).sort((a, b) => a - b);
      if (cpus.length > 0) {
        notes.push(
          `${side.name}: most main-thread CPU between two 10 ms ticks (one turn's work at most), ` +
            `per 5 s after warm-up: median ${cpus[cpus.length >> 1]!.toFixed(1)} ms, ` +
            `max ${cpus[cpus.length - 1]!.toFixed(1)} ms`,
        );
      }
    }
    rows.push(
      `| ${side.name}, ${store} | ${String(ping.slowest_ms)} ms | ${String(ping.p99_ms)} ms | ` +
        `${loopMax || 'n/a'} | ${start.toFixed(1)} → ${end.toFixed(1)} MiB | ` +
        `${growth.toFixed(2)} MiB/min | ${String(load.core_lost)} / ${String(load.stan_lost)} | ` +
        `${String(load.request_timeouts)} of ${String(load.requests)} |`,
    );
    report.push({
      server: side.name,
      store,
      durationS,
      warmupS,
      ping,
      load,
      rssStart: start,
      rssEnd: end,
      growthPerMin: growth,
      rss,
    });
  });
  const table = [
    `Soak: ${durationS} s, ${store}, warm-up ${warmupS} s (${new Date().toISOString()})`,
    '',
    '| server | slowest PONG | PONG p99 | longest loop delay after warm-up | RSS after warm-up → end | RSS growth, second half | lost core / streaming | requests timed out |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...notes,
  ].join('\n');
  writeFileSync(join(resultsDir, 'report.json'), JSON.stringify(report, null, 1));
  writeFileSync(join(resultsDir, 'report.md'), table + '\n');
  process.stdout.write(table + '\n');
  for (const r of report) {
    process.stdout.write(
      `${String(r.server)}: ping ${JSON.stringify(r.ping)}\n  load ${JSON.stringify(r.load)}\n`,
    );
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
