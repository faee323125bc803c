// A test suite's worth of embedded servers in one process: 1,000 startServer/close
// cycles (and 1,000 more with monitoring on) leave nothing behind: no handles, no
// timers, no process listeners, no retained memory. No timing is asserted
// (`npm run bench:startup` reports how long the cycles take).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startServer, type StartOptions } from '../../src/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CYCLES = 1000;

/** Active handles and requests by kind, e.g. { TCPServerWrap: 1, Timeout: 2 }. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

function processListeners(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of process.eventNames()) {
    counts[String(name)] = process.listenerCount(name);
  }
  return counts;
}

/** Heap in use after full collections (several, so weak and finalised objects go). */
async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  return process.memoryUsage().heapUsed;
}

async function cycles(n: number, options: StartOptions): Promise<void> {
  for (let i = 0; i < n; i++) {
    const s = await startServer({ host: '127.0.0.1', port: 0, ...options });
    await s.close();
  }
}

for (const [name, options] of [
  ['plain', {}],
  ['with monitoring', { httpPort: -1 }],
] as const) {
  test(`${CYCLES} startServer/close cycles (${name}) leak no handles, timers, listeners or memory`, async () => {
    // Warm up: lazy initialisation and compiled code are not leaks.
    await cycles(50, options);
    const heapBefore = await settledHeap();
    const handlesBefore = resources();
    const listenersBefore = processListeners();

    await cycles(CYCLES, options);

    const heapAfter = await settledHeap();
    assert.deepEqual(resources(), handlesBefore, 'active handles, requests and timers');
    assert.deepEqual(processListeners(), listenersBefore, 'process listeners');
    // A leak of even 1 KiB per server would show as 1 MB here.
    const growth = heapAfter - heapBefore;
    assert.ok(growth < 1_000_000, `heap grew by ${growth} bytes over ${CYCLES} servers`);
  });
}
