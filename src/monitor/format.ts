// Values written the way the reference's Go encoder writes them: times as RFC 3339
// with up to nine fraction digits (trailing zeros dropped), durations as Go's
// time.Duration.String(), uptimes as the reference's "1d2h3m4s".

import { performance } from 'node:perf_hooks';

/** Now in ms since the epoch, with sub-millisecond precision. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** `2026-11-22T00:31:51.083959Z` for a time in ms since the epoch (fraction allowed). */
export function rfc3339(ms: number): string {
  const whole = Math.floor(ms);
  const iso = new Date(whole).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const milli = whole - Math.floor(whole / 1000) * 1000;
  // Microseconds at most: below that, a double of ms since 1970 holds only noise.
  const sub = Math.min(999, Math.round((ms - whole) * 1e3)) * 1e3;
  const nanos = milli * 1e6 + sub;
  const head = iso.slice(0, iso.indexOf('.'));
  if (nanos === 0) return head + 'Z';
  return head + '.' + String(nanos).padStart(9, '0').replace(/0+$/, '') + 'Z';
}

/** The reference's myUptime: whole seconds as `5s`, `1m2s`, `3h0m1s`, `1d2h3m4s`, `1y2d…`. */
export function uptime(ms: number): string {
  const tsecs = Math.trunc(ms / 1000);
  const tmins = Math.trunc(tsecs / 60);
  const thrs = Math.trunc(tmins / 60);
  const tdays = Math.trunc(thrs / 24);
  const tyrs = Math.trunc(tdays / 365);
  if (tyrs > 0) return `${tyrs}y${tdays % 365}d${thrs % 24}h${tmins % 60}m${tsecs % 60}s`;
  if (tdays > 0) return `${tdays}d${thrs % 24}h${tmins % 60}m${tsecs % 60}s`;
  if (thrs > 0) return `${thrs}h${tmins % 60}m${tsecs % 60}s`;
  if (tmins > 0) return `${tmins}m${tsecs % 60}s`;
  return `${tsecs}s`;
}

/** An integer and its fraction below `unit`, trailing zeros dropped: 1459268 / 1e6 → `1.459268`. */
function fraction(v: number, unit: number, digits: number): string {
  const int = Math.floor(v / unit);
  const rest = v - int * unit;
  if (rest === 0) return String(int);
  return `${int}.${String(rest).padStart(digits, '0').replace(/0+$/, '')}`;
}

/** Go's time.Duration.String() for a duration in nanoseconds: `0s`, `450µs`, `1.5ms`, `2m0s`. */
export function goDuration(ns: number): string {
  let u = Math.round(Math.abs(ns));
  if (u === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  if (u < 1e3) return `${sign}${u}ns`;
  if (u < 1e6) return `${sign}${fraction(u, 1e3, 3)}µs`;
  if (u < 1e9) return `${sign}${fraction(u, 1e6, 6)}ms`;
  const h = Math.floor(u / 3.6e12);
  u -= h * 3.6e12;
  const m = Math.floor(u / 6e10);
  u -= m * 6e10;
  const hm = h > 0 ? `${h}h${m}m` : m > 0 ? `${m}m` : '';
  return `${sign}${hm}${fraction(u, 1e9, 9)}s`;
}

/** A round-trip time held in ms (-1 when never measured) as the reference prints it. */
export function rttString(ms: number): string {
  if (!(ms > 0)) return '0s';
  // The reference truncates sub-millisecond values to whole microseconds.
  const ns = ms * 1e6;
  return goDuration(ns < 1e6 ? Math.floor(ns / 1e3) * 1e3 : Math.round(ns));
}

/** Milliseconds as the nanosecond integer the reference writes for a Duration. */
export function msToNs(ms: number): number {
  return Math.round(ms * 1e6);
}

/** What Go's encoding/json writes differently from JSON.stringify (see goEscapes). */
const GO_DIFFERS = /[<>&\u2028\u2029]|\\[bf]/;
/** Escapes (consumed whole, so `\\b` stays an escaped backslash) and the characters Go escapes. */
const GO_TOKENS = /\\[\s\S]|[<>&\u2028\u2029]/g;

function goToken(t: string): string {
  if (t === '\\b') return '\\u0008';
  if (t === '\\f') return '\\u000c';
  if (t.length === 2) return t;
  return '\\u' + t.charCodeAt(0).toString(16).padStart(4, '0');
}

/**
 * JSON.stringify's text (indented or not) as Go 1.19's encoding/json writes the same
 * value: `<`, `>`, `&`, U+2028 and U+2029 as \u escapes, backspace and form feed as
 * \u0008 and \u000c. JSON.stringify writes these characters only inside strings, so the
 * rewrite never touches the structure; most texts need none.
 */
export function goEscapes(json: string): string {
  return GO_DIFFERS.test(json) ? json.replace(GO_TOKENS, goToken) : json;
}
