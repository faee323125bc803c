// Streaming protobuf work per message: PubMsg decode (every publish), MsgProto encode
// and the clock read (every stored message), PubAck encode (every publish), Ack decode
// (every delivery), and marking a redelivery; then storing into the memory store and
// reading back from it.
// The protobufjs rows are kept next to the hand-written codec the server uses
// (protocol/wire.ts, writeMsgProtoRange, PubAckBatch), to show what it saves; the
// "view" rows are the former hand-written forms, which made a Buffer view (or a
// StoredMsg and a Long) per message where the ones the server uses now take ranges.

import {
  Ack,
  PubAck,
  PubMsg,
  encodeMsgProto,
  markRedelivered,
  nowNanos,
  nowNanosInto,
  seqFromLong,
  seqToLong,
} from '../src/streaming/protocol/index.js';
import { writeMsgProto, writeMsgProtoRange } from '../src/streaming/protocol/msgproto.js';
import { Slabs } from '../src/streaming/protocol/slabs.js';
import { PubMsgView, decodeAck } from '../src/streaming/protocol/wire.js';
import { PubAckBatch } from '../src/streaming/pub-acks.js';
import { MemoryStore, makeStoredMsg } from '../src/streaming/store/index.js';
import { MemoryMsgStore } from '../src/streaming/store/memory-msgs.js';
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
  // stanbench's channel names are this long: the subject check is per byte.
  const channel = 'bench.pub.128.19241.1795538514690';
  const channelBytes = Buffer.from(channel);
  const pubLong = Buffer.from(
    PubMsg.encode({
      clientID: 'client-bench-1',
      guid: 'XYZDEFGHIJKLMNOPQRSTUV',
      subject: channel,
      data,
      connID: Buffer.from('ABCDEFGHIJKLMNOPQRSTUV'),
    }).finish(),
  );
  const longView = new PubMsgView();
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
  const acks = new PubAckBatch();
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
      'stan PubMsg decode (hand), then subject check',
      ms,
      1000,
      () => {
        if (longView.decode(pubLong) && longView.subjectIs(channelBytes)) sink++;
      },
      '33-byte channel name: an ASCII check and a compare',
    ),
    measure(
      'stan PubMsg decode (hand), channel known',
      ms,
      1000,
      () => {
        if (longView.decode(pubLong, 0, pubLong.length, channelBytes) && longView.subjectKnown) {
          sink++;
        }
      },
      'the same, the last channel given (the publish path): one compare',
    ),
    measure(
      'stan MsgProto encode (hand, view)',
      ms,
      1000,
      () => {
        sink += writeMsgProto(slabs, ++seq, ts, fooBytes, '', data).length;
      },
      '128 B payload, into slabs, a view each',
    ),
    measure(
      'stan MsgProto encode (hand)',
      ms,
      1000,
      () => {
        // `view` holds pubBytes, read by the rows above.
        sink += writeMsgProtoRange(
          slabs,
          ++seq,
          ts.low >>> 0,
          ts.high >>> 0,
          fooBytes,
          '',
          view.buf,
          view.dataStart,
          view.dataEnd,
        );
      },
      '128 B payload from the PubMsg read, into slabs, as ranges',
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
    measure(
      'stan PubAck encode (hand)',
      ms,
      1000,
      () => {
        acks.addFrom('_STAN.acks.x', pubBytes, view.guidStart, view.guidEnd);
        if (acks.size === 256) acks.clear();
      },
      'into a batch of 256',
    ),
    measure('stan markRedelivered', ms, 1000, () => {
      sink += markRedelivered(stored, 3).length;
    }),
  ];
  const store = new MemoryStore({ limits: { maxMsgs: 100_000 } });
  const { msgs } = store.createChannel('foo');
  if (!(msgs instanceof MemoryMsgStore)) throw new Error('a MEMORY store channel was expected');
  let next = 0;
  results.push(
    measure(
      'stan memory store publish (StoredMsg)',
      ms,
      1000,
      () => {
        next++;
        msgs.store(makeStoredMsg(next, nowNanos(), 'foo', '', data));
      },
      'encode + store, max_msgs 100k',
    ),
  );
  const storeSlabs = new Slabs();
  const clock = { low: 0, high: 0 };
  /** As the publish path stores message `seq`: encode into slabs, then storeRange. */
  const publishInto = (into: MemoryMsgStore, seq: number): void => {
    nowNanosInto(clock);
    const size = writeMsgProtoRange(
      storeSlabs,
      seq,
      clock.low,
      clock.high,
      fooBytes,
      '',
      data,
      0,
      data.length,
    );
    into.storeRange(
      seq,
      clock.low,
      clock.high,
      storeSlabs.buf,
      storeSlabs.start,
      storeSlabs.start + size,
    );
  };
  results.push(
    measure(
      'stan memory store publish',
      ms,
      1000,
      () => {
        publishInto(msgs, ++next);
      },
      'as the publish path: encode + storeRange, max_msgs 100k',
    ),
  );
  // A channel that holds many: what collections cost once the store is large (each
  // full one used to trace a reference per message held).
  const large = new MemoryStore({ limits: { maxMsgs: 500_000 } });
  const bigMsgs = large.createChannel('big').msgs;
  if (!(bigMsgs instanceof MemoryMsgStore)) throw new Error('a MEMORY store channel was expected');
  let bigNext = 0;
  results.push(
    measure(
      'stan memory store publish, 500k held',
      ms,
      1000,
      () => {
        publishInto(bigMsgs, ++bigNext);
      },
      'the same into a channel filling up to max_msgs 500k',
    ),
  );
  void large.close();
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
      '128 B payload, a message object and a view',
    ),
    measure(
      'stan memory store bytesOf',
      ms,
      1000,
      () => {
        if (msgs.bytesOf(held + (at++ % 50_000)) !== undefined) sink += msgs.rangeEnd;
      },
      'as deliveries read: no object',
    ),
  );
  void store.close();
  if (sink === 0) console.log('');
  return results;
}
