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
 * A PubMsg as read by PubMsgView.decode: every field as offsets into `buf` (valid as
 * long as the buffer it was read from), strings made only when asked for. One
 * instance is reused for every publish.
 */
export class PubMsgView {
  buf: Buffer = Buffer.alloc(0);
  clientIDStart = 0;
  clientIDEnd = 0;
  guidStart = 0;
  guidEnd = 0;
  subjectStart = 0;
  subjectEnd = 0;
  replyStart = 0;
  replyEnd = 0;
  dataStart = 0;
  dataEnd = 0;
  connIDStart = 0;
  connIDEnd = 0;
  /** The subject's bytes are decode()'s `known` (then they need no other look). */
  subjectKnown = false;

  /** The data as a view (the publish path reads `buf[dataStart, dataEnd)` instead). */
  get data(): Buffer {
    return this.buf.subarray(this.dataStart, this.dataEnd);
  }

  clientID(): string {
    return this.buf.toString('utf8', this.clientIDStart, this.clientIDEnd);
  }

  guid(): string {
    return this.buf.toString('utf8', this.guidStart, this.guidEnd);
  }

  subject(): string {
    return this.buf.toString('utf8', this.subjectStart, this.subjectEnd);
  }

  reply(): string {
    return this.buf.toString('utf8', this.replyStart, this.replyEnd);
  }

  /** The connID's bytes as a latin1 string (the key of clientsByConn), '' if none. */
  connKey(): string {
    return this.buf.toString('latin1', this.connIDStart, this.connIDEnd);
  }

  get hasConnID(): boolean {
    return this.connIDEnd > this.connIDStart;
  }

  /** True when the subject's bytes are `name` (a channel's name in UTF-8). */
  subjectIs(name: Buffer): boolean {
    return equalAt(this.buf, this.subjectStart, this.subjectEnd, name);
  }

  /** True when the connID's bytes are `connID`. */
  connIDIs(connID: Uint8Array): boolean {
    return equalAt(this.buf, this.connIDStart, this.connIDEnd, connID);
  }

  /**
   * Reads `buf[start, end)` (all of it by default) as a PubMsg; false when it is not
   * one (protobufjs rejects it). The fields keep referring to `buf`. `known` is valid
   * UTF-8 that the subject is likely to be (the last channel published to): a subject
   * with those bytes needs no ASCII check, and subjectKnown says so.
   */
  decode(buf: Buffer, start = 0, end = buf.length, known: Buffer | null = null): boolean {
    this.known = known;
    if (this.read(buf, start, end, true)) return true;
    try {
      const pm = PubMsg.decode(buf.subarray(start, end));
      // protobufjs took it (valid UTF-8 that is not ASCII, fields above 15, groups):
      // read its bytes again without the ASCII rule, or failing that a canonical copy.
      if (this.read(buf, start, end, false)) return true;
      const canonical = PubMsg.encode({
        clientID: pm.clientID,
        guid: pm.guid,
        subject: pm.subject,
        reply: pm.reply,
        data: pm.data,
        connID: pm.connID,
      }).finish();
      return this.read(Buffer.from(canonical), 0, canonical.length, false);
    } catch {
      return false;
    }
  }

  private known: Buffer | null = null;

  private read(buf: Buffer, from: number, end: number, asciiOnly: boolean): boolean {
    this.buf = buf;
    this.subjectKnown = false;
    this.clientIDStart = this.clientIDEnd = 0;
    this.guidStart = this.guidEnd = 0;
    this.subjectStart = this.subjectEnd = 0;
    this.replyStart = this.replyEnd = 0;
    this.dataStart = this.dataEnd = 0;
    this.connIDStart = this.connIDEnd = 0;
    let pos = from;
    while (pos < end) {
      const tag = buf[pos++]!;
      // Tags above one byte are field numbers above 15: none is known here.
      if (tag >= 0x80) return false;
      const wire = tag & 7;
      if (tag >>> 3 === 0) return false;
      if (wire === 2) {
        let len = 0;
        let shift = 0;
        let b: number;
        do {
          if (pos >= end || shift > 21) return false;
          b = buf[pos++]!;
          // 1 << shift, not 2 ** shift: a power is a heap number even when whole, and
          // one stored in this decoder's offset fields turns them from small integers
          // into doubles, which deoptimizes every publish function compiled before.
          len += (b & 0x7f) * (1 << shift);
          shift += 7;
        } while (b >= 0x80);
        const start = pos;
        pos += len;
        if (pos > end) return false;
        // Fields 1-4, the strings: anything but ASCII is protobufjs's to judge (it
        // refuses invalid UTF-8). A subject equal to `known` is valid UTF-8 already.
        if (tag === TAG_SUBJECT) {
          const known = this.known;
          this.subjectKnown = known !== null && equalAt(buf, start, pos, known);
          if (asciiOnly && !this.subjectKnown && !isAscii(buf, start, pos)) return false;
        } else if (asciiOnly && tag >= TAG_CLIENT_ID && tag <= TAG_REPLY) {
          if (!isAscii(buf, start, pos)) return false;
        }
        switch (tag) {
          case TAG_CLIENT_ID:
            this.clientIDStart = start;
            this.clientIDEnd = pos;
            break;
          case TAG_GUID:
            this.guidStart = start;
            this.guidEnd = pos;
            break;
          case TAG_SUBJECT:
            this.subjectStart = start;
            this.subjectEnd = pos;
            break;
          case TAG_REPLY:
            this.replyStart = start;
            this.replyEnd = pos;
            break;
          case TAG_DATA:
            this.dataStart = start;
            this.dataEnd = pos;
            break;
          case TAG_CONN_ID:
            this.connIDStart = start;
            this.connIDEnd = pos;
            break;
        }
      } else if (wire === 0) {
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
}

function isAscii(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i]! >= 0x80) return false;
  return true;
}

function equalAt(buf: Buffer, start: number, end: number, want: Uint8Array): boolean {
  if (end - start !== want.length) return false;
  for (let i = 0; i < want.length; i++) if (buf[start + i] !== want[i]) return false;
  return true;
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
export function decodeAck(
  buf: Buffer,
  channel: Buffer,
  start = 0,
  end: number = buf.length,
): number {
  const fast = decodeAckFast(buf, start, end, channel);
  if (fast !== SLOW) return fast;
  let ack: Ack;
  try {
    ack = Ack.decode(buf.subarray(start, end));
  } catch {
    return ACK_INVALID;
  }
  if (!Buffer.from(ack.subject, 'utf8').equals(channel)) return ACK_OTHER_CHANNEL;
  return seqFromLong(ack.sequence);
}

const SLOW = -3;

function decodeAckFast(buf: Buffer, start: number, end: number, channel: Buffer): number {
  let pos = start;
  let seq = 0;
  // Subject unset means '': another channel (a channel name is never empty).
  let sameChannel = false;
  while (pos < end) {
    const tag = buf[pos++]!;
    if (tag === TAG_ACK_SUBJECT) {
      if (pos >= end) return SLOW;
      const len = buf[pos++]!;
      if (len >= 0x80 || pos + len > end) return SLOW;
      sameChannel = equalAt(buf, pos, pos + len, channel);
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
