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
// SOAK_HEAP_AT="60,240" writes a heap snapshot at those seconds (into the working
// directory), to see what holds memory that grows (signals are taken: SIGUSR2 is
// lame duck mode, as in nats-server).

import { appendFile, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { writeHeapSnapshot } from 'node:v8';

const out = process.env.SOAK_PROBE_OUT;
const stallMs = Number(process.env.SOAK_STALL_MS ?? '50');

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
    if (gap > stallMs && stat !== null && lastStat !== null) {
      let gcMs = 0;
      let gcKinds = 0;
      for (const [end, dur, kind] of gcs) {
        if (end > lastTick && end - dur < now) {
          gcMs += dur;
          gcKinds |= kind;
        }
      }
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
      }) + '\n',
    );
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
