// Durations in config files are strings in Go's time.ParseDuration syntax ("2m",
// "1h30m", "500ms", "1.5s"); an integer is read as seconds, as the reference
// server's parseDuration does for backward compatibility (with a warning).

import { ConfigError, type ConfValue } from './values.js';

/** A string that Go's time.ParseDuration refuses; the message is Go's. */
export class DurationError extends Error {
  override readonly name = 'DurationError';
}

const NS_PER: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n], // U+00B5 micro sign
  ['\u03bcs', 1_000n], // U+03BC Greek small letter mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const LIMIT = 1n << 63n;
const INT64_MAX = LIMIT - 1n;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/**
 * Go's time.ParseDuration, in milliseconds (fractional below 1ms): a sequence of
 * decimal numbers with units ns, us (or µs), ms, s, m, h and an optional sign.
 */
export function parseGoDuration(text: string): number {
  const invalid = (): DurationError =>
    new DurationError(`time: invalid duration ${JSON.stringify(text)}`);
  let s = text;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw invalid();
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]))) throw invalid();
    let i = 0;
    while (isDigit(s[i])) i++;
    const whole = s.slice(0, i);
    if (whole !== '' && BigInt(whole) > LIMIT) throw invalid();
    let intPart = whole === '' ? 0n : BigInt(whole);
    // Like Go: fraction digits are kept while they fit in an int64, then ignored.
    let fraction = 0n;
    let scale = 1;
    let fractionDigits = 0;
    if (s[i] === '.') {
      let full = false;
      for (i++; isDigit(s[i]); i++, fractionDigits++) {
        const next = fraction * 10n + BigInt(s.charCodeAt(i) - 0x30);
        full ||= next > INT64_MAX;
        if (full) continue;
        fraction = next;
        scale *= 10;
      }
    }
    if (whole === '' && fractionDigits === 0) throw invalid(); // "." alone, or ".s"
    s = s.slice(i);
    let u = 0;
    while (u < s.length && s[u] !== '.' && !isDigit(s[u])) u++;
    const unitName = s.slice(0, u);
    s = s.slice(u);
    if (unitName === '') {
      throw new DurationError(`time: missing unit in duration ${JSON.stringify(text)}`);
    }
    const unit = NS_PER.get(unitName);
    if (unit === undefined) {
      throw new DurationError(
        `time: unknown unit ${JSON.stringify(unitName)} in duration ${JSON.stringify(text)}`,
      );
    }
    if (intPart > LIMIT / unit) throw invalid();
    intPart *= unit;
    if (fraction > 0n) {
      // Like Go: the fraction goes through float64 arithmetic.
      intPart += BigInt(Math.trunc(Number(fraction) * (Number(unit) / scale)));
      if (intPart > LIMIT) throw invalid();
    }
    total += intPart;
    if (total > LIMIT) throw invalid();
  }
  if (!negative && total > INT64_MAX) throw invalid();
  const ns = negative ? -total : total;
  return Number(ns) / 1e6;
}

/**
 * A duration option in milliseconds. A string is parsed as a Go duration; an
 * integer is a number of seconds and `onWarning` hears the reference's warning
 * ("<key> should be converted to a duration"). Throws ConfigError with the value's
 * position ("error parsing <key>: time: invalid duration ...") otherwise.
 */
export function parseDuration(
  value: ConfValue,
  key: string,
  onWarning?: (warning: ConfigError) => void,
): number {
  switch (value.kind) {
    case 'string':
      try {
        return parseGoDuration(value.value);
      } catch (err) {
        if (!(err instanceof DurationError)) throw err;
        throw new ConfigError(value, `error parsing ${key}: ${err.message}`);
      }
    case 'int':
      onWarning?.(new ConfigError(value, `${key} should be converted to a duration`));
      return value.value * 1000;
    case 'float':
    case 'bool':
    case 'datetime':
    case 'array':
    case 'map':
      throw new ConfigError(
        value,
        `error parsing ${key}: expected a duration string such as "2m" or an integer number of seconds, got a ${value.kind}`,
      );
  }
}
