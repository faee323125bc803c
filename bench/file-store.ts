// The FILE store alone, without NATS, beside the MEMORY store: what the store costs
// per message on the three paths the streaming server drives, measured apart from
// the protocol.
//   store    messages stored in batches of BATCH, one flush each (as the server
//            does per event-loop turn: with file_sync, a flush is on disk)
//   deliver  a subscription's round trip per message: sent (a subs.dat record),
//            acked (another), in batches of BATCH
//   read     every message looked up in sequence order, as a subscription catching
//            up does (the oldest ones from disk, the newest from the read cache)
// SIZE sets the payload size (128), N the messages (200,000), SYNC=0 turns file_sync
// off. Each figure: messages per second (wall time) and CPU time per message.
//
//   npm run build && node dist/bench/file-store.js
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, MemoryStore, type Store } from '../src/streaming/store/index.js';
import { readInOrder, storeInBatches } from './store-load.js';
import { formatRate } from './timing.js';

const N = Number(process.env.N ?? '200000');
const BATCH = Number(process.env.BATCH ?? '1024');
const data = Buffer.alloc(Number(process.env.SIZE ?? '128'), 0x61);
const sync = process.env.SYNC !== '0';
const limits = { maxMsgs: 0, maxBytes: 0 };

async function run(label: string, store: Store): Promise<void> {
  await store.recover();
  const { msgs, subs } = store.createChannel('bench');
  await store.flush();
  // Wall time gives the rate; the process's CPU time (every thread: the file writes
  // and reads of the thread pool too) per message is steadier on a busy machine.
  let cpu = process.cpuUsage();
  const rate = (ms: number): string => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const us = (used.user + used.system) / N;
    return `${formatRate((N * 1000) / ms).padStart(7)} msgs/s ${us.toFixed(2).padStart(5)} µs`;
  };

  let start = performance.now();
  cpu = process.cpuUsage();
  await storeInBatches(store, msgs, N, BATCH, data);
  const stored = rate(performance.now() - start);

  const sub = subs.create({
    clientID: 'bench',
    qGroup: '',
    inbox: '_INBOX.bench',
    ackInbox: '_STAN.ack.bench',
    maxInFlight: BATCH,
    ackWaitInSecs: 30,
    durableName: 'bench',
    lastSent: 0,
    isDurable: true,
    isClosed: false,
  });
  start = performance.now();
  cpu = process.cpuUsage();
  for (let from = 1; from <= N; from += BATCH) {
    const to = Math.min(N, from + BATCH - 1);
    for (let s = from; s <= to; s++) subs.addPending(sub.id, s);
    for (let s = from; s <= to; s++) subs.ack(sub.id, s);
    // One turn's records, written as the server's rounds write them.
    await new Promise<void>((r) => setImmediate(r));
  }
  await store.flush();
  const delivered = rate(performance.now() - start);

  start = performance.now();
  cpu = process.cpuUsage();
  await readInOrder(msgs, N);
  const read = rate(performance.now() - start);
  console.log(`${label.padEnd(7)} store ${stored}   deliver ${delivered}   read ${read}`);
  await store.close();
}

console.log(`${N} msgs of ${data.length} B, batches of ${BATCH}, file_sync ${sync}`);
await run('MEMORY', new MemoryStore({ limits }));
const dir = mkdtempSync(join(tmpdir(), 'wirebus-file-bench-'));
try {
  await run('FILE', new FileStore({ dir, limits, sync }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
