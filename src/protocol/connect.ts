// CONNECT: its options with the reference's defaults, strict validation of the JSON
// (a wrong type is malformed input, as Go's json.Unmarshal into a struct fails), and
// the redaction of credentials for trace logs.

/** What a connection's CONNECT told us; defaults are the reference's (all three on). */
export interface ConnectOptions {
  verbose: boolean;
  pedantic: boolean;
  echo: boolean;
  tlsRequired: boolean;
  headers: boolean;
  noResponders: boolean;
  protocol: number;
  name: string;
  lang: string;
  version: string;
  user: string;
  pass: string;
  authToken: string;
  jwt: string;
  nkey: string;
  sig: string;
}

export interface ParsedConnect {
  options: ConnectOptions;
  /** CONNECT named an account (`account`/`new_account`), which clients may not do. */
  account: boolean;
  protocol: number;
}

/** A field of the wrong type: the message parseConnect returns. */
class Malformed extends Error {}

function bool(o: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const v = o[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw new Malformed(`CONNECT field ${key} must be a boolean`);
  return v;
}

function str(o: Record<string, unknown>, key: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Malformed(`CONNECT field ${key} must be a string`);
  return v;
}

function int(o: Record<string, unknown>, key: string): number {
  const v = o[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new Malformed(`CONNECT field ${key} must be an integer`);
  }
  return v;
}

/** Validates CONNECT JSON field by field; returns a message for anything malformed. */
export function parseConnect(text: string): ParsedConnect | string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'malformed CONNECT JSON';
  }
  // Go's json.Unmarshal leaves the defaults alone for `null`, so the reference
  // accepts `CONNECT null` as `CONNECT {}`.
  if (json === null) json = {};
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return 'CONNECT is not a JSON object';
  }
  const o = json as Record<string, unknown>;
  // Every field read once and the options built as one literal: every CONNECT gives
  // an object of the same shape, which a connection storm's first handshakes need
  // (fields stored one by one under computed keys made V8 discard and recompile
  // this function as the shape changed).
  let options: ConnectOptions;
  try {
    options = {
      verbose: bool(o, 'verbose', true),
      pedantic: bool(o, 'pedantic', true),
      echo: bool(o, 'echo', true),
      tlsRequired: bool(o, 'tls_required', false),
      headers: bool(o, 'headers', false),
      noResponders: bool(o, 'no_responders', false),
      name: str(o, 'name'),
      lang: str(o, 'lang'),
      version: str(o, 'version'),
      user: str(o, 'user'),
      pass: str(o, 'pass'),
      authToken: str(o, 'auth_token'),
      jwt: str(o, 'jwt'),
      nkey: str(o, 'nkey'),
      sig: str(o, 'sig'),
      protocol: int(o, 'protocol'),
    };
  } catch (err) {
    if (err instanceof Malformed) return err.message;
    throw err;
  }
  const account = (typeof o.account === 'string' && o.account !== '') || o.new_account === true;
  return { options, account, protocol: options.protocol };
}

/** CONNECT text with credentials blanked, for trace logs. */
export function redactConnect(text: string): string {
  // Parsed, not pattern-matched: a key written with escapes (`"p\u0061ss"`) or a
  // credential of another type must not slip through. Text that is not a JSON object
  // is not shown at all, since it may hold anything.
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return `<${text.length} bytes, not JSON>`;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return `<${text.length} bytes, not a JSON object>`;
  }
  const o = json as Record<string, unknown>;
  for (const key of ['pass', 'auth_token', 'sig', 'jwt']) {
    if (Object.hasOwn(o, key)) o[key] = '[REDACTED]';
  }
  return JSON.stringify(o);
}
