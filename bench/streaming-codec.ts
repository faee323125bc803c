// Streaming protobuf work per message: PubMsg decode (every publish), MsgProto encode
// and the clock read (every stored message), PubAck encode (every publish), Ack decode
// (every delivery), and marking a redelivery; then storing into the memory store.

import {
  Ack,
  PubAck,
  PubMsg,
  encodeMsgProto,
  markRedelivered,
  nowNanos,
  seqFromLong,
  seqToLong,
} from '../src/streaming/protocol/index.js';
import { MemoryStore, makeStoredMsg } from '../src/streaming/store/index.js';
import { measure, type BenchResult } from './timing.js';

export function streamingCodecBenchmarks(ms: number): BenchResult[] {
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
  let seq = 0;
  let sink = 0;
  const results = [
    measure(
      'stan PubMsg decode',
      ms,
      1000,
      () => {
        sink += PubMsg.decode(pubBytes).data.length;
      },
      '128 B payload',
    ),
    measure(
      'stan MsgProto encode',
      ms,
      1000,
      () => {
        sink += encodeMsgProto(++seq, ts, 'foo', '', data).length;
      },
      '128 B payload',
    ),
    measure('stan nowNanos', ms, 1000, () => {
      sink += nowNanos().low;
    }),
    measure('stan PubAck encode', ms, 1000, () => {
      sink += PubAck.encode({ guid: 'XYZDEFGHIJKLMNOPQRSTUV' }).finish().length;
    }),
    measure('stan Ack decode', ms, 1000, () => {
      sink += seqFromLong(Ack.decode(ackBytes).sequence);
    }),
    measure('stan markRedelivered', ms, 1000, () => {
      sink += markRedelivered(stored, 3).length;
    }),
  ];
  const store = new MemoryStore({ limits: { maxMsgs: 100_000 } });
  const { msgs } = store.createChannel('foo');
  let next = 0;
  results.push(
    measure(
      'stan memory store publish',
      ms,
      1000,
      () => {
        next++;
        msgs.store(makeStoredMsg(next, nowNanos(), 'foo', '', data));
      },
      'encode + store, max_msgs 100k',
    ),
  );
  void store.close();
  if (sink === 0) console.log('');
  return results;
}
