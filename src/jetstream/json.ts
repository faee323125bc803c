// Reads API request JSON the way nats-server's encoding/json does into its typed
// structs: keys match case-insensitively, null leaves a field at its zero value, and any
// value of the wrong type (a string for a number, 1.5 for an integer, -1 for an unsigned
// one, a number past its type's range) fails the whole request with "invalid JSON".

import { goEscapes } from '../monitor/format.js';
import { parseRfc3339 } from './time.js';

export class JsonFields {
  private readonly fields = new Map<string, unknown>();
  /** False once any field had the wrong type. */
  ok = true;

  constructor(obj: Record<string, unknown>) {
    for (const key of Object.keys(obj)) this.fields.set(key.toLowerCase(), obj[key]);
  }

  /** Parses a request body into fields; null when it is not a JSON object (or null). */
  static parse(body: Buffer): JsonFields | null {
    let v: unknown;
    try {
      v = JSON.parse(body.toString('utf8'));
    } catch {
      return null;
    }
    if (v === null) return new JsonFields({});
    if (typeof v !== 'object' || Array.isArray(v)) return null;
    return new JsonFields(v as Record<string, unknown>);
  }

  has(key: string): boolean {
    const v = this.fields.get(key);
    return v !== undefined && v !== null;
  }

  raw(key: string): unknown {
    return this.fields.get(key);
  }

  str(key: string, def = ''): string {
    const v = this.fields.get(key);
    if (v === undefined || v === null) return def;
    if (typeof v !== 'string') {
      this.ok = false;
      return def;
    }
    return v;
  }

  bool(key: string): boolean {
    const v = this.fields.get(key);
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') {
      this.ok = false;
      return false;
    }
    return v;
  }

  /** A signed integer of `bits` bits (64: Go's int64 and int, and time.Duration). */
  int(key: string, bits = 64): number {
    const v = this.fields.get(key);
    if (v === undefined || v === null) return 0;
    const limit = 2 ** (bits - 1);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < -limit || v >= limit) {
      this.ok = false;
      return 0;
    }
    return v;
  }

  uint(key: string): number {
    const v = this.fields.get(key);
    if (v === undefined || v === null) return 0;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= 2 ** 64) {
      this.ok = false;
      return 0;
    }
    return v;
  }

  strList(key: string): string[] {
    const v = this.fields.get(key);
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) {
      this.ok = false;
      return [];
    }
    return v;
  }

  intList(key: string): number[] {
    const v = this.fields.get(key);
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || !v.every((n) => typeof n === 'number' && Number.isInteger(n))) {
      this.ok = false;
      return [];
    }
    return v as number[];
  }

  /** A nested object, or null when absent; a non-object fails. */
  obj(key: string): JsonFields | null {
    const v = this.fields.get(key);
    if (v === undefined || v === null) return null;
    if (typeof v !== 'object' || Array.isArray(v)) {
      this.ok = false;
      return null;
    }
    return new JsonFields(v as Record<string, unknown>);
  }

  /** An RFC 3339 time as nanoseconds since the epoch, or null when absent or invalid. */
  time(key: string): number | null {
    const v = this.fields.get(key);
    if (v === undefined || v === null) return null;
    const ns = typeof v === 'string' ? parseRfc3339(v) : null;
    if (ns === null) this.ok = false;
    return ns;
  }
}

/**
 * JSON as the reference's encoding/json (Go 1.19) writes it: `<`, `>`, `&`, U+2028 and
 * U+2029 as \u escapes (so a stream's `a.>` goes out as `a.\u003e`), and backspace and
 * form feed as \u0008 and \u000c.
 */
export function goJson(value: unknown): string {
  return goEscapes(JSON.stringify(value));
}
