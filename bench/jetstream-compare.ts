// JetStream side by side: nats-server -js and wirebus -js, each run as a process on a
// free loopback port, the same client (nats v2) driving both, scenarios interleaved.
// Not a test. Run after a build:
//
//   node dist/bench/jetstream-compare.js        (ONLY=pull for one scenario)
//
// Scenarios (memory streams): acked publish of 128 B and 1 KiB, async (a window of
// 500 outstanding) and sync (one at a time); pull-consume of what was published;
// KV put and get latency.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AckPolicy, connect, type NatsConnection } from 'nats';

const ROOT = resolve(import.meta.dirname, '..', '..');

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const a = srv.address();
  const port = typeof a === 'object' && a !== null ? a.port : 0;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function start(kind: 'ref' | 'wb'): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-jsbench-'));
  const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir];
  const child =
    kind === 'ref'
      ? spawn('nats-server', args, { stdio: 'ignore' })
      : spawn(process.execPath, [join(ROOT, 'bin', 'wirebus'), ...args], { stdio: 'ignore' });
  for (let i = 0; i < 50; i++) {
    try {
      const nc = await connect({ servers: `127.0.0.1:${port}` });
      await nc.close();
      return { port, child };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${kind} did not start`);
}

type Scenario = (nc: NatsConnection) => Promise<number>;

async function setupStream(nc: NatsConnection, name: string): Promise<void> {
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name, subjects: [`${name}.>`], storage: 'memory' as never });
}

function asyncPublish(size: number, n: number): Scenario {
  return async (nc) => {
    const name = `A${size}`;
    await setupStream(nc, name);
    const js = nc.jetstream();
    const data = new Uint8Array(size);
    const t0 = performance.now();
    for (let i = 0; i < n; i += 500) {
      const batch: Promise<unknown>[] = [];
      for (let k = 0; k < 500 && i + k < n; k++) batch.push(js.publish(`${name}.x`, data));
      await Promise.all(batch);
    }
    return n / ((performance.now() - t0) / 1000);
  };
}

function syncPublish(size: number, n: number): Scenario {
  return async (nc) => {
    const name = `S${size}`;
    await setupStream(nc, name);
    const js = nc.jetstream();
    const data = new Uint8Array(size);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await js.publish(`${name}.x`, data);
    return n / ((performance.now() - t0) / 1000);
  };
}

function pullConsume(n: number): Scenario {
  return async (nc) => {
    const name = 'PC';
    await setupStream(nc, name);
    const js = nc.jetstream();
    const data = new Uint8Array(128);
    for (let i = 0; i < n; i += 1000) {
      const batch: Promise<unknown>[] = [];
      for (let k = 0; k < 1000; k++) batch.push(js.publish(`${name}.x`, data));
      await Promise.all(batch);
    }
    const jsm = await nc.jetstreamManager();
    await jsm.consumers.add(name, { durable_name: 'c', ack_policy: AckPolicy.None });
    const c = await js.consumers.get(name, 'c');
    const t0 = performance.now();
    let got = 0;
    const it = await c.consume({ max_messages: 1000 });
    for await (const _m of it) {
      if (++got === n) break;
    }
    return n / ((performance.now() - t0) / 1000);
  };
}

function kvLatency(op: 'put' | 'get', n: number): Scenario {
  return async (nc) => {
    const kv = await nc.jetstream().views.kv(`kv${op}`);
    const v = new Uint8Array(64);
    await kv.put('k', v);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      if (op === 'put') await kv.put('k', v);
      else await kv.get('k');
    }
    return ((performance.now() - t0) * 1000) / n; // microseconds per op
  };
}

const SCENARIOS: [string, string, Scenario, 'higher' | 'lower'][] = [
  ['acked pub async 128B', 'msgs/s', asyncPublish(128, 50_000), 'higher'],
  ['acked pub async 1KiB', 'msgs/s', asyncPublish(1024, 30_000), 'higher'],
  ['acked pub sync 128B', 'msgs/s', syncPublish(128, 5_000), 'higher'],
  ['acked pub sync 1KiB', 'msgs/s', syncPublish(1024, 5_000), 'higher'],
  ['pull consume 128B', 'msgs/s', pullConsume(50_000), 'higher'],
  ['KV put', 'µs/op', kvLatency('put', 3_000), 'lower'],
  ['KV get', 'µs/op', kvLatency('get', 3_000), 'lower'],
];

async function runOn(kind: 'ref' | 'wb', scenario: Scenario): Promise<number> {
  const s = await start(kind);
  const nc = await connect({ servers: `127.0.0.1:${s.port}` });
  try {
    return await scenario(nc);
  } finally {
    await nc.close();
    s.child.kill('SIGKILL');
  }
}

/** ONLY=<text> runs the scenarios whose name holds it. */
const only = process.env.ONLY ?? '';
const rows: string[] = [];
for (const [name, unit, scenario, better] of SCENARIOS) {
  if (!name.includes(only)) continue;
  const ref = await runOn('ref', scenario);
  const wb = await runOn('wb', scenario);
  const ratio = wb / ref;
  const row = `| ${name} | ${unit} | ${better} | ${Math.round(ref).toLocaleString('en')} | ${Math.round(wb).toLocaleString('en')} | ${ratio.toFixed(2)} |`;
  rows.push(row);
  process.stdout.write(row + '\n');
}
