// How far V8 lets the server process's old generation grow before it marks it again,
// while the live heap is small.
//
// A busy server's JS heap is small (12-20 MB live in the streaming soak) beside its
// young generation (two 16 MB semi-spaces once grown). V8 starts incremental marking
// as soon as the room left under the old generation's limit is not more than what
// the young generation could promote, and with a limit of about three times a small
// live heap that is always so: in the FILE soak it marked and compacted every 2-5 s,
// 60 times a minute of garbage that was not there. Each marking runs steps on the
// main thread (as tasks between callbacks, where no callback's timing sees them); on
// a loaded machine, with V8's helper threads waiting for a core, steps took up to 43 ms
// and pauses up to 95 ms (wall): the longest stretches of main-thread work the soak
// found (bench/RESULTS.md, "The soak's longest ticks: V8's marking").
//
// Growing by V8's own largest factor (four times the live size) leaves room above
// the young generation: 2-3 mark-compacts a minute instead of 23. Above 64 MiB in use
// the factor goes back to V8's own choice, so a large heap never gets four times its
// size. The command's process is ours to tune; an embedding application's is not, so
// startServer() leaves it alone (as the flags of cli.ts's optimizeSooner).

import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/** 1 + 300 / 100: V8's own largest growing factor for a heap of this machine's size. */
export const SMALL_HEAP_GROWTH = '--heap-growing-percent=300';
/** V8's default: it computes the factor from its collector's and the program's speed. */
const OWN_GROWTH = '--heap-growing-percent=0';
const SMALL_HEAP_BYTES = 64 * 1024 * 1024;
const CHECK_MS = 5000;

/**
 * Keeps SMALL_HEAP_GROWTH (set once the server is ready, with cli.ts's other V8 flags)
 * while the JS heap in use stays under 64 MiB, V8's own factor above it. The check is
 * a timer that does not hold the process open.
 */
export function watchHeapGrowth(): void {
  let small = true;
  const timer = setInterval(() => {
    const now = getHeapStatistics().used_heap_size < SMALL_HEAP_BYTES;
    if (now === small) return;
    small = now;
    setFlagsFromString(now ? SMALL_HEAP_GROWTH : OWN_GROWTH);
  }, CHECK_MS);
  timer.unref();
}
