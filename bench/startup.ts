// `npm run bench:startup`: how fast a spawned server is ready and how small it idles,
// for wirebus, a bare `node` listening on a port (the floor for any Node server) and
// nats-server when it is installed, interleaved in one run so the machine's load hits
// all of them alike. Then the embedded figures: `import('wirebus')` in a fresh process
// and 1,000 startServer/close cycles in one process.
//
// ROUNDS sets the sequential spawns per target (default 15), BURSTS the rounds of
// twelve spawned at once (default 5).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const rounds = Number(process.env.ROUNDS ?? '15');
const bursts = Number(process.env.BURSTS ?? '5');
const burstSize = 12;
const idleMs = 1000;

// The floor: what any Node server pays to listen on a port (and on an HTTP port when
// monitoring is on), printing the line the harnesses wait for once it listens.
const bareNode = (monitoring: boolean): string =>
  [
    "const net = require('node:net');",
    monitoring ? "const http = require('node:http');" : '',
    'let n = 0;',
    `const ready = () => { if (++n === ${monitoring ? 2 : 1}) process.stderr.write('Server is ready\\n'); };`,
    "net.createServer().listen(0, '127.0.0.1', ready);",
    monitoring ? "http.createServer().listen(0, '127.0.0.1', ready);" : '',
  ].join('\n');

interface Target {
  name: string;
  command: string;
  args: (monitoring: boolean) => string[];
}

/** A temporary folder holding a symlink named nats-server that points at bin/wirebus. */
const linkDir = mkdtempSync(join(tmpdir(), 'wirebus-startup-'));
symlinkSync(join(root, 'bin', 'wirebus'), join(linkDir, 'nats-server'));

function targets(): Target[] {
  const wirebusArgs = (m: boolean): string[] => [
    '-a',
    '127.0.0.1',
    '-p',
    '-1',
    ...(m ? ['-m', '-1'] : []),
  ];
  const list: Target[] = [
    {
      name: 'bare node',
      command: process.execPath,
      args: (m) => ['-e', bareNode(m)],
    },
    {
      name: 'bin/wirebus',
      command: process.execPath,
      args: (m) => [join(root, 'bin', 'wirebus'), ...wirebusArgs(m)],
    },
    {
      // As test harnesses run it: `nats-server` from PATH, a symlink to bin/wirebus.
      name: 'wirebus as nats-server (symlink)',
      command: join(linkDir, 'nats-server'),
      args: wirebusArgs,
    },
  ];
  const probe = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0) {
    list.push({
      name: probe.stdout.trim().replace(/^nats-server: v/, 'nats-server '),
      command: 'nats-server',
      args: (m) => ['-a', '127.0.0.1', '-p', '-1', ...(m ? ['-m', '-1'] : [])],
    });
  }
  return list;
}

interface Started {
  child: ChildProcess;
  readyMs: Promise<number>;
  /** CPU time the process had used when it was seen ready (all its threads). */
  cpuMs: Promise<number>;
}

/** Every server still running, killed if the benchmark stops early. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * CPU time of a process so far, in ms: the first field of each thread's schedstat
 * (nanoseconds on a CPU). Unlike wall time, it hardly moves with the machine's load.
 */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
  }
  return ns / 1e6;
}

