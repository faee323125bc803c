// The reference server's config file language (nats-server 2.9.10, package `conf`,
// parse.go): turns the lexer's items into a tree of positioned values, resolves
// `$VAR` references and `include` files. Everything an operator's existing file
// means to nats-server it means here, including the surprising cases, which are
// marked "reference:"; the few deliberate differences are marked "deviation:".

import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

import { foldCase, lex, type Item } from './lexer.js';
import {
  ConfigError,
  type ConfDatetime,
  type ConfEntry,
  type ConfInt,
  type ConfMap,
  type ConfPosition,
  type ConfValue,
} from './values.js';

export * from './values.js';
export { DurationError, parseDuration, parseGoDuration } from './duration.js';

/**
 * Parses a config file. Includes are read relative to the including file's
 * directory. `env` (default process.env) resolves `$VAR` references that no
 * enclosing map defines. Throws ConfigError.
 */
export function parseConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): ConfMap {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const reason = describeFsError(err, path);
    throw new ConfigError({ file: path, line: 0, col: 0 }, reason, reason, { cause: err });
  }
  return parseText(text, path, { env, includes: [realOrResolved(path)], envRefs: [] });
}

/**
 * Parses config text as if read from `filename` (used in positions, and its
 * directory anchors includes). Throws ConfigError.
 */
export function parseConfigText(
  text: string,
  filename: string,
  env: NodeJS.ProcessEnv = process.env,
): ConfMap {
  return parseText(text, filename, { env, includes: [], envRefs: [] });
}

/** State shared by one top-level parse and the parses it starts. */
interface Session {
  readonly env: NodeJS.ProcessEnv;
  /** Files being parsed, outermost first, to refuse an include cycle. */
  readonly includes: string[];
  /** Environment variables being expanded, to refuse a reference cycle. */
  readonly envRefs: string[];
}

/** Maps offsets to 1-based lines and columns; lines end at '\n' as in the reference. */
class LineIndex {
  private readonly starts: number[] = [0];

  constructor(
    readonly file: string,
    text: string,
  ) {
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
      this.starts.push(i + 1);
    }
  }

  at(offset: number): ConfPosition {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { file: this.file, line: lo + 1, col: offset - this.starts[lo]! + 1 };
  }
}

type Frame =
  | { readonly kind: 'map'; readonly entries: Map<string, ConfEntry>; readonly at: ConfPosition }
  | { readonly kind: 'array'; readonly items: ConfValue[]; readonly at: ConfPosition };

interface PendingKey {
  readonly name: string;
  readonly at: ConfPosition;
}

function position(at: ConfPosition): ConfPosition {
  return { file: at.file, line: at.line, col: at.col };
}

/** The same value, placed where it is referenced. */
function movedTo(value: ConfValue, at: ConfPosition): ConfValue {
  return { ...value, file: at.file, line: at.line, col: at.col };
}

/** An error in a value; the reference prints these without a position. */
function valueError(at: ConfPosition, reason: string): ConfigError {
  return new ConfigError(at, reason, reason);
}

function internal(at: ConfPosition, what: string): ConfigError {
  return new ConfigError(at, `internal parser error: ${what}`);
}

