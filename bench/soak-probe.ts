// Preloaded into the wirebus server of a soak (`node --import .../soak-probe.js`):
// every 5 seconds it appends one JSON line to $SOAK_PROBE_OUT with the longest
// event-loop delay of the interval (monitorEventLoopDelay), its 99th percentile and
// the heap figures, so a stall can be placed in time and a growth told apart
// (JS heap, external buffers, or neither: native memory). Benchmark only.
//
// Each long turn (a 10 ms ticker that fires more than STALL_MS late) is also
// written as a line `{stall_ms, cpu_ms, wait_ms, gc_ms}`: how much of the gap the
// main thread spent running (on a CPU, from /proc/self/task/<pid>/schedstat),
// how much it sat runnable waiting for a core (the machine's load, not our work),
// and how much of it V8's collector paused the thread. That tells a turn of
// streaming work from a process that simply was not scheduled. Every 5 s line also
// has the most CPU the main thread used between two ticks (`tick_cpu_max_ms`).
//
// A tick that used more than SOAK_BUSY_MS (15) of main-thread CPU is written as a line
// `{busy_ms, wait_ms, prev_wait_ms, gc_ms, turns, turn_max_ms, turn_type, read_kb}`:
// whether it followed a wait for a core (a backlog of input handled in one loop
// iteration), and, with SOAK_TURNS=1, how many callbacks ran in it and the longest.
//
// SOAK_TURNS=1 times every top-level callback (async_hooks before/after: the unit of
// work the issue calls a turn, one socket read, one timer, one fs completion, one
// promise reaction): each 5 s line gets the longest (`turn_max_ms`, wall time, and the
// kind of resource it ran for), and each callback over SOAK_TURN_MS (10) a line
// `{turn_ms, type, gc_ms}`. It costs about a microsecond per callback.
//
// SOAK_HEAP_AT="60,240" writes a heap snapshot at those seconds (into the working
// directory), to see what holds memory that grows (signals are taken: SIGUSR2 is
// lame duck mode, as in nats-server).

import { appendFile, readFileSync } from 'node:fs';
import { createHook, executionAsyncResource } from 'node:async_hooks';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { writeHeapSnapshot } from 'node:v8';

const out = process.env.SOAK_PROBE_OUT;
const stallMs = Number(process.env.SOAK_STALL_MS ?? '50');
const busyMs = Number(process.env.SOAK_BUSY_MS ?? '15');
const timeTurns = process.env.SOAK_TURNS === '1';
const turnMs = Number(process.env.SOAK_TURN_MS ?? '10');

/** Bytes this process has read through system calls so far (sockets and files), or 0. */
function readBytes(): number {
  try {
    const m = /rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'latin1'));
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

/** [user ticks, system ticks, minor faults, major faults] of the main thread, or null. */
function threadTimes(path: string): [number, number, number, number] | null {
  try {
    const st = readFileSync(path, 'latin1');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    // Fields from "state" on: minflt is the 8th, majflt the 10th, utime/stime the 12th/13th.
    return [Number(f[11]), Number(f[12]), Number(f[7]), Number(f[9])];
  } catch {
    return null;
  }
}

/** The name of the resource a callback runs for: TCP, Timeout, FSReqCallback, PromiseWrap... */
function resourceType(): string {
  const r = executionAsyncResource() as { constructor?: { name?: string } } | undefined;
  return r?.constructor?.name ?? 'unknown';
}

