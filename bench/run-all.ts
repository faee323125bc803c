// `npm run bench`: every micro-benchmark, bounded in time, printed as one table.
// BENCH_MS sets the time per benchmark (default 1000).

import { deliveryBenchmarks } from './delivery.js';
import { parserBenchmarks } from './parser.js';
import { sublistBenchmarks } from './sublist.js';
import { streamingCodecBenchmarks } from './streaming-codec.js';
import { printTable } from './timing.js';

const ms = Number(process.env.BENCH_MS ?? '1000');
const results = [
  ...parserBenchmarks(ms),
  ...sublistBenchmarks(ms),
  ...deliveryBenchmarks(ms),
  ...streamingCodecBenchmarks(ms),
];
printTable(results);
process.exit(0);
