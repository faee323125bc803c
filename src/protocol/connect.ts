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
  const options: ConnectOptions = {
    verbose: true,
    pedantic: true,
    echo: true,
    tlsRequired: false,
    headers: false,
    noResponders: false,
    protocol: 0,
    name: '',
    lang: '',
    version: '',
    user: '',
    pass: '',
    authToken: '',
    jwt: '',
    nkey: '',
    sig: '',
  };
  const bools: [string, keyof ConnectOptions][] = [
    ['verbose', 'verbose'],
    ['pedantic', 'pedantic'],
    ['echo', 'echo'],
    ['tls_required', 'tlsRequired'],
    ['headers', 'headers'],
    ['no_responders', 'noResponders'],
  ];
  for (const [key, field] of bools) {
    const v = o[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'boolean') return `CONNECT field ${key} must be a boolean`;
    (options as unknown as Record<string, unknown>)[field] = v;
  }
  const strings: [string, keyof ConnectOptions][] = [
    ['name', 'name'],
    ['lang', 'lang'],
    ['version', 'version'],
    ['user', 'user'],
    ['pass', 'pass'],
    ['auth_token', 'authToken'],
    ['jwt', 'jwt'],
    ['nkey', 'nkey'],
    ['sig', 'sig'],
  ];
  for (const [key, field] of strings) {
    const v = o[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') return `CONNECT field ${key} must be a string`;
    (options as unknown as Record<string, unknown>)[field] = v;
  }
  const protocol = o.protocol;
  if (protocol !== undefined && protocol !== null) {
    if (typeof protocol !== 'number' || !Number.isInteger(protocol)) {
      return 'CONNECT field protocol must be an integer';
    }
    options.protocol = protocol;
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
