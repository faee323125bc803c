// The JSON of route INFO and CONNECT, checked field by field: it comes from another
// process, so every field is validated before use (unknown fields are ignored, as
// Go's json.Unmarshal does).

/** What a route's INFO says about the server at its other end (or about another one). */
export interface RemoteInfo {
  readonly id: string;
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly headers: boolean;
  readonly authRequired: boolean;
  /** `nats-route://host:port/` to dial it, set when it advertises or when gossiped. */
  readonly ip: string;
  readonly cluster: string;
  readonly dynamic: boolean;
  readonly connectUrls: string[];
  readonly wsConnectUrls: string[];
  readonly ldm: boolean;
  readonly gateway: string;
  /** The JSON as received, for forwarding to the other routes. */
  readonly raw: Record<string, unknown>;
}

/** What a connecting server's CONNECT says. */
export interface RouteConnect {
  readonly user: string;
  readonly pass: string;
  /** The connecting server's id. */
  readonly name: string;
  readonly cluster: string;
  readonly dynamic: boolean;
  readonly headers: boolean;
  /** Set by client libraries, never by servers: a client on the route port. */
  readonly lang: string;
  readonly gateway: string;
}

class Fields {
  problem = '';

  constructor(private readonly o: Record<string, unknown>) {}

  str(key: string): string {
    const v = this.o[key];
    if (v === undefined || v === null) return '';
    if (typeof v === 'string') return v;
    this.problem ||= `field ${key} must be a string`;
    return '';
  }

  bool(key: string): boolean {
    const v = this.o[key];
    if (v === undefined || v === null) return false;
    if (typeof v === 'boolean') return v;
    this.problem ||= `field ${key} must be a boolean`;
    return false;
  }

  int(key: string): number {
    const v = this.o[key];
    if (v === undefined || v === null) return 0;
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    this.problem ||= `field ${key} must be an integer`;
    return 0;
  }

  strings(key: string): string[] {
    const v = this.o[key];
    if (v === undefined || v === null) return [];
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
    this.problem ||= `field ${key} must be an array of strings`;
    return [];
  }
}

function object(text: string): Record<string, unknown> | string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'malformed JSON';
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return 'not a JSON object';
  return json as Record<string, unknown>;
}

/** Parses a route INFO; a message when it is unusable. */
export function parseRemoteInfo(text: string): RemoteInfo | string {
  const o = object(text);
  if (typeof o === 'string') return o;
  const f = new Fields(o);
  const info: RemoteInfo = {
    id: f.str('server_id'),
    name: f.str('server_name'),
    host: f.str('host'),
    port: f.int('port'),
    headers: f.bool('headers'),
    authRequired: f.bool('auth_required'),
    ip: f.str('ip'),
    cluster: f.str('cluster'),
    dynamic: f.bool('cluster_dynamic'),
    connectUrls: f.strings('connect_urls'),
    wsConnectUrls: f.strings('ws_connect_urls'),
    ldm: f.bool('ldm'),
    gateway: f.str('gateway'),
    raw: o,
  };
  if (f.problem !== '') return f.problem;
  if (info.id === '') return 'no server_id';
  return info;
}

/** Parses a route CONNECT; a message when it is unusable. */
export function parseRouteConnect(o: Record<string, unknown>): RouteConnect | string {
  const f = new Fields(o);
  const c: RouteConnect = {
    user: f.str('user'),
    pass: f.str('pass'),
    name: f.str('name'),
    cluster: f.str('cluster'),
    dynamic: f.bool('cluster_dynamic'),
    headers: f.bool('headers'),
    lang: f.str('lang'),
    gateway: f.str('gateway'),
  };
  return f.problem !== '' ? f.problem : c;
}
