// The fields of one message on its way from a publisher to the subscribers, as byte
// offsets into the buffers it arrived in: the client parser (PUB/HPUB), the route
// parser (RMSG/HMSG) and in-process publishes all carry them, so delivery reads one
// layout and no object is made per message.

const NO_BYTES = Buffer.alloc(0);

export class MessageFields {
  /** Holds subject, reply and the raw size fields. */
  argBuf: Buffer = NO_BYTES;
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
  payload: Buffer = NO_BYTES;
  payloadStart = 0;
  payloadEnd = 0;

  /** The message's argument line in argBuf, for detach() to copy. */
  protected argsStart = 0;
  protected argsEnd = 0;
  private argsCopy: Buffer | null = null;

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
    copyRange(pending, 0, buf, i, len);
    this.pending = pending;
    this.pendingLen = len - i;
    return len;
  }

  /** Gathers more of a pending payload; same return and completion rule as takePayload. */
  protected gatherPayload(buf: Buffer, i: number, len: number): number {
    const pending = this.pending!;
    const need = this.size - this.pendingLen;
    const take = len - i < need ? len - i : need;
    copyRange(pending, this.pendingLen, buf, i, i + take);
    this.pendingLen += take;
    if (this.pendingLen === this.size) {
      this.payload = pending;
      this.payloadStart = 0;
      this.payloadEnd = this.size;
      this.pending = null;
    }
    return i + take;
  }

  /**
   * Called after each read with that read's buffer, so the parser keeps nothing of
   * it: client reads land in one shared buffer (src/server/shared-read.ts) that the
   * next read, from any connection, overwrites. A message still incomplete keeps a
   * copy of its argument line and, when only its CRLF is missing, of its payload;
   * everything else lets go of the buffer.
   */
  protected detach(buf: Buffer, inMessage: boolean): void {
    if (!inMessage) {
      this.argBuf = NO_BYTES;
      this.payload = NO_BYTES;
      return;
    }
    if (this.argBuf === buf) {
      const n = this.argsEnd - this.argsStart;
      let copy = this.argsCopy;
      if (copy === null || copy.length < n) {
        copy = Buffer.allocUnsafe(n > 256 ? n : 256);
        this.argsCopy = copy;
      }
      copyRange(copy, 0, buf, this.argsStart, this.argsEnd);
      this.shiftArgs(-this.argsStart);
      this.argsStart = 0;
      this.argsEnd = n;
      this.argBuf = copy;
    }
    if (this.pending !== null) {
      // Still gathering: `payload` is a finished message's, and gatherPayload sets it.
      this.payload = NO_BYTES;
    } else if (this.payload === buf) {
      // allocUnsafe + copy: one copy, pooled when small (see keep() in shared-read.ts).
      const payload = Buffer.allocUnsafe(this.payloadEnd - this.payloadStart);
      copyRange(payload, 0, buf, this.payloadStart, this.payloadEnd);
      this.payload = payload;
      this.payloadStart = 0;
      this.payloadEnd = this.size;
    }
  }

  /** Moves every argument offset by delta; parsers with more fields add theirs. */
  protected shiftArgs(delta: number): void {
    this.subjectStart += delta;
    this.subjectEnd += delta;
    if (this.replyStart >= 0) {
      this.replyStart += delta;
      this.replyEnd += delta;
    }
    this.sizeStart += delta;
    this.sizeEnd += delta;
    this.hdrStart += delta;
    this.hdrEnd += delta;
  }
}

/**
 * `src[start, end)` into `dst` at `at`: the typed-array copy Buffer#copy makes after its
 * checks, without its chain of JavaScript calls (run once per read of large messages,
 * which a fresh server interprets and then compiles).
 */
function copyRange(dst: Buffer, at: number, src: Buffer, start: number, end: number): void {
  dst.set(new Uint8Array(src.buffer, src.byteOffset + start, end - start), at);
}
