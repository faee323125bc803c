// Slow-consumer isolation: does one client that stops reading slow anybody else down?
//
// Per scenario, on a fresh server: slow subscribers (raw sockets that subscribe and
// then stop reading, so their TCP windows fill) on `sc.x`, `sc.>` or in a queue
// group; a publisher (a worker thread) pushing messages of one size to `sc.x` as
// fast as its socket takes them; and a probe client doing a round trip every 100 ms
// (PUB to its own subject and PING, then wait for its MSG and the PONG). Reported
// per server: the probe's round trips during the flood (p50/p99/max, and its idle
// p50 measured before), when each slow subscriber was cut off and with which
// /connz reason, the publisher's fate, and the server's peak RSS growth.
//
// The reference (nats-server from PATH, or $NATS_SERVER) and wirebus run each
// scenario one after the other, the order alternating, both with max_pending 10MB
// and the default write_deadline (10 s).
//
//   npm run build && node dist/bench/slow-consumer-isolation.js
//   ONLY="one-64k four-128" SECONDS=15 node dist/bench/slow-consumer-isolation.js

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { freePort } from './free-port.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NATS_SERVER = process.env.NATS_SERVER ?? 'nats-server';
/** Cap on one scenario's flood, in seconds (the reference's cut-off comes at 10 s). */
const SECONDS = Number(process.env.SECONDS ?? '14');
/** Bytes of payload the publisher tries to push per scenario. */
const TOTAL = Number(process.env.TOTAL ?? String(1024 * 1024 * 1024));
const PROBE_EVERY_MS = 100;

interface Scenario {
  readonly name: string;
  readonly size: number;
  /** One SUB line argument per slow subscriber: `subject [queue]`. */
  readonly subs: readonly string[];
}

const SCENARIOS: readonly Scenario[] = [
  { name: 'one-128', size: 128, subs: ['sc.x'] },
  { name: 'one-64k', size: 65536, subs: ['sc.x'] },
  { name: 'four-128', size: 128, subs: ['sc.x', 'sc.x', 'sc.x', 'sc.x'] },
  { name: 'four-64k', size: 65536, subs: ['sc.x', 'sc.x', 'sc.x', 'sc.x'] },
  { name: 'wild-128', size: 128, subs: ['sc.>'] },
  { name: 'wild-64k', size: 65536, subs: ['sc.>'] },
  { name: 'queue-128', size: 128, subs: ['sc.x q'] },
  { name: 'queue-64k', size: 65536, subs: ['sc.x q'] },
];

interface PublisherReport {
  bytes: number;
  seconds: number;
  closedByServer: boolean;
  errors: string;
}

// ---- the publisher (worker thread) ------------------------------------------------

async function publisher(
  port: number,
  size: number,
  total: number,
  seconds: number,
): Promise<void> {
  const sock = connect({ port, host: '127.0.0.1' });
  await new Promise<void>((r) => sock.once('connect', r));
  const report: PublisherReport = { bytes: 0, seconds: 0, closedByServer: false, errors: '' };
  // An object, so that the loops below see what the callbacks set.
  const st = { ended: false, stopped: false, inbound: '' };
  sock.on('data', (d: Buffer) => {
    st.inbound += d.toString('latin1');
    if (st.inbound.length > 4096) st.inbound = st.inbound.slice(-4096);
  });
  sock.on('close', () => {
    st.ended = true;
  });
  sock.on('error', () => {
    st.ended = true;
  });
  sock.write('CONNECT {"verbose":false,"pedantic":false,"name":"flood"}\r\n');
  const frame = Buffer.from(`PUB sc.x ${size}\r\n${'x'.repeat(size)}\r\n`, 'latin1');
  const perBatch = Math.max(1, Math.floor((256 * 1024) / frame.length));
  const batch = Buffer.concat(Array.from({ length: perBatch }, () => frame));
  const start = performance.now();
  const stopAt = start + seconds * 1000;
  parentPort!.on('message', () => {
    st.stopped = true;
  });
  while (!st.ended && !st.stopped && report.bytes < total && performance.now() < stopAt) {
    const ok = sock.write(batch);
    report.bytes += perBatch * size;
    if (!ok) {
      await new Promise<void>((r) => {
        const done = (): void => {
          clearTimeout(t);
          sock.off('drain', done);
          r();
        };
        const t = setTimeout(done, 200);
        sock.on('drain', done);
      });
    }
  }
  // The server has read everything once it answers a PING after it.
  if (!st.ended) {
    st.inbound = '';
    sock.write('PING\r\n');
    const end = performance.now() + seconds * 1000;
    const waiting = (): boolean => !st.ended && !st.stopped && !st.inbound.includes('PONG');
    while (waiting() && performance.now() < end) {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  report.seconds = (performance.now() - start) / 1000;
  report.closedByServer = st.ended;
  report.errors = (st.inbound.match(/-ERR[^\r]*/g) ?? []).join(' ');
  sock.destroy();
  parentPort!.postMessage(report);
}

if (!isMainThread) {
  const d = workerData as { port: number; size: number; total: number; seconds: number };
  void publisher(d.port, d.size, d.total, d.seconds);
}

// ---- servers ------------------------------------------------------------------------

interface Running {
  readonly label: string;
  readonly proc: ChildProcess;
  readonly port: number;
  readonly http: number;
}

async function startServer(label: string, conf: string): Promise<Running> {
  const port = await freePort();
  const http = await freePort();
  const args = ['-a', '127.0.0.1', '-p', String(port), '-m', String(http), '-c', conf];
  const proc =
    label === 'nats-server'
      ? spawn(NATS_SERVER, args, { stdio: 'ignore' })
      : spawn(process.execPath, [join(ROOT, 'bin/wirebus'), ...args], { stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    if (await answers(port)) return { label, proc, port, http };
    await sleep(50);
  }
  proc.kill('SIGKILL');
  throw new Error(`${label} did not start`);
}

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    let text = '';
    s.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('PONG')) {
        s.destroy();
        resolve(true);
      }
    });
    s.on('connect', () => s.write('CONNECT {}\r\nPING\r\n'));
    s.on('error', () => resolve(false));
    setTimeout(() => {
      s.destroy();
      resolve(false);
    }, 1000);
  });
}

