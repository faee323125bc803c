// A fresh wirebus process answering KV gets on a FILE stream for DURATION ms (long enough
// to cross the first keep-alive PING, ~2 s after the client connects): the server's CPU
// per get, and, in a run traced with --trace-opt --trace-deopt, how many functions V8's
// optimizing compiler compiled and how many compiled functions it threw away. A field
// whose representation changes late (a small integer then a Date.now() double) retires
// its object's hidden class and deoptimizes every function compiled for it, which then
// compile again (issue 15: the Client's ping times, StoredMsg.ts). Not a test. With
// WB_BASE=<another checkout's root, built> it runs that build too, interleaved:
//
//   npm run build && WB_BASE=/tmp/base ROUNDS=4 node dist/bench/jetstream-warmup.js
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connectWhenReady } from './connect-ready.js';
import { freePort } from '../test/helpers/process.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const BASE = process.env.WB_BASE ?? '';
const ROUNDS = Number(process.env.ROUNDS ?? '3');
const DURATION = Number(process.env.DURATION ?? '4000');

interface Outcome {
  gets: number;
  cpuUsPerGet: number;
  compiles: number;
  deopts: number;
}

function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // clock ticks of 10 ms
}

async function run(root: string, traced: boolean): Promise<Outcome> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-warmup-'));
  const logPath = join(dir, 'trace.log');
  const log = openSync(logPath, 'w');
  const flags = traced ? ['--trace-opt', '--trace-deopt'] : [];
  const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'store')];
  const child = spawn(process.execPath, [...flags, join(root, 'bin', 'wirebus'), ...args], {
    stdio: ['ignore', log, log],
  });
  const nc = await connectWhenReady(port, `${root}: the server`);
  const kv = await nc.jetstream().views.kv('warm', { storage: 'file' as never });
  await kv.put('k', new Uint8Array(64));
  const c0 = cpuMs(child.pid!);
  const t0 = performance.now();
  let gets = 0;
  while (performance.now() - t0 < DURATION) {
    await kv.get('k');
    gets++;
  }
  const cpu = cpuMs(child.pid!) - c0;
  await nc.close();
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  closeSync(log);
  const text = readFileSync(logPath, 'latin1');
  rmSync(dir, { recursive: true, force: true });
  return {
    gets,
    cpuUsPerGet: (cpu * 1000) / gets,
    compiles: text.split('completed compiling').length - 1,
    deopts: text.split('deoptimizing').length - 1,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const sides: [string, string][] =
  BASE === ''
    ? [['this', ROOT]]
    : [
        ['base', BASE],
        ['this', ROOT],
      ];
const cpu = new Map<string, number[]>(sides.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? sides : [...sides].reverse();
  for (const [name, root] of order) cpu.get(name)!.push((await run(root, false)).cpuUsPerGet);
}
process.stdout.write(
  `| build | TurboFan compiles | deopts | server CPU µs/get (median of ${ROUNDS}, ${DURATION} ms) |\n|---|---|---|---|\n`,
);
for (const [name, root] of sides) {
  const t = await run(root, true);
  const c = cpu.get(name)!;
  process.stdout.write(
    `| ${name} | ${t.compiles} | ${t.deopts} | ${median(c).toFixed(1)} (${c.map((x) => x.toFixed(1)).join(' ')}) |\n`,
  );
}
