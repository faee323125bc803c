// The error texts of Go's encoding/json (Go 1.19, as nats-server 2.9.10 is built with) for
// request bodies the reference reads with json.Unmarshal and whose error it sends back as
// is, as MSG.NEXT's `400 Bad Request - <error>`: its scanner's syntax errors, and the
// type errors of a top-level object decoded into a struct.

const UNEXPECTED_END = 'unexpected end of JSON input';
/** The scanner's answer after a comma: another member or element follows. */
const MORE = ',';

/** The scanner's quoteChar: a byte as `'x'`, with Go's escapes for the unprintable. */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  const named: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v' };
  const more: Record<number, string> = { 12: '\\f', 13: '\\r', 0x5c: '\\\\' };
  const s = named[c] ?? more[c];
  if (s !== undefined) return `'${s}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  // strconv.Quote writes the unprintable runes of U+0080..U+00FF as \u escapes.
  if ((c >= 0x80 && c <= 0xa0) || c === 0xad) return `'\\u00${c.toString(16)}'`;
  // A byte of 0x80 and up is read as the rune of the same number (Latin-1).
  return `'${String.fromCharCode(c)}'`;
}

function invalid(c: number, context: string): string {
  return `invalid character ${quoteChar(c)} ${context}`;
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean =>
  isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** A raw top-level member of an object: its key (unescaped) and its value's bytes. */
export interface RawMember {
  key: string;
  raw: string;
}

/**
 * Checks `b` as Go's checkValid does; returns Go's error text, or the top-level object's
 * members (empty when the value is not an object) when it is valid JSON.
 */
export function goJsonCheck(b: Buffer): string | RawMember[] {
  let i = 0;
  const n = b.length;
  const members: RawMember[] = [];
  const skip = (): void => {
    while (i < n && isSpace(b[i]!)) i++;
  };
  /** A string starting at i (an opening quote); its end, or an error text. */
  const string = (): string | null => {
    i++;
    while (i < n) {
      const c = b[i]!;
      if (c === 0x22) {
        i++;
        return null;
      }
      if (c < 0x20) return invalid(c, 'in string literal');
      if (c === 0x5c) {
        i++;
        if (i >= n) return UNEXPECTED_END;
        const e = b[i]!;
        if (e === 0x75) {
          for (let k = 1; k <= 4; k++) {
            if (i + k >= n) return UNEXPECTED_END;
            if (!isHex(b[i + k]!)) return invalid(b[i + k]!, 'in \\u hexadecimal character escape');
          }
          i += 5;
          continue;
        }
        if (!'"\\/bfnrt'.includes(String.fromCharCode(e)))
          return invalid(e, 'in string escape code');
        i++;
        continue;
      }
      i++;
    }
    return UNEXPECTED_END;
  };
  const literal = (word: string): string | null => {
    for (let k = 1; k < word.length; k++) {
      if (i + k >= n) return UNEXPECTED_END;
      if (b[i + k] !== word.charCodeAt(k))
        return invalid(b[i + k]!, `in literal ${word} (expecting '${word[k]!}')`);
    }
    i += word.length;
    return null;
  };
  const number = (): string | null => {
    if (b[i] === 0x2d) {
      i++;
      if (i >= n) return UNEXPECTED_END;
      if (!isDigit(b[i]!)) return invalid(b[i]!, 'in numeric literal');
    }
    if (b[i] === 0x30) i++;
    else while (i < n && isDigit(b[i]!)) i++;
    if (i < n && b[i] === 0x2e) {
      i++;
      if (i >= n) return UNEXPECTED_END;
      if (!isDigit(b[i]!)) return invalid(b[i]!, 'after decimal point in numeric literal');
      while (i < n && isDigit(b[i]!)) i++;
    }
    if (i < n && (b[i] === 0x65 || b[i] === 0x45)) {
      i++;
      if (i < n && (b[i] === 0x2b || b[i] === 0x2d)) i++;
      if (i >= n) return UNEXPECTED_END;
      if (!isDigit(b[i]!)) return invalid(b[i]!, 'in exponent of numeric literal');
      while (i < n && isDigit(b[i]!)) i++;
    }
    return null;
  };
  /**
   * After a member or element: MORE after a comma, null after the closing `close`, or
   * the error text (`context` says where the scanner was).
   */
  const separator = (close: number, context: string): string | null => {
    skip();
    if (i >= n) return UNEXPECTED_END;
    const c = b[i++]!;
    if (c === 0x2c) return MORE;
    if (c === close) return null;
    return invalid(c, context);
  };
  /** A value at i (after spaces); `depth` 0 is the top level. */
  const value = (depth: number): string | null => {
    skip();
    if (i >= n) return UNEXPECTED_END;
    const c = b[i]!;
    if (c === 0x7b) return object(depth);
    if (c === 0x5b) return array(depth);
    if (c === 0x22) return string();
    if (c === 0x74) return literal('true');
    if (c === 0x66) return literal('false');
    if (c === 0x6e) return literal('null');
    if (c === 0x2d || isDigit(c)) return number();
    return invalid(c, 'looking for beginning of value');
  };
  const object = (depth: number): string | null => {
    i++;
    skip();
    if (i >= n) return UNEXPECTED_END;
    if (b[i] === 0x7d) {
      i++;
      return null;
    }
    for (;;) {
      skip();
      if (i >= n) return UNEXPECTED_END;
      if (b[i] !== 0x22) return invalid(b[i]!, 'looking for beginning of object key string');
      const keyStart = i;
      const err = string();
      if (err !== null) return err;
      const key = b.toString('utf8', keyStart, i);
      skip();
      if (i >= n) return UNEXPECTED_END;
      if (b[i] !== 0x3a) return invalid(b[i]!, 'after object key');
      i++;
      skip();
      const valueStart = i;
      const verr = value(depth + 1);
      if (verr !== null) return verr;
      if (depth === 0)
        members.push({ key: JSON.parse(key) as string, raw: b.toString('utf8', valueStart, i) });
      const next = separator(0x7d, 'after object key:value pair');
      if (next !== MORE) return next;
    }
  };
  const array = (depth: number): string | null => {
    i++;
    skip();
    if (i >= n) return UNEXPECTED_END;
    if (b[i] === 0x5d) {
      i++;
      return null;
    }
    for (;;) {
      const err = value(depth + 1);
      if (err !== null) return err;
      const next = separator(0x5d, 'after array element');
      if (next !== MORE) return next;
    }
  };
  const err = value(0);
  if (err !== null) return err;
  skip();
  if (i < n) return invalid(b[i]!, 'after top-level value');
  return members;
}

/** A Go struct field's type, for the type errors of a decode into it. */
export type GoFieldType = 'int' | 'time.Duration' | 'bool';

const INT64_LIMIT = 2n ** 63n;

/** What Go's decoder calls a raw value it cannot store in `type` ('' when it can). */
function mismatch(raw: string, type: GoFieldType): string {
  const c = raw.charAt(0);
  if (c === 'n') return '';
  if (c === '"') return 'string';
  if (c === '[') return 'array';
  if (c === '{') return 'object';
  if (c === 't' || c === 'f') return type === 'bool' ? '' : 'bool';
  if (type === 'bool') return 'number';
  if (!/^-?\d+$/.test(raw)) return `number ${raw}`;
  const v = BigInt(raw);
  return v >= INT64_LIMIT || v < -INT64_LIMIT ? `number ${raw}` : '';
}

/**
 * The first UnmarshalTypeError of decoding `members` into Go struct `struct` whose JSON
 * fields are `fields`, or null: keys match case-insensitively, unknown keys are skipped.
 */
export function goTypeError(
  members: readonly RawMember[],
  struct: string,
  fields: Readonly<Record<string, GoFieldType>>,
): string | null {
  for (const m of members) {
    const name = Object.keys(fields).find((f) => f.toLowerCase() === m.key.toLowerCase());
    if (name === undefined) continue;
    const type = fields[name]!;
    const got = mismatch(m.raw, type);
    if (got !== '')
      return `json: cannot unmarshal ${got} into Go struct field ${struct}.${name} of type ${type}`;
  }
  return null;
}
