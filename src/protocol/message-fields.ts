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

  /** A payload that spans reads, being gathered into a copy of its own. */
  protected pending: Buffer | null = null;
  protected pendingLen = 0;

  /**
   * Takes the `size`-byte payload starting at buf[i]: by reference when it lies in
   * this read (no copy at all), else starts gathering a copy. Returns the index
   * after what was taken; `pending` is null when the payload is complete.
   */
  protected takePayload(buf: Buffer, i: number, len: number): number {
    const size = this.size;
    if (len - i >= size) {
      this.payload = buf;
      this.payloadStart = i;
      this.payloadEnd = i + size;
      return i + size;
    }
    const pending = Buffer.allocUnsafe(size);
    buf.copy(pending, 0, i, len);
    this.pending = pending;
    this.pendingLen = len - i;
    return len;
  }

  /** Gathers more of a pending payload; same return and completion rule as takePayload. */
  protected gatherPayload(buf: Buffer, i: number, len: number): number {
    const pending = this.pending!;
    const need = this.size - this.pendingLen;
    const take = len - i < need ? len - i : need;
    buf.copy(pending, this.pendingLen, i, i + take);
    this.pendingLen += take;
    if (this.pendingLen === this.size) {
      this.payload = pending;
      this.payloadStart = 0;
      this.payloadEnd = this.size;
      this.pending = null;
    }
    return i + take;
  }
}
