// The one shape a message has on its way from a publisher to the subscribers: byte
// offsets into the buffers it arrived in. The parser is such a shape (no object per
// message); in-process publishes fill an InternalMessage.

import { MessageFields } from '../protocol/message-fields.js';
import { putInt, putLatin1 } from './outbound.js';

export interface PublishedMessage {
  /** Holds subject, reply and the raw size fields. */
  readonly argBuf: Buffer;
  readonly subjectStart: number;
  readonly subjectEnd: number;
  /** -1 when there is no reply subject. */
  readonly replyStart: number;
  readonly replyEnd: number;
  /** The total size as the publisher wrote it (echoed in MSG). */
  readonly sizeStart: number;
  readonly sizeEnd: number;
  /** Header block size, -1 when there is none. */
  readonly hdr: number;
  readonly hdrStart: number;
  readonly hdrEnd: number;
  /** Total size: headers plus payload. */
  readonly size: number;
  readonly payload: Buffer;
  readonly payloadStart: number;
  readonly payloadEnd: number;
}

/**
 * m's own subject when it is routed on another one (`subject`): a JetStream delivery
 * goes to a consumer's inbox under the stream's subject. null when the two are the same,
 * found without making a string.
 */
export function otherOwnSubject(m: PublishedMessage, subject: string): string | null {
  const b = m.argBuf;
  const start = m.subjectStart;
  const len = m.subjectEnd - start;
  if (len === subject.length) {
    let i = 0;
    while (i < len && b[start + i] === subject.charCodeAt(i)) i++;
    if (i === len) return null;
  }
  return b.toString('latin1', start, m.subjectEnd);
}

/** A message published from inside the process, laid out like a parsed PUB/HPUB. */
export class InternalMessage extends MessageFields implements PublishedMessage {
  /**
   * Where the `subject [reply] [hdr] size` line is written, reused by every set():
   * like a parsed message's arguments (views of the read buffer), it is valid only
   * while the message is being routed.
   */
  private scratch = Buffer.allocUnsafe(256);
  /** The subject whose bytes begin `scratch` (set() writes the subject first). */
  private laidSubject: string | null = null;

  /** Lays out `subject [reply] [hdr] size` the way the parser would have seen them. */
  set(subject: string, reply: string | null, headers: Buffer | null, data: Buffer): this {
    const hdrLen = headers === null ? 0 : headers.length;
    const total = hdrLen + data.length;
    this.layOut(subject, reply, hdrLen, total);
    this.payload = headers === null || hdrLen === 0 ? data : Buffer.concat([headers, data]);
    this.payloadStart = 0;
    this.payloadEnd = total;
    return this;
  }

  /**
   * set() of a message given as `buf[start, end)`, its first `hdrLen` bytes its header
   * block (0: none): no view of it is made.
   */
  setRange(
    subject: string,
    reply: string | null,
    buf: Buffer,
    start: number,
    end: number,
    hdrLen = 0,
  ): this {
    this.layOut(subject, reply, hdrLen, end - start);
    this.payload = buf;
    this.payloadStart = start;
    this.payloadEnd = end;
    return this;
  }

  private layOut(subject: string, reply: string | null, hdrLen: number, total: number): void {
    const need = subject.length + (reply === null ? 0 : reply.length + 1) + 34;
    if (this.scratch.length < need) {
      this.scratch = Buffer.allocUnsafe(need * 2);
      this.laidSubject = null;
    }
    const b = this.scratch;
    let p: number;
    // Runs of publishes to one subject (PubAcks to a publisher, deliveries to a
    // subscription's inbox) find it in place: writing it is a call into C++ each time.
    if (subject === this.laidSubject) {
      p = this.subjectEnd;
    } else {
      p = putLatin1(b, 0, subject);
      this.laidSubject = subject;
      this.subjectStart = 0;
      this.subjectEnd = p;
    }
    if (reply !== null) {
      b[p++] = SPACE;
      this.replyStart = p;
      p = putLatin1(b, p, reply);
      this.replyEnd = p;
    } else {
      this.replyStart = -1;
      this.replyEnd = -1;
    }
    if (hdrLen > 0) {
      b[p++] = SPACE;
      this.hdr = hdrLen;
      this.hdrStart = p;
      p = putInt(b, p, hdrLen);
      this.hdrEnd = p;
    } else {
      this.hdr = -1;
    }
    b[p++] = SPACE;
    this.sizeStart = p;
    p = putInt(b, p, total);
    this.sizeEnd = p;
    this.argBuf = b;
    this.size = total;
  }
}

const SPACE = 0x20;
