// Route throughput: a publisher on server A, a subscriber on server B, A and B
// joined by a route. Two wirebus processes and two nats-server processes are
// measured side by side, each round on both pairs (the order alternating), and the
// table gives wirebus as a ratio of the reference.
//
// The publisher is the C load generator of ../shared/bench (`natsbench pub`, which
// takes one server): copy that folder to /tmp and run its ./build.sh, then point
// NATSBENCH at out/natsbench (default /tmp/wirebus-bench/out/natsbench). The
// subscriber is here: a raw socket on B that counts MSG frames without parsing
// payloads. Throughput is counted at the subscriber, first to last message.
//
//   npm run build && node dist/bench/route-throughput.js
//   N=2000000 SIZE=128 ROUNDS=3 node dist/bench/route-throughput.js

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { formatRate } from './timing.js';
import { freePort } from './free-port.js';

const N = Number(process.env.N ?? '2000000');
const SIZE = Number(process.env.SIZE ?? '128');
const ROUNDS = Number(process.env.ROUNDS ?? '3');
const NATSBENCH = process.env.NATSBENCH ?? '/tmp/wirebus-bench/out/natsbench';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** A run that receives nothing for this long is over (and reported short). */
const STALL_MS = 5000;

interface Pair {
  readonly label: string;
  readonly portA: number;
  readonly portB: number;
  stop(): Promise<void>;
}

