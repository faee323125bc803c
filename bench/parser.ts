// Parser throughput over a stream of PUB ops: whole chunks, and the same bytes cut
// into small reads so that ops straddle chunk boundaries.

import { Parser, type ParserHandler } from '../src/protocol/parser.js';
import { measure, type BenchResult } from './timing.js';

class CountingHandler implements ParserHandler {
  msgs = 0;
  onConnect(): void {}
  onInfo(): void {}
  onPing(): void {}
  onPong(): void {}
  onSub(): void {}
  onUnsub(): void {}
  onMsg(): void {
    this.msgs++;
  }
  onErr(): void {}
  onFailure(): void {
    throw new Error('parse failure in benchmark');
  }
}

function pubStream(count: number, size: number, reply: boolean): Buffer {
  const payload = 'x'.repeat(size);
  const line = reply
    ? `PUB bench.subject _INBOX.r ${size}\r\n${payload}\r\n`
    : `PUB bench.subject ${size}\r\n${payload}\r\n`;
  return Buffer.from(line.repeat(count));
}

export function parserBenchmarks(ms: number): BenchResult[] {
  const results: BenchResult[] = [];
  for (const size of [16, 128, 1024]) {
    const perChunk = Math.max(1, Math.floor(65536 / (size + 30)));
    const chunk = pubStream(perChunk, size, false);
    const handler = new CountingHandler();
    const parser = new Parser(handler, { maxControlLine: 1024, maxPayload: 1 << 20 });
    const r = measure(`parser PUB ${size}B, 64 KiB chunks`, ms, 1, () => {
      parser.parse(chunk);
    });
    results.push({ ...r, opsPerSec: r.opsPerSec * perChunk, note: 'msgs/s' });

    // The same stream in 1000-byte reads (not a multiple of the op size), so ops split.
    const pieces: Buffer[] = [];
    for (let i = 0; i < chunk.length; i += 1000) pieces.push(chunk.subarray(i, i + 1000));
    const splitParser = new Parser(new CountingHandler(), {
      maxControlLine: 1024,
      maxPayload: 1 << 20,
    });
    const s = measure(`parser PUB ${size}B, 1000 B reads`, ms, 1, () => {
      for (const p of pieces) splitParser.parse(p);
    });
    results.push({ ...s, opsPerSec: s.opsPerSec * perChunk, note: 'msgs/s' });
  }
  const replyChunk = pubStream(400, 128, true);
  const replyParser = new Parser(new CountingHandler(), {
    maxControlLine: 1024,
    maxPayload: 1 << 20,
  });
  const r = measure('parser PUB 128B with reply', ms, 1, () => {
    replyParser.parse(replyChunk);
  });
  results.push({ ...r, opsPerSec: r.opsPerSec * 400, note: 'msgs/s' });
  return results;
}