/** Spawns and resolves with the milliseconds until "Server is ready" on stderr. */
function start(target: Target, monitoring: boolean): Started {
  const t0 = performance.now();
  const child = spawn(target.command, target.args(monitoring), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let cpu = (_ms: number): void => undefined;
  const cpuAtReady = new Promise<number>((resolve) => (cpu = resolve));
  const readyMs = new Promise<number>((resolve, reject) => {
    let seen = '';
    let ready = false;
    child.stderr.on('data', (chunk: Buffer) => {
      if (ready) return;
      seen += chunk.toString('latin1');
      if (seen.includes('Server is ready')) {
        ready = true;
        resolve(performance.now() - t0);
        cpu(cpuMs(child.pid!));
      }
    });
    child.once('exit', (code) => reject(new Error(`${target.name} exited with ${code}`)));
    child.once('error', reject);
  });
  return { child, readyMs, cpuMs: cpuAtReady };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+)/.exec(status);
  return m === null ? NaN : Number(m[1]);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

interface Row {
  name: string;
  ready: number[];
  cpu: number[];
  burst: number[];
  burstCpu: number[];
  rss: number[];
}

async function measureSpawns(list: Target[], monitoring: boolean): Promise<Row[]> {
  const rows: Row[] = list.map((t) => ({
    name: t.name,
    ready: [],
    cpu: [],
    burst: [],
    burstCpu: [],
    rss: [],
  }));
  for (let r = 0; r < rounds; r++) {
    // Alternate the order so no target always goes first after a pause.
    const order = r % 2 === 0 ? rows.keys() : [...rows.keys()].reverse();
    for (const i of order) {
      const s = start(list[i]!, monitoring);
      rows[i]!.ready.push(await s.readyMs);
      rows[i]!.cpu.push(await s.cpuMs);
      if (r < 3) {
        await sleep(idleMs);
        rows[i]!.rss.push(rssKiB(s.child.pid!));
      }
      await stop(s.child);
    }
  }
  for (let b = 0; b < bursts; b++) {
    const order = b % 2 === 0 ? rows.keys() : [...rows.keys()].reverse();
    for (const i of order) {
      const all = Array.from({ length: burstSize }, () => start(list[i]!, monitoring));
      const times = await Promise.all(all.map((s) => s.readyMs));
      rows[i]!.burst.push(Math.max(...times));
      const cpus = await Promise.all(all.map((s) => s.cpuMs));
      rows[i]!.burstCpu.push(cpus.reduce((a, b) => a + b, 0));
      await Promise.all(all.map((s) => stop(s.child)));
      await sleep(200);
    }
  }
  return rows;
}

function printRows(title: string, rows: Row[]): void {
  const floor = rows[0]!;
  // Each figure, then its difference from the bare node's (the floor) in parentheses.
  const cell = (row: Row, pick: (r: Row) => number, unit: string, digits: number): string => {
    const v = pick(row);
    const text = `${v.toFixed(digits)} ${unit}`;
    if (row === floor) return text;
    const d = v - pick(floor);
    return `${text} (${d >= 0 ? '+' : ''}${d.toFixed(digits)})`;
  };
  console.log(`\n${title}\n`);
  console.log(
    `| | spawn to "Server is ready" (median) | CPU used by then (median) | ` +
      `${burstSize} spawned at once (slowest, median of ${bursts}) | CPU of the ${burstSize} by then | ` +
      `idle RSS (median) |`,
  );
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) {
    const cells = [
      cell(row, (r) => median(r.ready), 'ms', 0),
      cell(row, (r) => median(r.cpu), 'ms', 0),
      cell(row, (r) => median(r.burst), 'ms', 0),
      cell(row, (r) => median(r.burstCpu), 'ms', 0),
      cell(row, (r) => median(r.rss) / 1024, 'MiB', 1),
    ];
    console.log(`| ${row.name} | ${cells.join(' | ')} |`);
  }
}

/**
 * `import('wirebus')` in a fresh process, as the process itself measures it: the
 * package's own entry (package.json exports), resolved from the repository root.
 */
function importMs(): number {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const out = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const t0 = performance.now(); await import('wirebus'); console.log(performance.now() - t0);",
      ],
      { encoding: 'utf8', cwd: root },
    );
    times.push(Number(out.stdout.trim()));
  }
  return median(times);
}

/** 1,000 startServer/close cycles in one process (a test suite's worth of servers). */
function embeddedCycles(): { total: number; perCycle: number } {
  const out = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { startServer } = await import('wirebus');
       for (let i = 0; i < 50; i++) await (await startServer({ host: '127.0.0.1', port: 0 })).close();
       const t0 = performance.now();
       for (let i = 0; i < 1000; i++) await (await startServer({ host: '127.0.0.1', port: 0 })).close();
       console.log(performance.now() - t0);`,
    ],
    { encoding: 'utf8', cwd: root },
  );
  const total = Number(out.stdout.trim());
  return { total, perCycle: total / 1000 };
}

const { bundleIsCurrent } = createRequire(import.meta.url)(
  join(root, 'bin', 'load-bundle.cjs'),
) as {
  bundleIsCurrent: () => boolean;
};
const list = targets();
const [l1, l5, l15] = loadavg();
console.log(
  `Node ${process.version}, ${rounds} spawns per target, ${bursts} bursts of ${burstSize}; ` +
    `load average at start ${l1!.toFixed(2)} ${l5!.toFixed(2)} ${l15!.toFixed(2)}`,
);
console.log(
  bundleIsCurrent()
    ? 'bin/wirebus runs the code-cached bundle (dist/bundle).'
    : 'bin/wirebus runs dist/src: the bundle is older than the last tsc (npm run build).',
);
printRows('Without monitoring (-p -1)', await measureSpawns(list, false));
printRows('With monitoring (-p -1 -m -1)', await measureSpawns(list, true));
console.log(`\nimport('wirebus') in a fresh process: ${importMs().toFixed(1)} ms (median)`);
const cycles = embeddedCycles();
console.log(
  `1,000 startServer({port: 0}) + close() in one process: ${cycles.total.toFixed(0)} ms ` +
    `(${cycles.perCycle.toFixed(2)} ms each)`,
);
rmSync(linkDir, { recursive: true, force: true });
const [e1, e5, e15] = loadavg();
console.log(`load average at end ${e1!.toFixed(2)} ${e5!.toFixed(2)} ${e15!.toFixed(2)}`);