function parseText(text: string, file: string, session: Session): ConfMap {
  const lines = new LineIndex(file, text);
  const root: Frame = { kind: 'map', entries: new Map(), at: { file, line: 1, col: 1 } };
  // The open maps and arrays, innermost last; like the reference, keys wait on their
  // own stack until a value arrives for them.
  const frames: Frame[] = [root];
  const keys: PendingKey[] = [];
  const rootMap: ConfMap = { kind: 'map', value: root.entries, ...root.at };

  const setValue = (value: ConfValue, at: ConfPosition, included?: ConfEntry): void => {
    const top = frames[frames.length - 1]!;
    if (top.kind === 'array') {
      top.items.push(value);
      return;
    }
    const key = keys.pop();
    if (key === undefined) throw internal(at, 'value without a key');
    const entry = included ?? { key: key.name, value, ...key.at, usedAsVariable: false };
    // Redefinition: the last one wins, and takes the last place in the order.
    top.entries.delete(key.name);
    top.entries.set(key.name, entry);
  };

  const closeFrame = <K extends Frame['kind']>(kind: K, at: ConfPosition): Frame & { kind: K } => {
    const top = frames[frames.length - 1]!;
    if (frames.length < 2 || top.kind !== kind) throw internal(at, `unbalanced ${kind}`);
    frames.pop();
    return top as Frame & { kind: K };
  };

  const lookupVariable = (name: string, at: ConfPosition): ConfValue => {
    // reference: an unquoted bcrypt hash ($2a$...) is a string, not a reference.
    if (name.startsWith('2a$')) return { kind: 'string', value: `$${name}`, ...at };
    // Enclosing maps, innermost first; arrays are not scopes.
    for (let i = frames.length - 1; i >= 0; i--) {
      const frame = frames[i]!;
      if (frame.kind !== 'map') continue;
      const entry = frame.entries.get(name);
      if (entry !== undefined) {
        entry.usedAsVariable = true;
        return movedTo(entry.value, at);
      }
    }
    const fromEnv = environmentValue(name, at, session);
    if (fromEnv !== undefined) return movedTo(fromEnv, at);
    throw new ConfigError(
      at,
      `variable reference for '${name}' can not be found`,
      `variable reference for '${name}' on line ${at.line} can not be found`,
    );
  };

  for (const item of lex(text)) {
    const at = lines.at(item.offset);
    switch (item.type) {
      case 'eof':
        // reference: values still open here (a map or array cut short by an empty
        // unterminated string at the very end) are dropped without an error.
        return rootMap;
      case 'error':
        throw new ConfigError(at, item.val, `Parse error on line ${at.line}: '${item.val}'`);
      case 'key':
        keys.push({ name: item.val, at });
        break;
      case 'mapStart':
        frames.push({ kind: 'map', entries: new Map(), at });
        break;
      case 'mapEnd': {
        const frame = closeFrame('map', at);
        setValue({ kind: 'map', value: frame.entries, ...frame.at }, at);
        break;
      }
      case 'arrayStart':
        frames.push({ kind: 'array', items: [], at });
        break;
      case 'arrayEnd': {
        const frame = closeFrame('array', at);
        setValue({ kind: 'array', value: frame.items, ...frame.at }, at);
        break;
      }
      case 'string':
        setValue({ kind: 'string', value: item.val, ...at }, at);
        break;
      case 'bool':
        setValue({ kind: 'bool', value: parseBool(item, at), ...at }, at);
        break;
      case 'integer': {
        const value = parseInteger(item, at);
        // reference: an unknown size suffix (1kbb) sets nothing, and the key stays
        // pending; the next value in the same map takes the most recent key.
        if (value !== null) setValue(value, at);
        break;
      }
      case 'float':
        setValue({ kind: 'float', value: parseFloat64(item, at), ...at }, at);
        break;
      case 'datetime':
        setValue(parseDatetime(item, at), at);
        break;
      case 'variable':
        setValue(lookupVariable(item.val, at), at);
        break;
      case 'include': {
        const included = parseInclude(goJoin(dirname(file), item.val), item.val, at, session);
        // The included file's top-level entries land in the current map, with their
        // own positions; later `$VAR` references can use them.
        for (const entry of included.value.values()) {
          keys.push({ name: entry.key, at: position(entry) });
          setValue(entry.value, at, entry);
        }
        break;
      }
    }
  }
  throw internal(lines.at(text.length), 'input ended without an end item');
}

/** Reads and parses an included file; `target` is joined to the including directory. */
function parseInclude(
  target: string,
  written: string,
  at: ConfPosition,
  session: Session,
): ConfMap {
  const prefix = `error parsing include file '${written}', `;
  let text: string;
  try {
    text = readFileSync(target, 'utf8');
  } catch (err) {
    const reason = prefix + describeFsError(err, target);
    throw new ConfigError(at, reason, reason, { cause: err });
  }
  const real = realOrResolved(target);
  if (session.includes.includes(real) || session.includes.length >= MAX_INCLUDE_DEPTH) {
    // deviation: the reference recurses until its stack overflows.
    const chain = [...session.includes, real].join(' -> ');
    const reason = `${prefix}include cycle or nesting too deep: ${chain}`;
    throw new ConfigError(at, reason, reason);
  }
  session.includes.push(real);
  try {
    return parseText(text, target, session);
  } catch (err) {
    // The position stays the innermost one; the reference text gets the include prefix.
    if (err instanceof ConfigError) {
      throw new ConfigError(err, err.reason, prefix + err.reference, { cause: err });
    }
    throw err;
  } finally {
    session.includes.pop();
  }
}

const MAX_INCLUDE_DEPTH = 64;

/**
 * Go's filepath.Join: joined and cleaned, without a trailing slash. reference: an
 * absolute include path is joined to the directory too ("/etc/x.conf" from
 * /srv/nats.conf reads /srv/etc/x.conf).
 */
function goJoin(dir: string, name: string): string {
  const joined = join(dir, name);
  return joined.length > 1 && joined.endsWith(sep) ? joined.slice(0, -1) : joined;
}