// Callback timing (SOAK_TURNS=1): depth counts nested callbacks, only the outermost is timed.
let depth = 0;
let turnStart = 0;
let tickTurns = 0;
let tickTurnMax = 0;
let tickTurnSum = 0;
let tickTurnType = '';
let intervalTurnMax = 0;
let intervalTurnType = '';
/** Callbacks over SOAK_TURN_MS, as [start, end, type], written with their GC at the next 5 s line. */
let longTurns: [number, number, string][] = [];
if (timeTurns) {
  createHook({
    before() {
      if (depth++ === 0) turnStart = performance.now();
    },
    after() {
      if (--depth !== 0) return;
      const end = performance.now();
      const d = end - turnStart;
      tickTurns++;
      tickTurnSum += d;
      if (d <= tickTurnMax && d <= intervalTurnMax && d <= turnMs) return;
      const type = resourceType();
      if (d > tickTurnMax) {
        tickTurnMax = d;
        tickTurnType = type;
      }
      if (d > intervalTurnMax) {
        intervalTurnMax = d;
        intervalTurnType = type;
      }
      if (d > turnMs) longTurns.push([turnStart, end, type]);
    },
  }).enable();
}

/** [ns on a CPU, ns runnable but waiting] of the main thread, or null off Linux. */
function schedstat(path: string): [number, number] | null {
  try {
    const f = readFileSync(path, 'latin1').split(' ');
    return [Number(f[0]), Number(f[1])];
  } catch {
    return null;
  }
}

// Lines are written asynchronously, one write at a time, so that the probe never
// blocks the loop it measures (appendFileSync on this machine's busy disk took up to
// 12 ms in a one-minute check).
let queued: string[] = [];
let writing = false;
function write(path: string, line: string): void {
  queued.push(line);
  if (!writing) drain(path);
}
function drain(path: string): void {
  writing = true;
  const lines = queued.join('');
  queued = [];
  appendFile(path, lines, () => {
    writing = false;
    if (queued.length > 0) drain(path);
  });
}

