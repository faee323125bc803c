// NUIDs as the reference's nuid package makes them: 22 base-62 characters, a random
// 12-character prefix and a 10-character sequence that grows by a random step. The
// streaming server's ID and the ack inboxes it hands out are NUIDs (so every ack
// inbox of a run shares the server ID's prefix, as in the reference's monitoring).

import { randomBytes, randomInt } from 'node:crypto';

const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE = 62;
const PRE_LEN = 12;
const SEQ_LEN = 10;
const MAX_SEQ = BASE ** SEQ_LEN; // 8.39e17: above 2^53, so the sequence is kept as two halves
const MIN_INC = 33;
const MAX_INC = 333;
// The sequence as hi * SPLIT + lo, each half 5 base-62 digits.
const SPLIT = BASE ** 5;

function base62(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = DIGITS[n % BASE]! + out;
    n = Math.floor(n / BASE);
  }
  return out;
}

/** `n` random base-62 characters (a NUID's prefix; the reference's reply tokens). */
export function randomBase62(n: number): string {
  const bytes = randomBytes(n);
  let out = '';
  for (let i = 0; i < n; i++) out += DIGITS[bytes[i]! % BASE]!;
  return out;
}

export class Nuid {
  private prefix = '';
  private hi = 0;
  private lo = 0;
  private inc = 0;

  constructor() {
    this.reset();
  }

  next(): string {
    this.lo += this.inc;
    if (this.lo >= SPLIT) {
      this.hi += Math.floor(this.lo / SPLIT);
      this.lo %= SPLIT;
      if (this.hi * SPLIT >= MAX_SEQ) this.reset();
    }
    return this.prefix + base62(this.hi, 5) + base62(this.lo, 5);
  }

  private reset(): void {
    this.prefix = randomBase62(PRE_LEN);
    this.hi = randomInt(SPLIT);
    this.lo = randomInt(SPLIT);
    this.inc = MIN_INC + randomInt(MAX_INC - MIN_INC);
  }
}

/** The process-wide generator. */
export const nuid = new Nuid();
