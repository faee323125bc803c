// The load the store benchmarks put on a channel, as the streaming server drives a
// store: messages stored in batches with one flush each (one event-loop turn's
// publishes), and every message looked up in sequence order (a subscription catching up).
import { nowNanos } from '../src/streaming/protocol/index.js';
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
