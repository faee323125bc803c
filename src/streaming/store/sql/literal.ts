// SQL literals for the batched write transaction. One flush is one multi-statement
// text sent with the simple query protocol: that is a single round trip for the whole
// transaction, which bind parameters cannot give (they take one statement per round
// trip with `pg`). Every value that goes into that text passes through here. Strings
// are written as E'...' (escape syntax), whose meaning does not depend on the
// server's standard_conforming_strings setting.
import type Long from 'long';

/** A text literal. PostgreSQL text cannot hold NUL: it is refused, never truncated. */
export function text(value: string): string {
  if (value.includes('\0')) throw new Error('a NUL character cannot be stored in PostgreSQL');
  return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** Bytes as hex digits. */
export function hex(value: Uint8Array): string {
  const buf = Buffer.isBuffer(value)
    ? value
    : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return buf.toString('hex');
}

/** A bytea literal in hex form. */
export function bytea(value: Uint8Array): string {
  // E'\\x...' is the text \x..., bytea's hex input form.
  return `E'\\\\x${hex(value)}'`;
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

export function bool(value: boolean): string {
  return value ? 'true' : 'false';
}

/**
 * An array literal of integers (numbers, or decimal texts from long()), for
 * `unnest(...)`: one string constant however many rows, which PostgreSQL parses far
 * faster than a VALUES list of as many rows.
 */
export function intArray(values: readonly (number | string)[], type: 'int' | 'bigint'): string {
  return `'{${values.join(',')}}'::${type}[]`;
}
