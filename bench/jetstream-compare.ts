// JetStream side by side: nats-server -js and wirebus -js, each run as a process on a
// free loopback port, the same client (nats v2) driving both, scenarios interleaved.
// Not a test. Run after a build:
//
//   WB_ROOT=/tmp/other-build SIDES=wb SCALE=10 node dist/bench/jetstream-compare.js
//   node dist/bench/jetstream-compare.js
//   ONLY=pull STORAGE=file ROUNDS=5 node dist/bench/jetstream-compare.js
//   WARMUP=20000 ONLY="KV get" node dist/bench/jetstream-compare.js   (steady state)
//   WARMUP=60000 ONLY="pub async" STORAGE=file node dist/bench/jetstream-compare.js
//   WB_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" ONLY=... node dist/bench/...
//   PLACE=same ONLY=KV ROUNDS=7 node dist/bench/jetstream-compare.js   (client and server on one core)
//
// Scenarios, on memory and on file streams: acked publish of 128 B and 1 KiB, async
// (plain publishes with a reply subject, a window of 1000 unacknowledged, one
// subscription counting the PubAcks: the client costs one PUB per message) and sync
// (js.publish, one at a time); pull-consume (ack none and explicit acks) and
// push-consume of what was published; KV put and get latency. Each round runs every
// scenario on both servers, on fresh processes, the first side alternating from round
// to round; the table gives the median figures and the median of the per-round ratios,
// each the reference's performance divided into wirebus's (above 1: wirebus does better),
// and the servers' own CPU time per operation (from /proc, steadier than rates on a
// shared machine; the reference may use both cores, wirebus mostly one), with wirebus's
// main thread's share (the rest is V8's helper threads: in a fresh process mostly
// TurboFan compiling the paths the scenario is the first to run), and the client's CPU
// per operation in this process (nats v2: for the KV rows, round trips one at a time,
// it spends more per operation than either server, and more in the first scenarios
// the process runs, before V8 optimised the client too), where the rest of the client's
// wall time went: waiting for a CPU (the machine's other work and the server's threads
// on its core) or idle (waiting for the server's bytes), and nats-server's CPU per
// operation in each round: in the round-trip rows it tells where the kernel put it
// (about 20-30 µs on the client's core, 50-70 on the other: see PLACE below).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AckPolicy, connect, createInbox, type NatsConnection } from 'nats';
import { connectWhenReady } from './connect-ready.js';

/** WB_ROOT=<checkout> runs another build's bin/wirebus as the wirebus side (before/after). */
const ROOT = process.env.WB_ROOT ?? resolve(import.meta.dirname, '..', '..');
const ROUNDS = Number(process.env.ROUNDS ?? '3');
/** ONLY=<text> runs the scenarios whose name holds it; STORAGE=memory|file one storage. */
const ONLY = process.env.ONLY ?? '';
const STORAGES = (process.env.STORAGE ?? 'memory,file').split(',') as Storage[];
const WB_NODE_ARGS = (process.env.WB_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
/** SCALE=10 runs ten times the messages of each scenario (for profiles long enough to read). */
const SCALE = Number(process.env.SCALE ?? '1');
/** SIDES=wb runs wirebus alone (a profile without the reference's runs in between). */
const SIDES = (process.env.SIDES ?? 'ref,wb').split(',') as Kind[];
/**
 * WARMUP=<ops> runs that many KV puts/gets (and API requests, sync and async acked publishes)
 * before the measured ones: a fresh wirebus spends its first thousands of requests in V8's
 * interpreter and compilers (issue 15: 2,000 cold KV gets cost ~85 µs of CPU each, warm ones
 * ~30, the reference's 25-30; the first 30,000 1 KiB file publishes ~7 µs, later ones ~2-2.7,
 * half of the cold cost on V8's background compiler threads).
 */
const WARMUP = Number(process.env.WARMUP ?? '0');
/**
 * CLIENT_WARMUP=0 skips the unmeasured run of each scenario before its first round. The
 * client (nats v2, in this process) is cold too the first time it runs a scenario's
 * calls (a KV put, a js.publish): its first 2,000 round trips cost it 150-300 µs of CPU
 * each instead of 50-80, and the side measured first in the first round paid for it
 * (the reference, which goes first in even rounds: its first-round KV figures were often
 * 40-80% slower than its others, and the first round's ratio the best of wirebus's).
 */
const CLIENT_WARMUP = process.env.CLIENT_WARMUP !== '0';

/**
 * PLACE=same runs this process (the client) and the servers on CPU 0, PLACE=apart the client
 * on CPU 0 and the servers on CPU 1 (taskset); unset, the kernel places them. A round trip
 * (KV put and get, sync publish) costs nats-server very different amounts in the two
 * placements, and the kernel picks one per server process: on one core with its client,
 * nats-server 2.9.10 answered a file KV put in 20 µs of CPU and 67 µs of wall time; on the
 * other core 60-66 µs of CPU and 150 µs (its threads spin and wake each other across
 * cores), and the client spent 30-40 µs more per operation as well. Unpinned, wirebus's
 * cost does not depend on it. So an unpinned round-trip row mixes two populations of the
 * reference's rounds (bench/RESULTS.md, "JetStream round trips: the per-round spread").
 * Pin only on a quiet machine: a pinned process cannot move away from a busy core.
 */
const PLACE = process.env.PLACE ?? '';
const SERVER_CPU = PLACE === 'same' ? '0' : PLACE === 'apart' ? '1' : '';
if (SERVER_CPU !== '') spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)]);