async function stopServer(r: Running): Promise<void> {
  r.proc.kill('SIGTERM');
  const t = setTimeout(() => r.proc.kill('SIGKILL'), 5000);
  if (r.proc.exitCode === null) await new Promise((res) => r.proc.once('exit', res));
  clearTimeout(t);
}

function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

async function getJson(http: number, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${http}${path}`);
  return (await res.json()) as Record<string, unknown>;
}

// ---- clients --------------------------------------------------------------------------

/** A connected raw client whose inbound text can be awaited. */
class Raw {
  text = '';
  closed = false;
  private waiter: (() => void) | null = null;
  constructor(readonly sock: Socket) {
    sock.on('data', (d: Buffer) => {
      this.text += d.toString('latin1');
      this.waiter?.();
    });
    sock.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
    sock.on('error', () => undefined);
  }
  static async open(port: number): Promise<Raw> {
    const sock = connect({ port, host: '127.0.0.1' });
    await new Promise<void>((r) => sock.once('connect', r));
    sock.setNoDelay(true);
    return new Raw(sock);
  }
  async until(pred: (t: string) => boolean, ms: number): Promise<boolean> {
    const end = performance.now() + ms;
    while (!pred(this.text)) {
      if (this.closed || performance.now() > end) return false;
      await new Promise<void>((r) => {
        this.waiter = r;
        setTimeout(r, 50);
      });
      this.waiter = null;
    }
    return true;
  }
}

/** One round trip of the probe: PUB to its own subject and PING, until MSG and PONG. */
async function roundTrip(p: Raw, n: number): Promise<number> {
  p.text = '';
  const t0 = performance.now();
  p.sock.write(`PUB probe.x 2\r\nhi\r\nPING\r\n`);
  const ok = await p.until((t) => t.includes('MSG probe.x') && t.includes('PONG'), 60_000);
  if (!ok) throw new Error(`probe round trip ${n} failed`);
  return performance.now() - t0;
}

function pct(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

interface Outcome {
  server: string;
  scenario: string;
  idleP50: number;
  p50: number;
  p99: number;
  max: number;
  trips: number;
  cutoffs: string;
  publisher: string;
  rssGrowthMb: number;
}

async function runScenario(label: string, sc: Scenario, conf: string): Promise<Outcome> {
  const r = await startServer(label, conf);
  try {
    const slow: Raw[] = [];
    for (let i = 0; i < sc.subs.length; i++) {
      const s = await Raw.open(r.port);
      s.sock.write(
        `CONNECT {"verbose":false,"pedantic":false,"name":"slow-${i}"}\r\nSUB ${sc.subs[i]} 1\r\nPING\r\n`,
      );
      await s.until((t) => t.includes('PONG'), 5000);
      s.sock.pause();
      slow.push(s);
    }
    const probe = await Raw.open(r.port);
    probe.sock.write(
      'CONNECT {"verbose":false,"pedantic":false,"name":"probe"}\r\nSUB probe.x 1\r\nPING\r\n',
    );
    await probe.until((t) => t.includes('PONG'), 5000);
    const idle: number[] = [];
    for (let i = 0; i < 20; i++) {
      idle.push(await roundTrip(probe, i));
      await sleep(20);
    }
    idle.sort((a, b) => a - b);

    const rss0 = rssKb(r.proc.pid!);
    let rssPeak = rss0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssKb(r.proc.pid!));
    }, 50);
    const t0 = performance.now();
    const worker = new Worker(fileURLToPath(import.meta.url), {
      workerData: { port: r.port, size: sc.size, total: TOTAL, seconds: SECONDS },
    });
    const got: { report: PublisherReport | null } = { report: null };
    worker.on('message', (m: PublisherReport) => {
      got.report = m;
    });
    // Cut-offs, as /connz?state=closed records them, polled in the background.
    const cutoffs = new Map<string, string>();
    const poll = { on: true };
    const poller = (async () => {
      while (poll.on && cutoffs.size < slow.length) {
        try {
          const closed = await getJson(r.http, '/connz?state=closed');
          for (const c of (closed.connections as Record<string, unknown>[] | undefined) ?? []) {
            const name = typeof c.name === 'string' ? c.name : '';
            if (name.startsWith('slow-') && !cutoffs.has(name)) {
              const at = ((performance.now() - t0) / 1000).toFixed(1);
              cutoffs.set(name, `${String(c.reason)} @${at}s`);
            }
          }
        } catch {
          // The monitor may be slow to answer under the flood; try again.
        }
        await sleep(100);
      }
    })();
    const trips: number[] = [];
    const endBy = t0 + (SECONDS + 2) * 1000;
    while (performance.now() < endBy) {
      const tick = performance.now();
      const rt = await roundTrip(probe, trips.length);
      trips.push(rt);
      if (process.env.DEBUG !== undefined && rt > 5) {
        console.error(
          `${label} ${sc.name}: ${rt.toFixed(1)} ms at ${((tick - t0) / 1000).toFixed(2)} s`,
        );
      }
      if (got.report !== null && cutoffs.size === slow.length) break;
      const wait = PROBE_EVERY_MS - (performance.now() - tick);
      if (wait > 0) await sleep(wait);
    }
    worker.postMessage('stop');
    while (got.report === null) await sleep(20);
    poll.on = false;
    await poller;
    clearInterval(sampler);
    await worker.terminate();
    if (process.env.DEBUG !== undefined) {
      console.error(JSON.stringify(await getJson(r.http, '/connz?state=closed')).slice(0, 3000));
      console.error(JSON.stringify(await getJson(r.http, '/connz')).slice(0, 3000));
    }
    for (const s of slow) s.sock.destroy();
    probe.sock.destroy();
    trips.sort((a, b) => a - b);
    const pr: PublisherReport = got.report;
    const names = slow.map((_, i) => `slow-${i}`);
    return {
      server: label,
      scenario: sc.name,
      idleP50: pct(idle, 0.5),
      p50: pct(trips, 0.5),
      p99: pct(trips, 0.99),
      max: trips[trips.length - 1] ?? NaN,
      trips: trips.length,
      cutoffs: names.map((n) => cutoffs.get(n) ?? 'not cut off').join('; '),
      publisher:
        `${(pr.bytes / 1048576).toFixed(0)} MiB in ${pr.seconds.toFixed(1)} s` +
        (pr.closedByServer ? ', CLOSED' : '') +
        (pr.errors !== '' ? ` ${pr.errors}` : ''),
      rssGrowthMb: (rssPeak - rss0) / 1024,
    };
  } finally {
    await stopServer(r);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function main(): Promise<void> {
  const servers = (process.env.SERVERS ?? 'nats-server wirebus').split(/\s+/);
  const only = (process.env.ONLY ?? '').split(/\s+/).filter((s) => s !== '');
  const chosen = only.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => only.includes(s.name));
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-sc-'));
  const conf = join(dir, 'server.conf');
  writeFileSync(conf, 'max_pending: 10MB\n');
  const f = (v: number): string => v.toFixed(1);
  console.log(
    '| scenario | server | idle p50 ms | p50 ms | p99 ms | max ms | trips | cut-off (reason @ time since flood start) | publisher | RSS growth MB |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  let flip = false;
  for (const sc of chosen) {
    const order = (flip ? ['wirebus', 'nats-server'] : ['nats-server', 'wirebus']).filter((l) =>
      servers.includes(l),
    );
    flip = !flip;
    const rows: Outcome[] = [];
    for (const label of order) rows.push(await runScenario(label, sc, conf));
    rows.sort((a, b) => a.server.localeCompare(b.server));
    for (const o of rows) {
      console.log(
        `| ${o.scenario} | ${o.server} | ${f(o.idleP50)} | ${f(o.p50)} | ${f(o.p99)} | ${f(o.max)} | ${o.trips} | ${o.cutoffs} | ${o.publisher} | ${o.rssGrowthMb.toFixed(0)} |`,
      );
    }
  }
}

if (isMainThread) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
