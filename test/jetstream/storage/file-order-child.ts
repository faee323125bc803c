// A process that kills itself in the middle of a `sync_interval: always` write round
// spanning several block files, at a chosen point, for file-kill.test.ts ("a write
// round spanning blocks"). After the process's startup, node:fs's writev is wrapped
// (syncBuiltinESMExports makes the store's imported binding see the wrapper), which
// knows block files by the descriptors openSync gave for `<n>.blk` paths. No clock is
// involved: every step waits for an event-loop turn or for a write.
//
// It stores a first batch and waits for its acknowledgement (printing `ACK <last
// index>`), then stores a batch filling several blocks in one event-loop turn: block a
// (the one the first batch ended in) and a+1, a+2, ... Then, in the round that writes
// them, by scenario:
//
//   order  block a's write is held back until the next event-loop turn (for good if
//          another block's write was asked for meanwhile); the process dies once block
//          a+1's write is in the OS. Written one after the other, block a is complete
//          by then; written concurrently, block a+1 lands without block a's new bytes.
//   drop   (max_msgs 120, 32 messages a block) block a+1's write is held back for one
//          event-loop turn, in which a third batch makes the limit drop blocks a to a+2
//          (their removal recorded in a later block); the process dies once block a+3's
//          write is in the OS. Unless the dropped blocks a+1 and a+2 are still written,
//          block a+3 lands after a hole that the state on disk does not explain.
//
//   consumer  a durable consumer has the first batch delivered; the second batch's
//          first block write never completes; the consumer has that batch delivered
//          too and is stopped (its state written), and the process dies once that is
//          done or nothing is left to do. The state on disk must not name messages the
//          stream on disk does not have.
//
//   node dist/test/jetstream/storage/file-order-child.js /tmp/dir order|drop|consumer
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { FileStorage } from '../../../src/jetstream/storage/file.js';
import { streamConfig } from './conformance.js';

const dir = process.argv[2] ?? '';
const scenario = process.argv[3] ?? 'order';
/** Block ids (`<n>.blk`) by descriptor, learnt as the store opens them. */
const blockIds = new Map<number, number>();
const realOpenSync = fs.openSync;
const realWritev = fs.writev;
let armed = false;
/** The first block written after arming (a). */
let first = -1;
let held = false;
/** Block writes asked for after the held one. */
let others = 0;

fs.openSync = ((path: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
  const fd = realOpenSync(path, flags ?? 'r', mode);
  const m = /(\d+)\.blk$/.exec(String(path));
  if (m !== null) blockIds.set(fd, Number(m[1]));
  return fd;
}) as typeof fs.openSync;

type WritevCallback = (err: NodeJS.ErrnoException | null, written: number) => void;
fs.writev = ((
  fd: number,
  bufs: NodeJS.ArrayBufferView[],
  pos: number | null,
  cb: WritevCallback,
) => {
  const id = blockIds.get(fd);
  if (!armed || id === undefined) return realWritev(fd, bufs, pos, cb);
  if (first < 0) first = id;
  // consumer: the round's block writes never reach the OS.
  if (scenario === 'consumer') return;
  const holdId = scenario === 'order' ? first : first + 1;
  const killId = scenario === 'order' ? first + 1 : first + 3;
  if (id === holdId && !held) {
    held = true;
    setImmediate(() => {
      if (scenario === 'drop') storeBatch(110);
      else if (others > 0) return;
      realWritev(fd, bufs, pos, cb);
    });
    return;
  }
  if (held) others++;
  // Once this block's write is in the OS, the crash.
  if (id === killId) realWritev(fd, bufs, pos, () => process.kill(process.pid, 'SIGKILL'));
  else realWritev(fd, bufs, pos, cb);
}) as typeof fs.writev;
syncBuiltinESMExports();

const storage = new FileStorage({
  storeDir: dir,
  syncInterval: 'always',
  blockSize: 64 * 1024,
  warn: (w) => process.stderr.write(`${w}\n`),
});
const store = storage
  .account('$G')
  .openStream(
    streamConfig('ORDER', 'file', { maxMsgs: scenario === 'drop' ? 120 : -1 }),
    Buffer.from('{}'),
  );

// Records of 2037 bytes (subject order.N, 2000 bytes of data): 32 to a 64 KiB block.
const pad = Buffer.alloc(2000, 'x');
let i = 0;
function storeBatch(n: number): number {
  for (let k = 0; k < n; k++) {
    i++;
    const data = Buffer.from(pad);
    data.write(`${String(i).padStart(6, '0')}|`, 'latin1');
    store.storeMsg(`order.${i % 5}`, Buffer.alloc(0), data, 1);
  }
  return i;
}

const consumer = scenario === 'consumer' ? store.consumerStore('dur') : undefined;
let delivered = 0;
function deliverAll(): void {
  if (consumer === undefined) return;
  for (; delivered < i; delivered++) consumer.updateDelivered(delivered + 1, delivered + 1, 1, 1);
}

const acked = storeBatch(10);
deliverAll();
store.onDurable((err) => {
  if (err !== undefined) throw err;
  process.stdout.write(`ACK ${acked}\n`);
  armed = true;
  storeBatch(101);
  store.onDurable(() => process.stdout.write('ROUND COMPLETE\n'));
  if (consumer === undefined) return;
  deliverAll();
  // Nothing keeps the process alive while the state waits for a write that never comes.
  process.once('beforeExit', () => process.kill(process.pid, 'SIGKILL'));
  void consumer.stop().then(() => process.kill(process.pid, 'SIGKILL'));
});
