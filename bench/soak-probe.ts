// Preloaded into the wirebus server of a soak (`node --import .../soak-probe.js`):
// every 5 seconds it appends one JSON line to $SOAK_PROBE_OUT with the longest
// event-loop delay of the interval (monitorEventLoopDelay), its 99th percentile and
// the heap figures, so a stall can be placed in time and a growth told apart
// (JS heap, external buffers, or neither: native memory). Benchmark only.

import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const out = process.env.SOAK_PROBE_OUT;
if (out !== undefined && out !== '') {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const started = Date.now();
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    appendFileSync(
      out,
      JSON.stringify({
        t: Math.round((Date.now() - started) / 1000),
        loop_max_ms: Math.round(h.max / 1e5) / 10,
        loop_p99_ms: Math.round(h.percentile(99) / 1e5) / 10,
        heap_used_mb: Math.round(m.heapUsed / 1e5) / 10,
        heap_total_mb: Math.round(m.heapTotal / 1e5) / 10,
        external_mb: Math.round(m.external / 1e5) / 10,
        array_buffers_mb: Math.round(m.arrayBuffers / 1e5) / 10,
        rss_mb: Math.round(m.rss / 1e5) / 10,
      }) + '\n',
    );
    h.reset();
  }, 5000);
  timer.unref();
}
