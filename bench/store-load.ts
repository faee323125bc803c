// The load the store benchmarks put on a channel, as the streaming server drives a
// store: messages stored in batches with one flush each (one event-loop turn's
// publishes), and every message looked up in sequence order (a subscription catching up).
import { readFileSync } from 'node:fs';
import Long from 'long';
import { nowNanos } from '../src/streaming/protocol/index.js';
import { nowNanosInto } from '../src/streaming/protocol/int64.js';
import { writeMsgProtoRange } from '../src/streaming/protocol/msgproto.js';
import { Slabs } from '../src/streaming/protocol/slabs.js';
import { makeStoredMsg, type MsgStore, type Store } from '../src/streaming/store/index.js';

/** Stores messages 1..n of `data` on `msgs`, flushing `store` after every `batch`. */
export async function storeInBatches(
  store: Store,
  msgs: MsgStore,
  n: number,
  batch: number,
  data: Uint8Array,
): Promise<void> {
  let seq = 0;
  while (seq < n) {
    const end = Math.min(n, seq + batch);
    while (seq < end) {
      seq++;
      msgs.store(makeStoredMsg(seq, nowNanos(), 'bench', '', data));
    }
    await store.flush();
  }
}

/**
 * Stores messages 1..n as the publish path does (handlers/publish.ts): each marshaled
 * into slabs, then storeRange (store() where a store has none), a flush after every
 * `batch`.
 */
export async function publishInBatches(
  store: Store,
  msgs: MsgStore,
  n: number,
  batch: number,
  data: Buffer,
): Promise<void> {
  const slabs = new Slabs();
  const clock = { low: 0, high: 0 };
  const subject = Buffer.from('bench');
  let seq = 0;
  while (seq < n) {
    const end = Math.min(n, seq + batch);
    while (seq < end) {
      seq++;
      nowNanosInto(clock);
      const size = writeMsgProtoRange(
        slabs,
        seq,
        clock.low,
        clock.high,
        subject,
        '',
        data,
        0,
        data.length,
      );
      const at = slabs.start;
      if (msgs.storeRange !== undefined) {
        msgs.storeRange(seq, clock.low, clock.high, slabs.buf, at, at + size);
      } else {
        msgs.store({
          sequence: seq,
          timestamp: Long.fromBits(clock.low, clock.high),
          encoded: slabs.buf.subarray(at, at + size),
        });
      }
    }
    await store.flush();
  }
}

/**
 * CPU time of this process's main thread so far, in microseconds (Linux: from /proc,
 * in clock ticks of 10 ms; undefined elsewhere). The event loop's share of the work,
 * apart from the thread pool's writes and the collector's helper threads.
 */
export function mainThreadCpuMicros(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

/** Looks up messages 1..n in order, waiting for those read from disk. */
export async function readInOrder(msgs: MsgStore, n: number): Promise<void> {
  for (let s = 1; s <= n; s++) {
    const m = msgs.lookup(s);
    if (m instanceof Promise) await m;
  }
}

/** readInOrder() as deliveries read: bytesOf() where it answers, lookup() where it says null. */
export async function readBytesInOrder(msgs: MsgStore, n: number): Promise<void> {
  if (msgs.bytesOf === undefined) return readInOrder(msgs, n);
  for (let s = 1; s <= n; s++) {
    if (msgs.bytesOf(s) !== null) continue;
    const m = msgs.lookup(s);
    if (m instanceof Promise) await m;
  }
}
