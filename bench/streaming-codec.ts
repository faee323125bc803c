// The streaming layer's per-message protobuf work: run with
//   npx tsc -p tsconfig.json && node dist/bench/streaming-codec.js
// PubMsg decode (every publish), MsgProto encode (every stored message), Ack decode
// (every delivery), PubAck encode (every publish) and a redelivery's marking.
import {
  Ack,
  Long,
  PubAck,
  PubMsg,
  encodeMsgProto,
  markRedelivered,
  nowNanos,
  seqFromLong,
  seqToLong,
} from '../src/streaming/protocol/index.js';

const N = 1_000_000;
const data = Buffer.alloc(128, 0x61);
const pubBytes = PubMsg.encode({
  clientID: 'client-bench-1',
  guid: 'XYZDEFGHIJKLMNOPQRSTUV',
  subject: 'foo',
  data,
  connID: Buffer.from('ABCDEFGHIJKLMNOPQRSTUV'),
}).finish();
const ackBytes = Ack.encode({ subject: 'foo', sequence: seqToLong(123_456) }).finish();
const ts = nowNanos();
const stored = encodeMsgProto(1, ts, 'foo', '', data);
let sink = 0;

function bench(name: string, op: (i: number) => number): void {
  for (let i = 0; i < N / 5; i++) sink += op(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) sink += op(i);
  const ns = Number(process.hrtime.bigint() - start) / N;
  console.log(`${name.padEnd(28)} ${ns.toFixed(0).padStart(6)} ns/op ${(1e3 / ns).toFixed(2)} M/s`);
}

bench('PubMsg decode (128 B)', () => PubMsg.decode(pubBytes).data.length);
bench('MsgProto encode (128 B)', (i) => encodeMsgProto(i + 1, ts, 'foo', '', data).length);
bench('Ack decode', () => seqFromLong(Ack.decode(ackBytes).sequence));
bench('PubAck encode', () => PubAck.encode({ guid: 'XYZDEFGHIJKLMNOPQRSTUV' }).finish().length);
bench('markRedelivered', (i) => markRedelivered(stored, i & 7).length);
bench('nowNanos', () => nowNanos().low);
console.log(sink > 0 ? '' : Long.ZERO.toString());