if (out !== undefined && out !== '') {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const started = Date.now();
  const statPath = `/proc/self/task/${process.pid}/schedstat`;
  // GC pauses of the main thread, as [end ms (performance.now), duration ms, kind].
  const gcs: [number, number, number][] = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = ((e as { detail?: unknown }).detail as { kind?: number } | null)?.kind ?? 0;
      gcs.push([e.startTime + e.duration, e.duration, kind]);
    }
    if (gcs.length > 1000) gcs.splice(0, gcs.length - 1000);
  });
  obs.observe({ entryTypes: ['gc'] });
  let lastTick = performance.now();
  let lastStat = schedstat(statPath);
  let lastWaitNs = 0;
  let lastRead = readBytes();
  const timesPath = `/proc/self/task/${process.pid}/stat`;
  let lastTimes = threadTimes(timesPath);
  /** Busy ticks, written at the next 5 s line with the GC the observer has heard of by then. */
  let busyTicks: { from: number; to: number; line: Record<string, number | string> }[] = [];
  const gcIn = (from: number, to: number): number => {
    let ms = 0;
    for (const [end, dur] of gcs) if (end > from && end - dur < to) ms += dur;
    return ms;
  };
  // The most CPU the main thread used between two ticks in this 5 s interval: an
  // upper bound of the longest turn's own work, whatever the machine's load did.
  let cpuMaxNs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    const stat = schedstat(statPath);
    const gap = now - lastTick;
    if (stat !== null && lastStat !== null && stat[0] - lastStat[0] > cpuMaxNs) {
      cpuMaxNs = stat[0] - lastStat[0];
    }
    const read = readBytes();
    const times = threadTimes(timesPath);
    if (stat !== null && lastStat !== null && stat[0] - lastStat[0] > busyMs * 1e6) {
      const d = (i: number): number =>
        times !== null && lastTimes !== null ? times[i]! - lastTimes[i]! : -1;
      busyTicks.push({
        from: lastTick,
        to: now,
        line: {
          t: Math.round((Date.now() - started) / 1000),
          busy_ms: Math.round((stat[0] - lastStat[0]) / 1e5) / 10,
          gap_ms: Math.round(gap),
          // The tick's end on the monotonic clock, in µs: where to look in a --cpu-prof profile.
          end_us: Number(process.hrtime.bigint() / 1000n),
          wait_ms: Math.round((stat[1] - lastStat[1]) / 1e6),
          prev_wait_ms: Math.round(lastWaitNs / 1e6),
          // utime/stime are counted in 10 ms clock ticks: which side of the kernel it was.
          user_ticks: d(0),
          sys_ticks: d(1),
          minor_faults: d(2),
          major_faults: d(3),
          turns: tickTurns,
          turns_ms: Math.round(tickTurnSum * 10) / 10,
          turn_max_ms: Math.round(tickTurnMax * 10) / 10,
          turn_type: tickTurnType,
          read_kb: Math.round((read - lastRead) / 1024),
        },
      });
    }
    lastTimes = times;
    lastRead = read;
    lastWaitNs = stat !== null && lastStat !== null ? stat[1] - lastStat[1] : 0;
    tickTurns = 0;
    tickTurnMax = 0;
    tickTurnSum = 0;
    tickTurnType = '';
    if (gap > stallMs && stat !== null && lastStat !== null) {
      const gcMs = gcIn(lastTick, now);
      let gcKinds = 0;
      for (const [end, dur, kind] of gcs) if (end > lastTick && end - dur < now) gcKinds |= kind;
      write(
        out,
        JSON.stringify({
          t: Math.round((Date.now() - started) / 1000),
          stall_ms: Math.round(gap),
          cpu_ms: Math.round((stat[0] - lastStat[0]) / 1e6),
          wait_ms: Math.round((stat[1] - lastStat[1]) / 1e6),
          gc_ms: Math.round(gcMs),
          gc_kinds: gcKinds,
        }) + '\n',
      );
    }
    lastTick = now;
    lastStat = stat;
  }, 10);
  ticker.unref();
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    write(
      out,
      JSON.stringify({
        t: Math.round((Date.now() - started) / 1000),
        loop_max_ms: Math.round(h.max / 1e5) / 10,
        loop_p99_ms: Math.round(h.percentile(99) / 1e5) / 10,
        tick_cpu_max_ms: Math.round(cpuMaxNs / 1e5) / 10,
        heap_used_mb: Math.round(m.heapUsed / 1e5) / 10,
        heap_total_mb: Math.round(m.heapTotal / 1e5) / 10,
        external_mb: Math.round(m.external / 1e5) / 10,
        array_buffers_mb: Math.round(m.arrayBuffers / 1e5) / 10,
        rss_mb: Math.round(m.rss / 1e5) / 10,
        ...(timeTurns
          ? { turn_max_ms: Math.round(intervalTurnMax * 10) / 10, turn_type: intervalTurnType }
          : {}),
      }) + '\n',
    );
    for (const [from, to, type] of longTurns) {
      write(
        out,
        JSON.stringify({
          t: Math.round((Date.now() - started) / 1000),
          turn_ms: Math.round((to - from) * 10) / 10,
          type,
          gc_ms: Math.round(gcIn(from, to) * 10) / 10,
        }) + '\n',
      );
    }
    longTurns = [];
    for (const b of busyTicks) {
      let kinds = 0;
      for (const [end, dur, kind] of gcs) if (end > b.from && end - dur < b.to) kinds |= kind;
      write(
        out,
        JSON.stringify({
          ...b.line,
          gc_ms: Math.round(gcIn(b.from, b.to) * 10) / 10,
          gc_kinds: kinds,
        }) + '\n',
      );
    }
    busyTicks = [];
    intervalTurnMax = 0;
    intervalTurnType = '';
    h.reset();
    cpuMaxNs = 0;
  }, 5000);
  timer.unref();
  for (const at of (process.env.SOAK_HEAP_AT ?? '').split(',').filter((a) => a !== '')) {
    setTimeout(
      () => {
        writeHeapSnapshot(`soak-heap-${process.pid}-${at}s.heapsnapshot`);
      },
      Number(at) * 1000,
    ).unref();
  }
}
