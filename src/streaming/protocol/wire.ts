// Hand-written protobuf for the messages of every publish and every delivery: PubMsg
// and Ack are read, MsgProto and PubAck written, without protobufjs objects or Long.
// protobufjs allocated a message object, a Reader or Writer, a Long per 64-bit field
// and a buffer per bytes field, and was a third of the server's time under stan-pub.
//
// The readers follow protobufjs's generated decoders (what the rest of the server
// uses) on everything a client sends in practice: fields in any order, the last of a
// repeated field wins, a known field with another wire type is skipped as unknown,
// unknown fields are skipped. Anything rarer (groups, field number 0, varints longer
// than this reader takes, non-ASCII strings) goes to protobufjs itself, so malformed
// and unusual input gets exactly its answer: the same value or the same rejection.

import { Ack, PubMsg } from './generated/index.js';
import { seqFromLong } from './int64.js';

const TAG_CLIENT_ID = (1 << 3) | 2;
const TAG_GUID = (2 << 3) | 2;
const TAG_SUBJECT = (3 << 3) | 2;
const TAG_REPLY = (4 << 3) | 2;
const TAG_DATA = (5 << 3) | 2;
const TAG_CONN_ID = (6 << 3) | 2;
const TAG_ACK_SUBJECT = (1 << 3) | 2;
const TAG_ACK_SEQUENCE = (2 << 3) | 0;

/**
 * A PubMsg as read by decodePubMsg: strings, and the data and connID as offsets into
 * `buf` (valid as long as the buffer it was read from). One instance is reused for
 * every publish.
 */
export class PubMsgView {
  buf: Buffer = Buffer.alloc(0);
  clientID = '';
  guid = '';
  subject = '';
  reply = '';
  dataStart = 0;
  dataEnd = 0;
  connIDStart = 0;
  connIDEnd = 0;

  get data(): Buffer {
    return this.buf.subarray(this.dataStart, this.dataEnd);
  }

  /** The connID's bytes as a latin1 string (the key of clientsByConn), '' if none. */
  connKey(): string {
    return this.connIDEnd > this.connIDStart
      ? this.buf.toString('latin1', this.connIDStart, this.connIDEnd)
      : '';
  }

  private reset(buf: Buffer): void {
    this.buf = buf;
    this.clientID = '';
    this.guid = '';
    this.subject = '';
    this.reply = '';
    this.dataStart = 0;
    this.dataEnd = 0;
    this.connIDStart = 0;
    this.connIDEnd = 0;
  }

  /**
   * Reads `buf` as a PubMsg; false when it is not one (protobufjs rejects it). The
   * fields keep referring to `buf`.
   */
  decode(buf: Buffer): boolean {
    this.reset(buf);
    if (this.decodeFast(buf)) return true;
    return this.decodeSlow(buf);
  }

  private decodeFast(buf: Buffer): boolean {
    const end = buf.length;
    let pos = 0;
    while (pos < end) {
      const tag = buf[pos++]!;
      // Tags above one byte are field numbers above 15: none is known here.
      if (tag >= 0x80) return false;
      const wire = tag & 7;
      if (wire === 2) {
        let len = 0;
        let shift = 0;
        let b: number;
        do {
          if (pos >= end || shift > 21) return false;
          b = buf[pos++]!;
          len += (b & 0x7f) * 2 ** shift;
          shift += 7;
        } while (b >= 0x80);
        const start = pos;
        pos += len;
        if (pos > end) return false;
        if (tag === TAG_DATA) {
          this.dataStart = start;
          this.dataEnd = pos;
        } else if (tag === TAG_CONN_ID) {
          this.connIDStart = start;
          this.connIDEnd = pos;
        } else if (tag >= TAG_CLIENT_ID && tag <= TAG_REPLY) {
          // Fields 1-4, the strings: anything but ASCII is protobufjs's to judge.
          const s = ascii(buf, start, pos);
          if (s === null) return false;
          if (tag === TAG_CLIENT_ID) this.clientID = s;
          else if (tag === TAG_GUID) this.guid = s;
          else if (tag === TAG_SUBJECT) this.subject = s;
          else this.reply = s;
        } else if (tag >>> 3 === 0) {
          return false;
        }
        continue;
      }
      if (tag >>> 3 === 0) return false;
      if (wire === 0) {
        let n = 0;
        while (pos < end && buf[pos]! >= 0x80 && n < 9) {
          pos++;
          n++;
        }
        if (pos >= end || buf[pos]! >= 0x80) return false;
        pos++;
      } else if (wire === 1) {
        pos += 8;
        if (pos > end) return false;
      } else if (wire === 5) {
        pos += 4;
        if (pos > end) return false;
      } else {
        return false;
      }
    }
    return true;
  }