/** Spawns a server, on SERVER_CPU when set (taskset execs it: the pid is the server's). */
function launch(cmd: string, args: string[]): ChildProcess {
  return SERVER_CPU === ''
    ? spawn(cmd, args, { stdio: 'ignore' })
    : spawn('taskset', ['-c', SERVER_CPU, cmd, ...args], { stdio: 'ignore' });
}

type Storage = 'memory' | 'file';
type Kind = 'ref' | 'wb';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const a = srv.address();
  const port = typeof a === 'object' && a !== null ? a.port : 0;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

interface Running {
  port: number;
  child: ChildProcess;
  dir: string;
}

async function start(kind: Kind): Promise<Running> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-jsbench-'));
  const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir];
  const child =
    kind === 'ref'
      ? launch('nats-server', args)
      : launch(process.execPath, [...WB_NODE_ARGS, join(ROOT, 'bin', 'wirebus'), ...args]);
  await (await connectWhenReady(port, kind)).close();
  return { port, child, dir };
}

/** SIGTERM (so that --cpu-prof writes its profile), SIGKILL if it lingers. */
async function stop(s: Running): Promise<void> {
  const exited = new Promise<void>((r) => s.child.once('exit', () => r()));
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
  rmSync(s.dir, { recursive: true, force: true });
}

/**
 * The server's CPU time over the measured part of a scenario (from /proc): on a shared
 * machine it moves far less than wall-clock rates do. Summed over the process's threads
 * from their schedstat (nanoseconds: a KV scenario's 2,000 operations take 100-200 ms of
 * CPU, which /proc/<pid>/stat's 10 ms ticks gave to within 5-10%); a thread that exits
 * during the measurement would drop out of the sum (neither server's do).
 */
