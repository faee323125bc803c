// A consumer's ack subjects and bodies, read without allocating: every acknowledged
// message passes here (`$JS.ACK.<stream>.<consumer>.<dc>.<sseq>.<dseq>.<ts>.<pending>`
// with `+ACK`, `-NAK`, `+WPI`, `+TERM`, `+NXT` or an empty body).

/** What parseAckRange read: module fields, so that an ack allocates nothing. */
export let ackSseq = 0;
export let ackDseq = 0;
/** Whether the last subject parsed had an empty token (one no subscription matches). */
export let ackEmptyToken = false;

/**
 * Reads `<dc>.<sseq>.<dseq>.<ts>.<pending>` from `b[from, end)`, the bytes after an ack
 * subject's prefix: exactly five tokens, the two sequences in decimal digits. False when
 * the subject is not an ack the reference would take.
 */
export function parseAckRange(b: Buffer, from: number, end: number): boolean {
  let token = 0;
  let value = 0;
  let digits = 0;
  let numeric = true;
  let tokenStart = from;
  ackEmptyToken = false;
  for (let i = from; i <= end; i++) {
    const c = i < end ? b[i]! : DOT;
    if (c === DOT) {
      if (i === tokenStart) ackEmptyToken = true;
      tokenStart = i + 1;
      if (token === 1 || token === 2) {
        if (digits === 0 || !numeric || !Number.isSafeInteger(value)) return false;
        if (token === 1) ackSseq = value;
        else ackDseq = value;
      }
      token++;
      value = 0;
      digits = 0;
      numeric = true;
      continue;
    }
    if (c >= ZERO && c <= NINE) {
      value = value * 10 + (c - ZERO);
      digits++;
    } else {
      numeric = false;
    }
  }
  return token === 5;
}

/** parseAckRange of a subject given as a string (an ack routed the usual way). */
export function parseAckSubject(subject: string, from: number): boolean {
  const n = subject.length;
  if (n > scratch.length) scratch = Buffer.allocUnsafe(Math.max(n, scratch.length * 2));
  scratch.write(subject, 0, n, 'latin1');
  return parseAckRange(scratch, from, n);
}

let scratch = Buffer.allocUnsafe(256);

/**
 * The ack's verb as nats-server's processAck reads the body: empty, `+ACK` or `+OK`
 * acknowledge; `+WPI` and `+TERM` only as the whole body; `-NAK` and `+NXT` as its
 * start (options follow). Anything else is '' and does nothing (AckSync still gets
 * its reply), so a malformed body never acknowledges a message. A constant string.
 * The body is `data[start, end)`.
 */
export function ackVerb(data: Buffer, start = 0, end: number = data.length): string {
  const n = end - start;
  if (n === 0) return '+ACK';
  if (n < 3) return '';
  const a = data[start]!;
  const b = data[start + 1]!;
  const c = data[start + 2]!;
  if (n === 3) return a === PLUS && b === 0x4f && c === 0x4b ? '+ACK' : '';
  const d = data[start + 3]!;
  if (a === MINUS && b === 0x4e && c === 0x41 && d === 0x4b) return '-NAK';
  if (a !== PLUS) return '';
  if (b === 0x4e && c === 0x58 && d === 0x54) return '+NXT';
  if (n === 4 && b === 0x41 && c === 0x43 && d === 0x4b) return '+ACK';
  if (n === 4 && b === 0x57 && c === 0x50 && d === 0x49) return '+WPI';
  if (n === 5 && b === 0x54 && c === 0x45 && d === 0x52 && data[start + 4] === 0x4d) return '+TER';
  return '';
}

const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const PLUS = 0x2b;
const MINUS = 0x2d;
