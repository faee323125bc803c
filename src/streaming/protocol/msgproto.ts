// Byte-level helpers for MsgProto, the message as stored and as delivered.
//
// A message is marshaled once, when it is published: those bytes are what the store
// keeps, what its byte limits count (the reference counts the marshaled MsgProto) and
// what every first delivery sends. A redelivery needs `redelivered` and
// `redeliveryCount` set: protobuf decoders accept fields in any order and the stored
// form never carries either field, so appending them to the stored bytes yields the
// same message as re-encoding it, for the cost of one copy.
import type Long from 'long';
import { MsgProto } from './generated/index.js';
import { seqToLong } from './int64.js';

/** Marshals a message as it is stored (redelivered unset). */
export function encodeMsgProto(
  sequence: number,
  timestamp: Long,
  subject: string,
  reply: string,
  data: Uint8Array,
): Uint8Array {
  return MsgProto.encode({
    sequence: seqToLong(sequence),
    subject,
    reply,
    data,
    timestamp,
  }).finish();
}

// Field 6 (redelivered, varint) = true; field 7 (redeliveryCount, varint) tag.
const REDELIVERED_TRUE_0 = 0x30;
const REDELIVERED_TRUE_1 = 0x01;
const REDELIVERY_COUNT_TAG = 0x38;

/** The stored bytes of a message as sent on redelivery number `count` (1 for the first). */
export function markRedelivered(stored: Uint8Array, count: number): Uint8Array {
  let n = count >>> 0;
  let varintLen = 1;
  while (n > 0x7f) {
    n >>>= 7;
    varintLen++;
  }
  const extra = count > 0 ? 3 + varintLen : 2;
  const out = Buffer.allocUnsafe(stored.length + extra);
  out.set(stored, 0);
  let pos = stored.length;
  out[pos++] = REDELIVERED_TRUE_0;
  out[pos++] = REDELIVERED_TRUE_1;
  if (count > 0) {
    out[pos++] = REDELIVERY_COUNT_TAG;
    let v = count >>> 0;
    while (v > 0x7f) {
      out[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[pos] = v;
  }
  return out;
}