/** Name under which a file is tracked for include cycles. */
function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * A variable from the environment, parsed as the value of a config entry
 * ("pk=" + text, as the reference does), so "22" is an integer and "a b" an error.
 */
function environmentValue(name: string, at: ConfPosition, session: Session): ConfValue | undefined {
  const { env } = session;
  const text = Object.hasOwn(env, name) ? env[name] : undefined;
  if (name === '' || text === undefined) return undefined;
  const prefix = `variable reference for '${name}'`;
  if (session.envRefs.includes(name)) {
    // deviation: the reference (before 2.12) recurses until its stack overflows.
    const reason = `variable reference cycle for '${name}'`;
    throw new ConfigError(at, `${prefix} could not be parsed: ${reason}`);
  }
  session.envRefs.push(name);
  try {
    return parseText(`pk=${text}`, `$${name}`, session).value.get('pk')?.value;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(
      at,
      `${prefix} could not be parsed: ${err.reason}`,
      `${prefix} on line ${at.line} could not be parsed: ${err.reference}`,
      { cause: err },
    );
  } finally {
    session.envRefs.pop();
  }
}

/** Go's wording for the file errors a config file meets. */
function describeFsError(err: unknown, path: string): string {
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  switch (code) {
    case 'ENOENT':
      return `open ${path}: no such file or directory`;
    case 'EACCES':
      return `open ${path}: permission denied`;
    case 'ENOTDIR':
      return `open ${path}: not a directory`;
    case 'EISDIR':
      return `read ${path}: is a directory`;
    default:
      return `open ${path}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function parseBool(item: Item, at: ConfPosition): boolean {
  switch (foldCase(item.val)) {
    case 'true':
    case 'yes':
    case 'on':
      return true;
    case 'false':
    case 'no':
    case 'off':
      return false;
  }
  throw valueError(at, `expected boolean value, but got '${item.val}'`);
}

const K = 1000n;
const KI = 1024n;
/** Size suffixes: k, m, g, t, p, e are powers of 1000; with b, i or ib, of 1024. */
const MULTIPLIERS: ReadonlyMap<string, bigint> = new Map(
  ['', 'k', 'm', 'g', 't', 'p', 'e'].flatMap((letter, power) => {
    const p = BigInt(power);
    const entries: [string, bigint][] = [[letter, K ** p]];
    if (letter !== '') {
      for (const tail of ['b', 'i', 'ib']) entries.push([letter + tail, KI ** p]);
    }
    return entries;
  }),
);

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** An integer with an optional size suffix; null for a suffix the reference ignores. */
function parseInteger(item: Item, at: ConfPosition): ConfInt | null {
  const raw = item.val;
  // Only non-ASCII digits can be non-ASCII here, and Go's ParseInt refuses them.
  if (/\P{ASCII}/u.test(raw)) throw valueError(at, `expected integer, but got '${raw}'`);
  const digits = /^[-0-9]*/.exec(raw)![0];
  if (!/^-?[0-9]+$/.test(digits)) throw valueError(at, `expected integer, but got '${raw}'`);
  const num = BigInt(digits);
  if (num < INT64_MIN || num > INT64_MAX) {
    throw valueError(at, `integer '${raw}' is out of the range`);
  }
  const multiplier = MULTIPLIERS.get(raw.slice(digits.length).trim().toLowerCase());
  if (multiplier === undefined) return null;
  // Wraps on overflow like the reference's int64 arithmetic (8EB is negative there).
  const big = BigInt.asIntN(64, num * multiplier);
  return { kind: 'int', value: Number(big), big, raw, ...at };
}

function parseFloat64(item: Item, at: ConfPosition): number {
  if (!/^-?[0-9]+\.[0-9]+$/.test(item.val)) {
    throw valueError(at, `expected float, but got '${item.val}'`);
  }
  const value = Number(item.val);
  if (!Number.isFinite(value)) throw valueError(at, `float '${item.val}' is out of the range`);
  return value;
}

/** Go's time.Parse with layout 2006-01-02T15:04:05Z, which checks every field's range. */
function parseDatetime(item: Item, at: ConfPosition): ConfDatetime {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/.exec(item.val);
  const [year, month, day, hour, minute, second] = (m?.slice(1) ?? []).map(Number);
  if (
    year === undefined ||
    month === undefined ||
    day === undefined ||
    hour === undefined ||
    minute === undefined ||
    second === undefined ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysIn(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    throw valueError(at, `expected Zulu formatted DateTime, but got '${item.val}'`);
  }
  const date = new Date(0);
  // setUTCFullYear keeps years 0-99 as written (Date.UTC would move them to 19xx).
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return { kind: 'datetime', value: date, ...at };
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
