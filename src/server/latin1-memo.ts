// The last string made from some bytes, kept with those bytes: an in-process
// subscriber on a wildcard subject gets the same subject and reply string for a run
// of messages (the streaming layer's `_STAN.pub.<id>.<channel>` from one publisher,
// with its one PubAck inbox), so comparing the bytes saves a string per delivery.

import { putBytes } from './outbound.js';

/** Node's own latin1 decoder, which `buf.toString('latin1', start, end)` calls after its checks. */
type Latin1Slicer = (this: Buffer, start: number, end: number) => string;
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice?: Latin1Slicer }).latin1Slice;

/**
 * `b.toString('latin1', start, end)` for a range within `b`, straight from Node's decoder:
 * Buffer#toString's argument checks and encoding lookup are JavaScript (three more
 * functions for a fresh server to run interpreted and then compile), run for every new
 * reply subject (every request's, every js.publish's).
 */
export function latin1String(b: Buffer, start: number, end: number): string {
  if (latin1Slice === undefined) return b.toString('latin1', start, end);
  return latin1Slice.call(b, start, end);
}

/** Subjects longer than this are made afresh each time. */
const MAX_BYTES = 256;

export class Latin1Memo {
  private readonly bytes = Buffer.allocUnsafe(MAX_BYTES);
  private len = -1;
  private str = '';

  /** `b.toString('latin1', start, end)`, the previous string when the bytes are the same. */
  get(b: Buffer, start: number, end: number): string {
    const n = end - start;
    const m = this.bytes;
    // Subjects that differ share their start (`$JS.ACK.<stream>.<consumer>.` and its
    // numbers, `_INBOX.<id>.<n>`): the last byte tells most of them apart at once.
    if (n === this.len && (n === 0 || m[n - 1] === b[end - 1])) {
      let i = 0;
      while (i < n && m[i] === b[start + i]) i++;
      if (i === n) return this.str;
    }
    const s = latin1String(b, start, end);
    if (n <= MAX_BYTES) {
      // Not Buffer#copy: its argument checks are JavaScript, run cold on each reply.
      putBytes(m, 0, b, start, end);
      this.len = n;
      this.str = s;
    }
    return s;
  }
}
