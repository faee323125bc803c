// Streaming protobuf work per message: PubMsg decode (every publish), MsgProto encode
// and the clock read (every stored message), PubAck encode (every publish), Ack decode
// (every delivery), and marking a redelivery; then storing into the memory store and
// reading back from it.
// The protobufjs rows are kept next to the hand-written codec the server uses
// (protocol/wire.ts, writeMsgProto, encodePubAckFrom), to show what it saves.

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
import { writeMsgProto } from '../src/streaming/protocol/msgproto.js';
import { Slabs } from '../src/streaming/protocol/slabs.js';
import { PubMsgView, decodeAck } from '../src/streaming/protocol/wire.js';
import { encodePubAckFrom } from '../src/streaming/encode.js';
import { MemoryStore, makeStoredMsg } from '../src/streaming/store/index.js';
import { measure, type BenchResult } from './timing.js';

export function streamingCodecBenchmarks(ms: number): BenchResult[] {
  const data = Buffer.alloc(128, 0x61);
  const pubBytes = Buffer.from(
    PubMsg.encode({
      clientID: 'client-bench-1',
      guid: 'XYZDEFGHIJKLMNOPQRSTUV',
      subject: 'foo',
      data,
      connID: Buffer.from('ABCDEFGHIJKLMNOPQRSTUV'),
    }).finish(),
  );
  const ackBytes = Buffer.from(
    Ack.encode({ subject: 'foo', sequence: seqToLong(123_456) }).finish(),
  );
  const ts = nowNanos();
  const stored = encodeMsgProto(1, ts, 'foo', '', data);
  let seq = 0;
  let sink = 0;
  const view = new PubMsgView();
  const slabs = new Slabs();
  const fooBytes = Buffer.from('foo');
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
      'stan PubMsg decode (hand)',
      ms,
      1000,
      () => {
        if (view.decode(pubBytes)) sink += view.dataEnd - view.dataStart;
      },
      '128 B payload, reused view',
    ),
    measure(
      'stan MsgProto encode (hand)',
      ms,
      1000,
      () => {
        sink += writeMsgProto(slabs, ++seq, ts, fooBytes, '', data).length;
      },
      '128 B payload, into slabs',
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
    measure('stan Ack decode (hand)', ms, 1000, () => {
      sink += decodeAck(ackBytes, fooBytes);
    }),
    measure('stan PubAck encode (hand)', ms, 1000, () => {
      sink += encodePubAckFrom(pubBytes, view.guidStart, view.guidEnd).length;
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
  // Delivery reads each message back: lookup() of messages held (the store above is
  // full, at max_msgs).
  const held = msgs.firstSequence;
  let at = 0;
  results.push(
    measure(
      'stan memory store lookup',
      ms,
      1000,
      () => {
        const found = msgs.lookup(held + (at++ % 50_000));
        if (found !== undefined && !(found instanceof Promise)) sink += found.encoded.length;
      },
      '128 B payload',
    ),
  );
  void store.close();
  if (sink === 0) console.log('');
  return results;
}
