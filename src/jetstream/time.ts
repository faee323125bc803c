// Times as the API writes them: nanoseconds since the epoch in a double, and Go's
// RFC 3339 form of a time.Time.

import { perf, TIME_ORIGIN } from '../server/clock.js';

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export function parseRfc3339(s: string): number | null {
  const m = RFC3339.exec(s);
  if (m === null) return null;
  const ms = Date.parse(m[1]! + m[3]!);
  if (Number.isNaN(ms)) return null;
  const frac = m[2] === undefined ? 0 : Number((m[2].substring(1) + '00000000').substring(0, 9));
  return ms * 1e6 + frac;
}

/** Nanoseconds since the epoch as Go marshals a time.Time (RFC 3339, trailing zeros cut). */
export function rfc3339Nano(ns: number): string {
  if (ns === 0) return '0001-01-01T00:00:00Z';
  // The same time again (KV gets of one key, a message's info asked for repeatedly).
  if (ns === lastNs) return lastText;
  lastText = formatRfc3339Nano(ns);
  lastNs = ns;
  return lastText;
}

let lastNs = 0;
let lastText = '';

function formatRfc3339Nano(ns: number): string {
  const ms = Math.floor(ns / 1e6);
  const sub = Math.max(0, Math.round(ns - ms * 1e6));
  const iso = new Date(ms).toISOString(); // 2026-11-24T05:19:32.784Z
  let frac = iso.substring(20, 23) + String(sub).padStart(6, '0');
  frac = frac.replace(/0+$/, '');
  return iso.substring(0, 19) + (frac === '' ? '' : '.' + frac) + 'Z';
}

/**
 * Now, in nanoseconds since the epoch, as a double (exact to 256 ns): the monotonic clock
 * from the process's time origin, without a BigInt per call.
 */
export function nowNs(): number {
  return Math.round((TIME_ORIGIN + perf.now()) * 1e6);
}
