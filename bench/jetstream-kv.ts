// KV put and get, one at a time through nats v2's KV view, on fresh servers: nats-server
// -js and any number of wirebus builds, interleaved round by round. For each side the
// median wall time per operation and the server's CPU per operation from its threads'
// schedstat (nanoseconds), split into wirebus's main thread and the rest (V8's helper
// threads: on a fresh server mostly TurboFan compiling the request path). Not a test.
//
//   npm run build && node dist/bench/jetstream-kv.js
//   WB_ROOTS=/work/main,. ROUNDS=7 node dist/bench/jetstream-kv.js      (A/B of builds)
//   BATCHES=16 ONLY=get STORAGE=memory node dist/bench/jetstream-kv.js  (warm-up curve)
//
// BATCHES=<n> prints, for one fresh server of each side, n batches of BATCH (250)
// operations: how a fresh process's cost per operation falls as V8 compiles the path,
// and the client's own CPU per operation beside it.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type KV, type NatsConnection } from 'nats';
import { connectWhenReady } from './connect-ready.js';
import { freePort } from '../test/helpers/process.js';

const HERE = resolve(import.meta.dirname, '..', '..');
/** 'ref' is nats-server; anything else the root of a built wirebus checkout. */
const SIDES = ['ref', ...(process.env.WB_ROOTS ?? HERE).split(',').map((r) => resolve(r))];
const ROUNDS = Number(process.env.ROUNDS ?? '5');
const N = Number(process.env.N ?? '2000');
const BATCHES = Number(process.env.BATCHES ?? '0');
const BATCH = Number(process.env.BATCH ?? '250');
const ONLY = process.env.ONLY ?? '';
const STORAGES = (process.env.STORAGE ?? 'memory,file').split(',');

interface Cpu {
  main: number;
  all: number;
}

/** CPU seconds of a process's threads (schedstat), and of its main thread. */
function threadCpu(pid: number): Cpu {
  let all = 0;
  let main = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ns = Number(
        readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'latin1').split(' ')[0],
      );
      all += ns / 1e9;
      if (task === String(pid)) main = ns / 1e9;
    } catch {
      // The thread exited between the listing and the read.
    }
  }
  return { main, all };
}

interface Figures {
  wallUs: number;
  mainUs: number;
  allUs: number;
  clientUs: number;
}

interface Running {
  nc: NatsConnection;
  kv: KV;
  pid: number;
  stop: () => Promise<void>;
}

async function start(side: string, op: string, storage: string): Promise<Running> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-kvbench-'));
  const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir];
  const child =
    side === 'ref'
      ? spawn('nats-server', args, { stdio: 'ignore' })
      : spawn(process.execPath, [join(side, 'bin', 'wirebus'), ...args], { stdio: 'ignore' });
  const nc = await connectWhenReady(port, side);
  const kv = await nc.jetstream().views.kv(`kv${op}`, { storage: storage as never });
  await kv.put('k', VALUE);
  const stop = async (): Promise<void> => {
    await nc.close();
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  return { nc, kv, pid: child.pid!, stop };
}

const VALUE = new Uint8Array(64);

async function measure(r: Running, op: string, n: number): Promise<Figures> {
  const c0 = threadCpu(r.pid);
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    if (op === 'put') await r.kv.put('k', VALUE);
    else await r.kv.get('k');
  }
  const wall = performance.now() - t0;
  const client = process.cpuUsage(client0);
  const c1 = threadCpu(r.pid);
  return {
    wallUs: (wall * 1000) / n,
    mainUs: ((c1.main - c0.main) * 1e6) / n,
    allUs: ((c1.all - c0.all) * 1e6) / n,
    clientUs: (client.user + client.system) / n,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 === 1 ? s[k]! : (s[k - 1]! + s[k]!) / 2;
}

const name = (side: string): string => (side === 'ref' ? 'nats-server' : side);
const f1 = (x: number): string => x.toFixed(1);

process.stdout.write(`load average ${loadavg()[0]!.toFixed(1)}\n`);
for (const storage of STORAGES) {
  for (const op of ['put', 'get']) {
    if (!op.includes(ONLY)) continue;
    if (BATCHES > 0) {
      for (const side of SIDES) {
        process.stdout.write(
          `\n${storage} KV ${op}, ${name(side)}: batches of ${BATCH}\n| batch | wall µs/op | server CPU µs/op | of it main thread | client CPU µs/op |\n|---|---|---|---|---|\n`,
        );
        const r = await start(side, op, storage);
        for (let b = 0; b < BATCHES; b++) {
          const f = await measure(r, op, BATCH);
          const main = side === 'ref' ? '' : f1(f.mainUs);
          process.stdout.write(
            `| ${b + 1} | ${f1(f.wallUs)} | ${f1(f.allUs)} | ${main} | ${f1(f.clientUs)} |\n`,
          );
        }
        await r.stop();
      }
      continue;
    }
    const results = new Map<string, Figures[]>(SIDES.map((s) => [s, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? SIDES : [...SIDES].reverse();
      for (const side of order) {
        const r = await start(side, op, storage);
        try {
          results.get(side)!.push(await measure(r, op, N));
        } finally {
          await r.stop();
        }
      }
    }
    process.stdout.write(
      `\n${storage} KV ${op}, ${N} operations on a fresh server, median of ${ROUNDS}\n| side | wall µs/op (per round) | server CPU µs/op | main thread | client CPU µs/op |\n|---|---|---|---|---|\n`,
    );
    for (const side of SIDES) {
      const xs = results.get(side)!;
      const m = (f: (x: Figures) => number): string => f1(median(xs.map(f)));
      const rounds = xs.map((x) => x.wallUs.toFixed(0)).join(' ');
      const main = side === 'ref' ? '' : m((x) => x.mainUs);
      process.stdout.write(
        `| ${name(side)} | ${m((x) => x.wallUs)} (${rounds}) | ${m((x) => x.allUs)} | ${main} | ${m((x) => x.clientUs)} |\n`,
      );
    }
  }
}
process.stdout.write(`\nload average ${loadavg()[0]!.toFixed(1)} at the end\n`);
