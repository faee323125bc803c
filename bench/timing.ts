// A bounded micro-benchmark loop: runs `step` in batches until `ms` have passed and
// reports operations per second. Benchmarks print figures; tests never assert them.

export interface BenchResult {
  name: string;
  opsPerSec: number;
  note: string;
}

export function measure(
  name: string,
  ms: number,
  batch: number,
  step: () => void,
  note = '',
): BenchResult {
  // Warm up so the optimising compiler has seen the code.
  const warmEnd = performance.now() + Math.min(200, ms / 4);
  while (performance.now() < warmEnd) step();
  let ops = 0;
  const start = performance.now();
  const end = start + ms;
  let now = start;
  while (now < end) {
    for (let i = 0; i < batch; i++) step();
    ops += batch;
    now = performance.now();
  }
  return { name, opsPerSec: (ops * 1000) / (now - start), note };
}

export function printTable(results: readonly BenchResult[]): void {
  const rows = results.map((r) => [r.name, formatRate(r.opsPerSec), r.note]);
  const widths = [0, 1, 2].map((c) =>
    Math.max(...rows.map((r) => r[c]!.length), ['benchmark', 'ops/s', 'note'][c]!.length),
  );
  const line = (cells: string[]): string =>
    '| ' + cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ') + ' |';
  console.log(line(['benchmark', 'ops/s', 'note']));
  console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  for (const r of rows) console.log(line(r));
}

export function formatRate(v: number): string {
  if (v >= 1e6) return (v / 1e6).toFixed(2) + 'M';
  if (v >= 1e3) return (v / 1e3).toFixed(1) + 'k';
  return v.toFixed(0);
}