class CpuProbe {
  private at = 0;
  private mainAt = 0;
  private clientAt: NodeJS.CpuUsage = { user: 0, system: 0 };
  /** Server CPU µs per operation over the measured part. */
  perOp = 0;
  /**
   * Of it, the process's main thread's (wirebus's event loop; the rest is V8's helper
   * threads: TurboFan compiling, GC, and libuv's pool). Meaningless for the reference.
   */
  mainPerOp = 0;
  /** This process's CPU per operation (the client, nats v2, driving the server). */
  clientPerOp = 0;
  /**
   * Where the rest of the client's wall time per operation went: waiting for a CPU while
   * runnable (its main thread's run-queue delay from schedstat: the server's threads and
   * everything else on the machine taking the cores) and idle in the event loop (waiting
   * for the server's bytes). Run + wait + idle is about the wall time per operation.
   */
  clientWaitPerOp = 0;
  clientIdlePerOp = 0;
  private clientWaitAt = 0;
  private eluAt = performance.eventLoopUtilization();
  constructor(private readonly pid: number) {}
  private read(): number {
    let ns = 0;
    for (const task of readdirSync(`/proc/${this.pid}/task`)) {
      try {
        ns += Number(
          readFileSync(`/proc/${this.pid}/task/${task}/schedstat`, 'latin1').split(' ')[0],
        );
      } catch {
        // The thread exited between the listing and the read.
      }
    }
    return ns / 1e9;
  }
  /** The main thread's time on a CPU in seconds (schedstat: nanoseconds, not ticks). */
  private readMain(): number {
    const ns = readFileSync(`/proc/${this.pid}/task/${this.pid}/schedstat`, 'latin1').split(' ')[0];
    return Number(ns) / 1e9;
  }
  /** This process's main thread's run-queue delay in seconds (schedstat's second field). */
  private static clientWait(): number {
    const f = readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'latin1');
    return Number(f.split(' ')[1]) / 1e9;
  }
  start(): void {
    this.at = this.read();
    this.mainAt = this.readMain();
    this.clientAt = process.cpuUsage();
    this.clientWaitAt = CpuProbe.clientWait();
    this.eluAt = performance.eventLoopUtilization();
  }
  stop(ops: number): void {
    const client = process.cpuUsage(this.clientAt);
    const elu = performance.eventLoopUtilization(this.eluAt);
    this.perOp = ((this.read() - this.at) * 1e6) / ops;
    this.mainPerOp = ((this.readMain() - this.mainAt) * 1e6) / ops;
    this.clientPerOp = (client.user + client.system) / ops;
    this.clientWaitPerOp = ((CpuProbe.clientWait() - this.clientWaitAt) * 1e6) / ops;
    this.clientIdlePerOp = (elu.idle * 1000) / ops;
  }
}

type Scenario = (nc: NatsConnection, storage: Storage, cpu: CpuProbe) => Promise<number>;

async function setupStream(nc: NatsConnection, name: string, storage: Storage): Promise<void> {
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name, subjects: [`${name}.>`], storage: storage as never });
}

/** Publishes n messages with a reply subject, `window` unacknowledged at most. */
async function publishAcked(
  nc: NatsConnection,
  subject: string,
  data: Uint8Array,
  n: number,
  window: number,
): Promise<void> {
  const inbox = createInbox();
  let acked = 0;
  let sent = 0;
  let done!: () => void;
  let failed!: (e: Error) => void;
  const finished = new Promise<void>((res, rej) => {
    done = res;
    failed = rej;
  });
  const pump = (): void => {
    while (sent < n && sent - acked < window) {
      nc.publish(subject, data, { reply: inbox });
      sent++;
    }
  };
  nc.subscribe(inbox, {
    callback: (err, m) => {
      if (err !== null || m.data.length === 0 || m.data[2] !== 0x73 /* {"stream" */) {
        failed(new Error(`bad PubAck: ${err?.message ?? new TextDecoder().decode(m.data)}`));
        return;
      }
      if (++acked === n) done();
      else if (sent - acked <= window / 2) pump();
    },
  });
  pump();
  await finished;
}

function asyncPublish(size: number, n: number): Scenario {
  return async (nc, storage, cpu) => {
    const name = `A${size}`;
    await setupStream(nc, name, storage);
    const data = new Uint8Array(size);
    if (WARMUP > 0) await publishAcked(nc, `${name}.x`, data, WARMUP, 1000);
    cpu.start();
    const t0 = performance.now();
    await publishAcked(nc, `${name}.x`, data, n, 1000);
    cpu.stop(n);
    return n / ((performance.now() - t0) / 1000);
  };
}

function syncPublish(size: number, n: number): Scenario {
  return async (nc, storage, cpu) => {
    const name = `S${size}`;
    await setupStream(nc, name, storage);
    const js = nc.jetstream();
    const data = new Uint8Array(size);
    for (let i = 0; i < WARMUP; i++) await js.publish(`${name}.x`, data);
    cpu.start();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await js.publish(`${name}.x`, data);
    cpu.stop(n);
    return n / ((performance.now() - t0) / 1000);
  };
}

async function filledStream(nc: NatsConnection, storage: Storage, n: number): Promise<string> {
  const name = 'PC';
  await setupStream(nc, name, storage);
  await publishAcked(nc, `${name}.x`, new Uint8Array(128), n, 1000);
  return name;
}

