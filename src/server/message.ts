// The one shape a message has on its way from a publisher to the subscribers: byte
// offsets into the buffers it arrived in. The parser is such a shape (no object per
// message); in-process publishes fill an InternalMessage.

import { MessageFields } from '../protocol/message-fields.js';

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

/** A message published from inside the process, laid out like a parsed PUB/HPUB. */
export class InternalMessage extends MessageFields implements PublishedMessage {
  /** Lays out `subject [reply] [hdr] size` the way the parser would have seen them. */
  set(subject: string, reply: string | null, headers: Buffer | null, data: Buffer): this {
    const hdrLen = headers === null ? 0 : headers.length;
    const total = hdrLen + data.length;
    let args = subject;
    if (reply !== null) args += ' ' + reply;
    const hdrText = hdrLen > 0 ? ' ' + String(hdrLen) : '';
    args += hdrText + ' ' + String(total);
    this.argBuf = Buffer.from(args, 'latin1');
    this.subjectStart = 0;
    this.subjectEnd = subject.length;
    if (reply !== null) {
      this.replyStart = subject.length + 1;
      this.replyEnd = this.replyStart + reply.length;
    } else {
      this.replyStart = -1;
      this.replyEnd = -1;
    }
    if (hdrLen > 0) {
      this.hdr = hdrLen;
      this.hdrStart = (reply === null ? subject.length : this.replyEnd) + 1;
      this.hdrEnd = this.hdrStart + hdrText.length - 1;
    } else {
      this.hdr = -1;
    }
    this.sizeStart = args.length - String(total).length;
    this.sizeEnd = args.length;
    this.size = total;
    this.payload = headers === null || hdrLen === 0 ? data : Buffer.concat([headers, data]);
    this.payloadStart = 0;
    this.payloadEnd = total;
    return this;
  }
}
