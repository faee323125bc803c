// SQL literals shared by both databases (the ones that differ are in each SqlDialect):
// every value that goes into a statement's text passes through here or a dialect.
import type Long from 'long';

/** Bytes as hex digits. */
export function hex(value: Uint8Array): string {
  const buf = Buffer.isBuffer(value)
    ? value
    : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return buf.toString('hex');
}

/** An integer (safe JS integer); anything else is a bug and throws. */
export function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
  return String(value);
}

/**
 * A signed 64-bit integer. Through BigInt: ten times cheaper than Long.toString(),
 * which divides Longs digit group by digit group, and this runs once per message.
 */
export function long(value: Long): string {
  return BigInt.asIntN(64, (BigInt(value.high) << 32n) | BigInt(value.low >>> 0)).toString();
}

/** A column value read back as a number (bigint columns come as decimal text). */
export function num(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' || typeof value === 'bigint') return Number(value);
  return 0;
}

/** A text column read back (NULL as ''; MySQL may hand text as bytes). */
export function str(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return '';
}

/** A bytes column read back (NULL as an empty buffer). */
export function buf(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  return Buffer.alloc(0);
}

/**
 * The sequences of a SubsPending row's `pending` / `acks` column: the reference
 * writes them as a JSON array of numbers (Go's json.Marshal of a []uint64).
 */
export function encodeSeqs(seqs: Iterable<number>): Buffer {
  return Buffer.from(`[${[...seqs].join(',')}]`, 'utf8');
}

export function decodeSeqs(value: unknown): number[] {
  const b = buf(value);
  if (b.length === 0) return [];
  const parsed: unknown = JSON.parse(b.toString('utf8'));
  if (parsed === null) return [];
  if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'number')) {
    throw new Error('sql: a SubsPending row holds something else than a list of sequences');
  }
  return parsed;
}
