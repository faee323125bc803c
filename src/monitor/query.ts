// Query parameters decoded as the reference decodes them (Go's strconv), with its
// exact error texts. A bad value throws BadRequest, which the router turns into
// HTTP 400; nothing here throws anything else.

import { goQuote } from '../protocol/errors.js';

/** A query value the endpoint cannot use; `message` is the reference's text. */
export class BadRequest extends Error {}

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;
const UINT64_MAX = 18446744073709551615n;

/** Go's %q of a query value (which arrives as a UTF-8 string). */
function quote(value: string): string {
  return Buffer.from(goQuote(Buffer.from(value, 'utf8').toString('latin1')), 'latin1').toString(
    'utf8',
  );
}

/** strconv.ParseBool's accepted spellings. */
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Absent or empty is false; anything strconv.ParseBool rejects is a 400. */
export function queryBool(q: URLSearchParams, name: string): boolean {
  const v = q.get(name) ?? '';
  if (v === '') return false;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new BadRequest(
    `Error decoding boolean for '${name}': strconv.ParseBool: parsing ${quote(v)}: invalid syntax`,
  );
}

/** strconv.Atoi: optional sign, decimal digits, 64-bit range. Absent or empty is 0. */
export function queryInt(q: URLSearchParams, name: string): number {
  const v = q.get(name) ?? '';
  if (v === '') return 0;
  const prefix = `Error decoding int for '${name}': strconv.Atoi: parsing ${quote(v)}: `;
  if (!/^[+-]?[0-9]+$/.test(v)) throw new BadRequest(prefix + 'invalid syntax');
  const n = BigInt(v);
  if (n > INT64_MAX || n < INT64_MIN) throw new BadRequest(prefix + 'value out of range');
  // Beyond 2^53 the exact value no longer matters: it is an offset or a limit.
  return Number(n);
}

/** strconv.ParseUint(v, 10, 64): digits only. Absent or empty is 0. */
export function queryUint64(q: URLSearchParams, name: string): number {
  const v = q.get(name) ?? '';
  if (v === '') return 0;
  const prefix = `Error decoding uint64 for '${name}': strconv.ParseUint: parsing ${quote(v)}: `;
  if (!/^[0-9]+$/.test(v)) throw new BadRequest(prefix + 'invalid syntax');
  if (BigInt(v) > UINT64_MAX) throw new BadRequest(prefix + 'value out of range');
  return Number(v);
}

export type ConnState = 'open' | 'closed' | 'any';

/** `state`: open (default), closed, any or all, in any case. */
export function queryState(q: URLSearchParams): ConnState {
  const v = q.get('state') ?? '';
  switch (v.toLowerCase()) {
    case '':
    case 'open':
      return 'open';
    case 'closed':
      return 'closed';
    case 'any':
    case 'all':
      return 'any';
    default:
      throw new BadRequest(`Error decoding state for ${v}`);
  }
}

/** `subs`: `detail` (any case) for subscription details, else a boolean. */
export function querySubs(q: URLSearchParams): { subs: boolean; detail: boolean } {
  if ((q.get('subs') ?? '').toLowerCase() === 'detail') return { subs: false, detail: true };
  return { subs: queryBool(q, 'subs'), detail: false };
}