function pullConsume(n: number, ack: AckPolicy): Scenario {
  return async (nc, storage, cpu) => {
    const name = await filledStream(nc, storage, n);
    const jsm = await nc.jetstreamManager();
    await jsm.consumers.add(name, { durable_name: 'c', ack_policy: ack });
    const c = await nc.jetstream().consumers.get(name, 'c');
    cpu.start();
    const t0 = performance.now();
    let got = 0;
    const it = await c.consume({ max_messages: 1000 });
    for await (const m of it) {
      if (ack !== AckPolicy.None) m.ack();
      if (++got === n) break;
    }
    if (ack !== AckPolicy.None) await nc.flush();
    cpu.stop(n);
    return n / ((performance.now() - t0) / 1000);
  };
}

function pushConsume(n: number): Scenario {
  return async (nc, storage, cpu) => {
    const name = await filledStream(nc, storage, n);
    const deliver = createInbox();
    let got = 0;
    let done!: () => void;
    const finished = new Promise<void>((res) => (done = res));
    nc.subscribe(deliver, {
      callback: () => {
        if (++got === n) done();
      },
    });
    await nc.flush();
    const jsm = await nc.jetstreamManager();
    cpu.start();
    const t0 = performance.now();
    await jsm.consumers.add(name, {
      durable_name: 'p',
      // A push consumer is what this measures (nats v2 marks it legacy, the server does not).
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      deliver_subject: deliver,
      ack_policy: AckPolicy.None,
    });
    await finished;
    cpu.stop(n);
    return n / ((performance.now() - t0) / 1000);
  };
}

function kvLatency(op: 'put' | 'get', n: number): Scenario {
  return async (nc, storage, cpu) => {
    const kv = await nc.jetstream().views.kv(`kv${op}`, { storage: storage as never });
    const v = new Uint8Array(64);
    await kv.put('k', v);
    for (let i = 0; i < WARMUP; i++) {
      if (op === 'put') await kv.put('k', v);
      else await kv.get('k');
    }
    cpu.start();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      if (op === 'put') await kv.put('k', v);
      else await kv.get('k');
    }
    cpu.stop(n);
    return ((performance.now() - t0) * 1000) / n; // microseconds per op
  };
}

/**
 * The bare request path the KV get rides on, without a store: `$JS.API.INFO` round trips
 * (a small JSON the server builds), the baseline a KV get's cost is read against.
 */
function apiRequestLatency(n: number): Scenario {
  return async (nc, _storage, cpu) => {
    for (let i = 0; i <= WARMUP; i++) await nc.request('$JS.API.INFO');
    cpu.start();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await nc.request('$JS.API.INFO');
    cpu.stop(n);
    return ((performance.now() - t0) * 1000) / n;
  };
}

const SCENARIOS: [string, string, Scenario, 'higher' | 'lower'][] = [
  ['acked pub async 128B', 'msgs/s', asyncPublish(128, 50_000 * SCALE), 'higher'],
  ['acked pub async 1KiB', 'msgs/s', asyncPublish(1024, 30_000 * SCALE), 'higher'],
  ['acked pub sync 128B', 'msgs/s', syncPublish(128, 3_000 * SCALE), 'higher'],
  ['acked pub sync 1KiB', 'msgs/s', syncPublish(1024, 3_000 * SCALE), 'higher'],
  ['pull consume 128B (ack none)', 'msgs/s', pullConsume(50_000 * SCALE, AckPolicy.None), 'higher'],
  [
    'pull consume 128B (ack explicit)',
    'msgs/s',
    pullConsume(30_000 * SCALE, AckPolicy.Explicit),
    'higher',
  ],
  ['push consume 128B (ack none)', 'msgs/s', pushConsume(50_000 * SCALE), 'higher'],
  ['KV put', 'µs/op', kvLatency('put', 2_000 * SCALE), 'lower'],
  ['KV get', 'µs/op', kvLatency('get', 2_000 * SCALE), 'lower'],
  ['API INFO request (no store)', 'µs/op', apiRequestLatency(2_000 * SCALE), 'lower'],
];

