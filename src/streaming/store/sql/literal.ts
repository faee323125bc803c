// SQL literals for the batched write transaction. One flush is one multi-statement
// text sent with the simple query protocol: that is a single round trip for the whole
// transaction, which bind parameters cannot give (they take one statement per round
// trip with `pg`). Every value that goes into that text passes through here. Strings
// are written as E'...' (escape syntax), whose meaning does not depend on the
// server's standard_conforming_strings setting.

/** A text literal. PostgreSQL text cannot hold NUL: it is refused, never truncated. */
export function text(value: string): string {
  if (value.includes('\0')) throw new Error('a NUL character cannot be stored in PostgreSQL');
  return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** A bytea literal in hex form. */
export function bytea(value: Uint8Array): string {
  const buf = Buffer.isBuffer(value)
    ? value
    : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  // E'\\x...' is the text \x..., bytea's hex input form.
  return `E'\\\\x${buf.toString('hex')}'`;
}

/** An integer (safe JS integer); anything else is a bug and throws. */
export function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
  return String(value);
}

/** A signed 64-bit integer given as its decimal text (Long.toString()). */
export function bigint(decimal: string): string {
  if (!/^-?[0-9]{1,19}$/.test(decimal)) throw new Error(`not a 64-bit integer: ${decimal}`);
  return decimal;
}

export function bool(value: boolean): string {
  return value ? 'true' : 'false';
}
