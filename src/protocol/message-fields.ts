// The fields of one message on its way from a publisher to the subscribers, as byte
// offsets into the buffers it arrived in: the client parser (PUB/HPUB), the route
// parser (RMSG/HMSG) and in-process publishes all carry them, so delivery reads one
// layout and no object is made per message.

export class MessageFields {
  /** Holds subject, reply and the raw size fields. */
  argBuf: Buffer = Buffer.alloc(0);
  subjectStart = 0;
  subjectEnd = 0;
  /** -1 when there is no reply subject. */
  replyStart = -1;
  replyEnd = -1;
  /** The total size as the publisher wrote it (echoed in MSG). */
  sizeStart = 0;
  sizeEnd = 0;
  /** Header block size, -1 when there is none (PUB, or HPUB with 0). */
  hdr = -1;
  hdrStart = 0;
  hdrEnd = 0;
  /** Total size: headers plus payload. */
  size = 0;
  payload: Buffer = Buffer.alloc(0);
  payloadStart = 0;
  payloadEnd = 0;
}