interface Outcome {
  figure: number;
  cpuPerOp: number;
  mainPerOp: number;
  clientPerOp: number;
  clientWaitPerOp: number;
  clientIdlePerOp: number;
}

async function runOn(kind: Kind, scenario: Scenario, storage: Storage): Promise<Outcome> {
  if (!SIDES.includes(kind))
    return {
      figure: NaN,
      cpuPerOp: NaN,
      mainPerOp: NaN,
      clientPerOp: NaN,
      clientWaitPerOp: NaN,
      clientIdlePerOp: NaN,
    };
  const s = await start(kind);
  const nc = await connect({ servers: `127.0.0.1:${s.port}` });
  const cpu = new CpuProbe(s.child.pid!);
  try {
    const figure = await scenario(nc, storage, cpu);
    return {
      figure,
      cpuPerOp: cpu.perOp,
      mainPerOp: cpu.mainPerOp,
      clientPerOp: cpu.clientPerOp,
      clientWaitPerOp: cpu.clientWaitPerOp,
      clientIdlePerOp: cpu.clientIdlePerOp,
    };
  } finally {
    await nc.close();
    await stop(s);
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const fmt = (x: number): string => Math.round(x).toLocaleString('en');
const load0 = loadavg()[0]!;
process.stdout.write(
  `| storage | scenario | figure | better | nats-server | wirebus | wirebus/reference (median of ${ROUNDS}, >1 better) | per round | server CPU µs/op, ref / wb | CPU ratio ref/wb | wb main thread µs/op | client CPU µs/op, ref / wb runs | client waiting for a CPU / idle µs/op, ref runs; wb runs | nats-server CPU µs/op per round |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n`,
);
for (const storage of STORAGES) {
  for (const [name, unit, scenario, better] of SCENARIOS) {
    if (!name.includes(ONLY)) continue;
    const refs: Outcome[] = [];
    const wbs: Outcome[] = [];
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    // On a server of its own, not counted: only the client's warm-up is wanted.
    if (CLIENT_WARMUP) await runOn(SIDES[0]!, scenario, storage);
    for (let round = 0; round < ROUNDS; round++) {
      let ref: Outcome;
      let wb: Outcome;
      if (round % 2 === 0) {
        ref = await runOn('ref', scenario, storage);
        wb = await runOn('wb', scenario, storage);
      } else {
        wb = await runOn('wb', scenario, storage);
        ref = await runOn('ref', scenario, storage);
      }
      refs.push(ref);
      wbs.push(wb);
      // Above 1 means wirebus does better: more messages a second, or fewer µs an op.
      ratios.push(better === 'higher' ? wb.figure / ref.figure : ref.figure / wb.figure);
      cpuRatios.push(ref.cpuPerOp / Math.max(wb.cpuPerOp, 0.01));
    }
    const m = (xs: Outcome[], f: (o: Outcome) => number): number => median(xs.map(f));
    const fig = (o: Outcome): number => o.figure;
    const cpu = (o: Outcome): number => o.cpuPerOp;
    const mainCpu = (o: Outcome): number => o.mainPerOp;
    const clientCpu = (o: Outcome): number => o.clientPerOp;
    const waits = (xs: Outcome[]): string =>
      `${m(xs, (o) => o.clientWaitPerOp).toFixed(2)} / ${m(xs, (o) => o.clientIdlePerOp).toFixed(2)}`;
    const row = `| ${storage} | ${name} | ${unit} | ${better} | ${fmt(m(refs, fig))} | ${fmt(m(wbs, fig))} | ${median(ratios).toFixed(2)} | ${ratios.map((r) => r.toFixed(2)).join(' ')} | ${m(refs, cpu).toFixed(2)} / ${m(wbs, cpu).toFixed(2)} | ${median(cpuRatios).toFixed(2)} | ${m(wbs, mainCpu).toFixed(2)} | ${m(refs, clientCpu).toFixed(2)} / ${m(wbs, clientCpu).toFixed(2)} | ${waits(refs)}; ${waits(wbs)} | ${refs.map((o) => o.cpuPerOp.toFixed(1)).join(' ')} |`;
    process.stdout.write(row + '\n');
  }
}
process.stdout.write(
  `\nload average ${load0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end\n`,
);
