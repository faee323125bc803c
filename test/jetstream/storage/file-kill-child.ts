// A process that writes a JetStream file stream as fast as it can, for the kill -9
// test (file-kill.test.ts): each event-loop turn stores a batch of messages, then asks
// onDurable and prints `ACK <round> <last index>` when it calls back, which is when
// the engine would send those PubAcks. A durable consumer follows the stream and acks
// what it reads.
//
//   node dist/test/jetstream/storage/file-kill-child.js '{"dir":"/tmp/x","round":1,"sync":"always"}'
import { FileStorage } from '../../../src/jetstream/storage/file.js';
import { streamConfig } from './conformance.js';

interface ChildOptions {
  readonly dir: string;
  readonly round: number;
  readonly sync: 'always' | number;
  /** max_msgs of the stream (-1: none): the oldest are dropped as it writes. */
  readonly maxMsgs?: number;
}

const o = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
const storage = new FileStorage({
  storeDir: o.dir,
  syncInterval: o.sync,
  blockSize: 64 * 1024,
  consumerFlushMs: 20,
  warn: (w) => process.stderr.write(`${w}\n`),
});
const store = storage
  .account('$G')
  .openStream(streamConfig('KILL', 'file', { maxMsgs: o.maxMsgs ?? -1 }), Buffer.from('{}'));
const consumer = store.consumerStore('dur', { ackPolicy: 'explicit' });
const cstate = consumer.state();
let dseq = cstate.delivered.consumer;
let next = cstate.delivered.stream + 1;

let i = 0;
const pad = Buffer.alloc(2048, 'x');
function turn(): void {
  const batch = 1 + Math.floor(Math.random() * 64);
  for (let k = 0; k < batch; k++) {
    i++;
    const size = Math.floor(Math.random() * pad.length);
    const data = Buffer.concat([Buffer.from(`${o.round}-${i}|`), pad.subarray(0, size)]);
    store.storeMsg(`kill.${i % 7}`, Buffer.alloc(0), data, Date.now() * 1e6);
  }
  const last = i;
  store.onDurable((err) => {
    if (err === undefined) process.stdout.write(`ACK ${o.round} ${last}\n`);
  });
  // The consumer reads a few messages behind and acks them (from the first one left).
  next = Math.max(next, store.state().firstSeq);
  for (let k = 0; k < batch && next <= store.state().lastSeq; k++, next++) {
    if (store.loadMsg(next) === undefined) continue;
    consumer.updateDelivered(++dseq, next, 1, Date.now() * 1e6);
    if (next % 3 !== 0) consumer.updateAcks(dseq, next);
  }
  setImmediate(turn);
}
setImmediate(turn);