  /** protobufjs's reading, for what decodeFast does not take. */
  private decodeSlow(buf: Buffer): boolean {
    this.reset(buf);
    let pm: PubMsg;
    try {
      pm = PubMsg.decode(buf);
    } catch {
      return false;
    }
    // protobufjs hands bytes fields out as views of `buf`, but copies are as good.
    const data = Buffer.from(pm.data.buffer, pm.data.byteOffset, pm.data.byteLength);
    const connID = Buffer.from(pm.connID.buffer, pm.connID.byteOffset, pm.connID.byteLength);
    const joined = Buffer.concat([data, connID]);
    this.buf = joined;
    this.clientID = pm.clientID;
    this.guid = pm.guid;
    this.subject = pm.subject;
    this.reply = pm.reply;
    this.dataStart = 0;
    this.dataEnd = data.length;
    this.connIDStart = data.length;
    this.connIDEnd = joined.length;
    return true;
  }
}

/** buf[start, end) as a string when every byte is ASCII, else null. */
function ascii(buf: Buffer, start: number, end: number): string | null {
  for (let i = start; i < end; i++) if (buf[i]! >= 0x80) return null;
  return start === end ? '' : buf.toString('latin1', start, end);
}

/** Result of decodeAck: the channel name matched and the sequence, or why not. */
export const ACK_INVALID = -1;
export const ACK_OTHER_CHANNEL = -2;

/**
 * Reads an Ack sent on a subscription of the channel whose name is `channel` (its
 * UTF-8 bytes): the acked sequence (Infinity above 2^53 - 1, see seqFromLong; 0 when
 * unset), ACK_OTHER_CHANNEL when Ack.subject names another channel, ACK_INVALID when
 * it is no Ack.
 */
export function decodeAck(buf: Buffer, channel: Buffer): number {
  const fast = decodeAckFast(buf, channel);
  if (fast !== SLOW) return fast;
  let ack: Ack;
  try {
    ack = Ack.decode(buf);
  } catch {
    return ACK_INVALID;
  }
  if (!Buffer.from(ack.subject, 'utf8').equals(channel)) return ACK_OTHER_CHANNEL;
  return seqFromLong(ack.sequence);
}

const SLOW = -3;

function decodeAckFast(buf: Buffer, channel: Buffer): number {
  const end = buf.length;
  let pos = 0;
  let seq = 0;
  // Subject unset means '': another channel (a channel name is never empty).
  let sameChannel = false;
  while (pos < end) {
    const tag = buf[pos++]!;
    if (tag === TAG_ACK_SUBJECT) {
      if (pos >= end) return SLOW;
      const len = buf[pos++]!;
      if (len >= 0x80 || pos + len > end) return SLOW;
      sameChannel = len === channel.length && sameBytes(buf, pos, channel);
      if (!sameChannel) for (let i = pos; i < pos + len; i++) if (buf[i]! >= 0x80) return SLOW;
      pos += len;
    } else if (tag === TAG_ACK_SEQUENCE) {
      // Up to 7 bytes (49 bits) exactly; longer ones go to protobufjs.
      let v = 0;
      let mul = 1;
      let n = 0;
      let b: number;
      do {
        if (pos >= end || n === 7) return SLOW;
        b = buf[pos++]!;
        v += (b & 0x7f) * mul;
        mul *= 128;
        n++;
      } while (b >= 0x80);
      seq = v;
    } else {
      return SLOW;
    }
  }
  return sameChannel ? seq : ACK_OTHER_CHANNEL;
}

function sameBytes(buf: Buffer, at: number, want: Buffer): boolean {
  for (let i = 0; i < want.length; i++) if (buf[at + i] !== want[i]) return false;
  return true;
}
