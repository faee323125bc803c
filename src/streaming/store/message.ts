// Builds a StoredMsg whose indexed fields agree with its marshaled bytes.
import type Long from 'long';
import { encodeMsgProto } from '../protocol/msgproto.js';
import type { StoredMsg } from './types.js';

export function makeStoredMsg(
  sequence: number,
  timestamp: Long,
  subject: string,
  reply: string,
  data: Uint8Array,
): StoredMsg {
  return {
    sequence,
    timestamp,
    encoded: encodeMsgProto(sequence, timestamp, subject, reply, data),
  };
}