/** Starts A (the seed) and B (routes to A), as wirebus or as nats-server. */
async function startPair(kind: 'wirebus' | 'nats-server'): Promise<Pair> {
  const [portA, portB, clusterA, clusterB] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const args = (port: number, cport: number, routes: string[]): string[] => [
    '-a',
    '127.0.0.1',
    '-p',
    String(port),
    '--cluster',
    `nats://127.0.0.1:${cport}`,
    '--cluster_name',
    'bench',
    ...(routes.length > 0 ? ['--routes', routes.join(',')] : []),
  ];
  const launch = (a: string[]): ChildProcess =>
    kind === 'wirebus'
      ? spawn(process.execPath, [`${ROOT}bin/wirebus`, ...a], { stdio: 'ignore' })
      : spawn('nats-server', a, { stdio: 'ignore' });
  const procs = [
    launch(args(portA, clusterA, [])),
    launch(args(portB, clusterB, [`nats-route://127.0.0.1:${clusterA}`])),
  ];
  await Promise.all([waitListening(portA), waitListening(portB)]);
  return {
    label: kind,
    portA,
    portB,
    stop: async () => {
      await Promise.all(
        procs.map(
          (p) =>
            new Promise<void>((resolve) => {
              if (p.exitCode !== null) {
                resolve();
                return;
              }
              p.once('exit', () => resolve());
              p.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

async function waitListening(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ port, host: '127.0.0.1' }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A subscriber that counts `MSG bench.nosub` frames (sid 1) and `MSG bench.probe`
 * frames (sid 2), skipping payloads by their size, and answers server PINGs.
 */
class Counter {
  count = 0;
  probes = 0;
  first = 0;
  last = 0;
  private rest: Buffer | null = null;
  /** Payload bytes (and CRLF) still to skip from the previous read. */
  private skip = 0;

  constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.read(chunk);
    });
  }

  private read(chunk: Buffer): void {
    let buf = chunk;
    if (this.rest !== null) {
      buf = Buffer.concat([this.rest, chunk]);
      this.rest = null;
    }
    let i = 0;
    if (this.skip > 0) {
      const n = Math.min(this.skip, buf.length);
      this.skip -= n;
      i = n;
    }
    const len = buf.length;
    while (i < len) {
      const nl = buf.indexOf(10, i);
      if (nl < 0) {
        this.rest = buf.subarray(i);
        return;
      }
      if (buf[i] === 0x4d /* M */) {
        // MSG <subject> <sid> <size>\r\n: the size is the last field.
        let s = nl - 1;
        if (buf[s] === 13) s--;
        let size = 0;
        let mul = 1;
        while (buf[s] !== 32) {
          size += (buf[s]! - 48) * mul;
          mul *= 10;
          s--;
        }
        if (buf[i + 10] === 0x70 /* p: bench.probe */) this.probes++;
        else {
          if (this.count === 0) this.first = performance.now();
          this.count++;
          this.last = performance.now();
        }
        const end = nl + 1 + size + 2;
        if (end > len) {
          this.skip = end - len;
          return;
        }
        i = end;
      } else {
        if (buf[i] === 0x50 /* P */ && buf[i + 1] === 0x49) this.socket.write('PONG\r\n');
        i = nl + 1;
      }
    }
  }
}

async function open(port: number): Promise<Socket> {
  const s = connect({ port, host: '127.0.0.1' });
  await new Promise<void>((resolve, reject) => {
    s.once('connect', resolve);
    s.once('error', reject);
  });
  s.setNoDelay(true);
  return s;
}

/** One run: returns messages per second at the subscriber, and how many arrived. */
async function runOnce(pair: Pair): Promise<{ rate: number; received: number }> {
  const sub = await open(pair.portB);
  const counter = new Counter(sub);
  // The bench subscription first: once a probe crosses, A knows of both.
  sub.write(
    'CONNECT {"verbose":false,"pedantic":false}\r\nSUB bench.nosub 1\r\nSUB bench.probe 2\r\nPING\r\n',
  );
  const prober = await open(pair.portA);
  prober.on('data', () => undefined);
  prober.write('CONNECT {"verbose":false,"pedantic":false}\r\n');
  const probeDeadline = Date.now() + 10_000;
  while (counter.probes === 0) {
    if (Date.now() > probeDeadline) throw new Error(`${pair.label}: no route interest`);
    prober.write('PUB bench.probe 1\r\nx\r\n');
    await new Promise((r) => setTimeout(r, 20));
  }
  prober.destroy();
  const pub = spawn(
    NATSBENCH,
    ['pub', '-s', `127.0.0.1:${pair.portA}`, '-n', String(N), '-z', String(SIZE)],
    {
      stdio: 'ignore',
    },
  );
  let lastCount = -1;
  let lastProgress = Date.now();
  while (counter.count < N) {
    if (counter.count !== lastCount) {
      lastCount = counter.count;
      lastProgress = Date.now();
    } else if (Date.now() - lastProgress > STALL_MS) {
      break;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise<void>((resolve) => {
    if (pub.exitCode !== null) resolve();
    else pub.once('exit', () => resolve());
  });
  sub.destroy();
  const secs = (counter.last - counter.first) / 1000;
  return { rate: secs > 0 ? (counter.count - 1) / secs : 0, received: counter.count };
}

async function main(): Promise<void> {
  if (!existsSync(NATSBENCH)) {
    process.stderr.write(
      `natsbench not found at ${NATSBENCH}: cp -r ../shared/bench /tmp/wirebus-bench && /tmp/wirebus-bench/build.sh (or set NATSBENCH)\n`,
    );
    process.exit(2);
  }
  const kinds = ['wirebus', 'nats-server'] as const;
  const results: Record<string, number[]> = { wirebus: [], 'nats-server': [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? kinds : [...kinds].reverse();
    for (const kind of order) {
      const pair = await startPair(kind);
      try {
        const r = await runOnce(pair);
        const note = r.received < N ? ` (only ${r.received} of ${N} arrived)` : '';
        process.stdout.write(`round ${round + 1} ${kind}: ${formatRate(r.rate)} msgs/s${note}\n`);
        results[kind]!.push(r.rate);
      } finally {
        await pair.stop();
      }
    }
  }
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0 ? 0 : s[Math.floor(s.length / 2)]!;
  };
  const w = median(results.wirebus!);
  const n = median(results['nats-server']!);
  process.stdout.write(
    `\nroute A->B, ${SIZE}-byte payloads, ${N} messages, median of ${ROUNDS}\n` +
      `| server | msgs/s |\n|---|---|\n` +
      `| wirebus | ${formatRate(w)} |\n| nats-server | ${formatRate(n)} |\n` +
      `| ratio | ${n > 0 ? (w / n).toFixed(2) : 'n/a'} |\n`,
  );
  process.exit(0);
}

void main();
