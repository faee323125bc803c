// The error texts of Go's encoding/json (Go 1.19, as nats-server 2.9.10 is built with) for
// request bodies the reference reads with json.Unmarshal and whose error it sends back as
// is, as MSG.NEXT's `400 Bad Request - <error>`: its scanner's syntax errors, and the
// type errors of a top-level object decoded into a struct.

const UNEXPECTED_END = 'unexpected end of JSON input';

/** strconv.Quote's named escapes. */
const NAMED_ESCAPES: Readonly<Record<number, string>> = {
  7: '\\a',
  8: '\\b',
  9: '\\t',
  10: '\\n',
  11: '\\v',
  12: '\\f',
  13: '\\r',
  0x5c: '\\\\',
};

/** The scanner's quoteChar: a byte as `'x'`, with Go's escapes for the unprintable. */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  const s = NAMED_ESCAPES[c];
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

/** Go's maxNestingDepth: deeper bodies are a syntax error, not a deeper recursion. */
const MAX_DEPTH = 10000;
const OBJECT_END = 0x7d;
const ARRAY_END = 0x5d;

/**
 * Checks `b` as Go's checkValid does; returns Go's error text, or the top-level object's
 * members (empty when the value is not an object) when it is valid JSON. Iterative, with
 * the open containers on a stack, so that no body can overflow the call stack.
 */
export function goJsonCheck(b: Buffer): string | RawMember[] {
  let i = 0;
  const n = b.length;
  const members: RawMember[] = [];
  /** The closing byte of each open object or array, outermost first. */
  const open: number[] = [];
  /** A top-level member whose value is being read: its key and where the value starts. */
  let key = '';
  let valueStart = -1;
  const skip = (): void => {
    while (i < n && isSpace(b[i]!)) i++;
  };
  /** A string starting at i (an opening quote); null at its end, or an error text. */
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
  /** An object's key at i (after spaces) and its colon; notes a top-level member's. */
  const memberKey = (): string | null => {
    skip();
    if (i >= n) return UNEXPECTED_END;
    if (b[i] !== 0x22) return invalid(b[i]!, 'looking for beginning of object key string');
    const keyStart = i;
    const err = string();
    if (err !== null) return err;
    const text = b.toString('utf8', keyStart, i);
    skip();
    if (i >= n) return UNEXPECTED_END;
    if (b[i] !== 0x3a) return invalid(b[i]!, 'after object key');
    i++;
    if (open.length === 1) {
      key = JSON.parse(text) as string;
      skip();
      valueStart = i;
    }
    return null;
  };
  for (;;) {
    // A value at i (after spaces).
    skip();
    if (i >= n) return UNEXPECTED_END;
    const c = b[i]!;
    let err: string | null = null;
    let opened = false;
    if (c === 0x7b || c === 0x5b) {
      if (open.length >= MAX_DEPTH) return invalid(c, 'exceeded max depth');
      const end = c === 0x7b ? OBJECT_END : ARRAY_END;
      i++;
      open.push(end);
      skip();
      if (i >= n) return UNEXPECTED_END;
      if (b[i] === end) {
        i++;
        open.pop();
      } else {
        opened = true;
        if (end === OBJECT_END) err = memberKey();
      }
    } else if (c === 0x22) err = string();
    else if (c === 0x74) err = literal('true');
    else if (c === 0x66) err = literal('false');
    else if (c === 0x6e) err = literal('null');
    else if (c === 0x2d || isDigit(c)) err = number();
    else return invalid(c, 'looking for beginning of value');
    if (err !== null) return err;
    if (opened) continue;
    // A value ended: close what it ends, until a comma asks for the next value.
    for (;;) {
      if (open.length === 0) {
        skip();
        if (i < n) return invalid(b[i]!, 'after top-level value');
        return members;
      }
      if (open.length === 1 && valueStart >= 0) {
        members.push({ key, raw: b.toString('utf8', valueStart, i) });
        valueStart = -1;
      }
      const end = open[open.length - 1]!;
      skip();
      if (i >= n) return UNEXPECTED_END;
      const s = b[i++]!;
      if (s === 0x2c) {
        if (end === OBJECT_END) {
          const kerr = memberKey();
          if (kerr !== null) return kerr;
        }
        break;
      }
      if (s !== end) {
        return invalid(
          s,
          end === OBJECT_END ? 'after object key:value pair' : 'after array element',
        );
      }
      open.pop();
    }
  }
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

/** The struct field a JSON key fills: Go matches keys case-insensitively. */
export function goField(
  fields: Readonly<Record<string, GoFieldType>>,
  key: string,
): string | undefined {
  const lower = key.toLowerCase();
  for (const f in fields) if (f.toLowerCase() === lower) return f;
  return undefined;
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
    const name = goField(fields, m.key);
    if (name === undefined) continue;
    const type = fields[name]!;
    const got = mismatch(m.raw, type);
    if (got !== '')
      return `json: cannot unmarshal ${got} into Go struct field ${struct}.${name} of type ${type}`;
  }
  return null;
}
