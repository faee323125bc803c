// The last string made from some bytes, kept with those bytes: an in-process
// subscriber on a wildcard subject gets the same subject and reply string for a run
// of messages (the streaming layer's `_STAN.pub.<id>.<channel>` from one publisher,
// with its one PubAck inbox), so comparing the bytes saves a string per delivery.

import { putBytes } from './outbound.js';

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
    const s = b.toString('latin1', start, end);
    if (n <= MAX_BYTES) {
      // Not Buffer#copy: its argument checks are JavaScript, run cold on each reply.
      putBytes(m, 0, b, start, end);
      this.len = n;
      this.str = s;
    }
    return s;
  }
}
