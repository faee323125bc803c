// The parsed form of a config file: every value knows the file, line and column it
// came from, so the options layer can report "file:line:col: key: problem" the way
// the reference server does.

import { foldCase } from './lex-core.js';

export interface ConfPosition {
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  /**
   * 1-based column, in UTF-16 code units. The reference counts bytes and reports
   * its first line 0-based; its other lines agree with this for ASCII text.
   */
  readonly col: number;
}

export interface ConfString extends ConfPosition {
  readonly kind: 'string';
  readonly value: string;
}

export interface ConfInt extends ConfPosition {
  readonly kind: 'int';
  /** The value as a JS number (exact up to 2^53). */
  readonly value: number;
  /** The exact 64-bit value, wrapped on overflow as the reference's int64 is. */
  readonly big: bigint;
  /** The text as written, e.g. "64KB". */
  readonly raw: string;
}

export interface ConfFloat extends ConfPosition {
  readonly kind: 'float';
  readonly value: number;
}

export interface ConfBool extends ConfPosition {
  readonly kind: 'bool';
  readonly value: boolean;
}

/** An unquoted ISO 8601 Zulu datetime, 2016-05-04T18:53:41Z. */
export interface ConfDatetime extends ConfPosition {
  readonly kind: 'datetime';
  readonly value: Date;
}

export interface ConfArray extends ConfPosition {
  readonly kind: 'array';
  readonly value: readonly ConfValue[];
}

/** A map; entries keep the order in which their final definition appears. */
export interface ConfMap extends ConfPosition {
  readonly kind: 'map';
  readonly value: ReadonlyMap<string, ConfEntry>;
}

export type ConfValue =
  ConfString | ConfInt | ConfFloat | ConfBool | ConfDatetime | ConfArray | ConfMap;

export type ConfKind = ConfValue['kind'];

/** One `key: value` of a map; the position is the key's. */
export interface ConfEntry extends ConfPosition {
  /** The key exactly as written (case kept). */
  readonly key: string;
  readonly value: ConfValue;
  /**
   * Set when a `$key` reference used this entry as a variable. The reference server
   * does not report such entries as unknown fields.
   */
  usedAsVariable: boolean;
}

function locate(pos: ConfPosition): string {
  if (pos.line === 0) return pos.file;
  return `${pos.file}:${pos.line}:${pos.col}`;
}

/**
 * A config file that cannot be used: syntax errors, unknown variables, unreadable
 * includes, and the problems the options layer finds in values. The message is
 * "file:line:col: reason".
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly file: string;
  /** 1-based; 0 when the error concerns the whole file (it could not be read). */
  readonly line: number;
  readonly col: number;
  /** The problem, without the position. */
  readonly reason: string;
  /** What nats-server 2.9.10 prints for the same failure (after "nats-server: "). */
  readonly reference: string;

  constructor(at: ConfPosition, reason: string, reference?: string, options?: ErrorOptions) {
    super(`${locate(at)}: ${reason}`, options);
    this.file = at.file;
    this.line = at.line;
    this.col = at.col;
    this.reason = reason;
    this.reference = reference ?? `${locate(at)}: ${reason}`;
  }
}

/**
 * The entry for `name` in a map, matched without regard to case as the reference
 * server matches its keys (strings.ToLower). When several keys differ only in case,
 * the last one in the file wins.
 */
export function findKey(map: ConfMap, name: string): ConfEntry | undefined {
  const wanted = foldCase(name);
  let found: ConfEntry | undefined;
  for (const entry of map.value.values()) {
    if (foldCase(entry.key) === wanted) found = entry;
  }
  return found;
}

/** Key comparison the reference server uses: case-insensitive. */
export function keyMatches(key: string, name: string): boolean {
  return foldCase(key) === foldCase(name);
}

export type PlainValue = string | number | boolean | Date | PlainValue[] | PlainMap;
export interface PlainMap {
  [key: string]: PlainValue;
}

/**
 * Plain JS values, for convenience and tests. Integers become numbers (use
 * ConfInt.big beyond 2^53); positions are dropped.
 */
export function toPlain(value: ConfMap): PlainMap;
export function toPlain(value: ConfValue): PlainValue;
export function toPlain(value: ConfValue): PlainValue {
  // Iterative, so that a deeply nested file cannot overflow the call stack.
  const pending: [ConfArray | ConfMap, PlainValue[] | PlainMap][] = [];
  const convert = (v: ConfValue): PlainValue => {
    switch (v.kind) {
      case 'string':
      case 'int':
      case 'float':
      case 'bool':
        return v.value;
      case 'datetime':
        return new Date(v.value.getTime());
      case 'array': {
        const out: PlainValue[] = [];
        pending.push([v, out]);
        return out;
      }
      case 'map': {
        const out: PlainMap = {};
        pending.push([v, out]);
        return out;
      }
    }
  };
  const root = convert(value);
  for (let job = pending.pop(); job !== undefined; job = pending.pop()) {
    const [source, out] = job;
    if (source.kind === 'array' && Array.isArray(out)) {
      for (const v of source.value) out.push(convert(v));
    } else if (source.kind === 'map' && !Array.isArray(out)) {
      for (const e of source.value.values()) {
        // defineProperty, so that a key such as "__proto__" is data, not a prototype.
        Object.defineProperty(out, e.key, {
          value: convert(e.value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
  }
  return root;
}
