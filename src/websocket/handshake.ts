// The opening handshake (RFC 6455 §4.2) checked in the reference's order
// (server/websocket.go wsUpgrade), with its status codes: the reason goes to the log,
// the client gets only the status text, as Go's http.Error writes it.

import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export interface AllowedOrigin {
  readonly scheme: string;
  readonly port: string;
}

/** The origin rules of one listener: same_origin and allowed_origins. */
export class OriginPolicy {
  private readonly allowed = new Map<string, AllowedOrigin>();

  constructor(
    private readonly sameOrigin: boolean,
    allowedOrigins: readonly string[],
  ) {
    for (const o of allowedOrigins) {
      const u = parseOrigin(o);
      if (u === null) continue;
      const hp = hostAndPort(u.protocol === 'https:', u.host);
      this.allowed.set(hp.host, { scheme: u.protocol.slice(0, -1), port: hp.port });
    }
  }

  /** Null when the request may proceed, else why not. */
  check(req: IncomingMessage, tls: boolean): string | null {
    if (!this.sameOrigin && this.allowed.size === 0) return null;
    const origin = header(req, 'origin') ?? header(req, 'sec-websocket-origin');
    // As RFC 6455 §1.6 and the reference: a client that sends no Origin is not a browser.
    if (origin === undefined || origin === '') return null;
    const u = parseOrigin(origin);
    if (u === null) return `parse "${origin}": invalid URI for request`;
    const o = hostAndPort(u.protocol === 'https:', u.host);
    if (this.sameOrigin) {
      const r = hostAndPort(tls, req.headers.host ?? '');
      if (o.host !== r.host || o.port !== r.port) return 'not same origin';
    }
    if (this.allowed.size > 0) {
      const a = this.allowed.get(o.host);
      if (a === undefined || u.protocol.slice(0, -1) !== a.scheme || o.port !== a.port) {
        return 'not in the allowed list';
      }
    }
    return null;
  }
}

function parseOrigin(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** Host (lower case) and port, the scheme's default port when none is given. */
function hostAndPort(tls: boolean, hostport: string): { host: string; port: string } {
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(hostport);
  const host = (m?.[1] ?? hostport).replace(/^\[|\]$/g, '').toLowerCase();
  const port = m?.[2] ?? (tls ? '443' : '80');
  return { host, port };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** True when a comma-separated header holds `value` as a token (case-insensitive). */
function headerHas(req: IncomingMessage, name: string, value: string): boolean {
  const want = value.toLowerCase();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() !== name) continue;
    for (const token of req.rawHeaders[i + 1]!.split(',')) {
      if (token.trim().toLowerCase() === want) return true;
    }
  }
  return false;
}

/** A refused handshake: the HTTP status and the reason for the log. */
export interface Refusal {
  readonly status: number;
  readonly reason: string;
}

export interface Accepted {
  readonly key: string;
  readonly compress: boolean;
  readonly noMasking: boolean;
  readonly browser: boolean;
  readonly safari: boolean;
  /** The JWT from the configured cookie, or ''. */
  readonly cookieJwt: string;
}

export interface HandshakeRules {
  readonly origins: OriginPolicy;
  readonly compression: boolean;
  readonly jwtCookie: string;
  readonly tls: boolean;
}

export function checkHandshake(req: IncomingMessage, rules: HandshakeRules): Accepted | Refusal {
  if (req.method !== 'GET') return { status: 405, reason: 'request method must be GET' };
  if ((req.headers.host ?? '') === '') return { status: 400, reason: "'Host' missing in request" };
  if (!headerHas(req, 'upgrade', 'websocket'))
    return { status: 400, reason: "invalid value for header 'Upgrade'" };
  if (!headerHas(req, 'connection', 'upgrade'))
    return { status: 400, reason: "invalid value for header 'Connection'" };
  const key = header(req, 'sec-websocket-key') ?? '';
  if (key === '') return { status: 400, reason: 'key missing' };
  if (!headerHas(req, 'sec-websocket-version', '13'))
    return { status: 400, reason: 'invalid version' };
  const origin = rules.origins.check(req, rules.tls);
  if (origin !== null) return { status: 403, reason: `origin not allowed: ${origin}` };
  const ua = header(req, 'user-agent') ?? '';
  const browser = ua.startsWith('Mozilla/');
  return {
    key,
    compress: rules.compression && offersDeflate(req),
    noMasking: header(req, 'nats-no-masking') === 'true',
    browser,
    safari: browser && ua.includes('Version/') && ua.includes('Safari/'),
    cookieJwt: rules.jwtCookie === '' ? '' : cookie(req, rules.jwtCookie),
  };
}

function offersDeflate(req: IncomingMessage): boolean {
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() !== 'sec-websocket-extensions') continue;
    for (const ext of req.rawHeaders[i + 1]!.split(',')) {
      for (const param of ext.split(';')) {
        if (param.trim().toLowerCase() === 'permessage-deflate') return true;
      }
    }
  }
  return false;
}

function cookie(req: IncomingMessage, name: string): string {
  const raw = req.headers.cookie ?? '';
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return '';
}

/** The 101 response (RFC 6455 §4.2.2), with the reference's extension lines. */
export function acceptResponse(a: Accepted): string {
  const accept = createHash('sha1')
    .update(a.key + GUID)
    .digest('base64');
  let r = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n`;
  if (a.compress) {
    r +=
      'Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n';
  }
  if (a.noMasking) r += 'Nats-No-Masking: true\r\n';
  return r + '\r\n';
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  405: 'Method Not Allowed',
};

/** The error response Go's http.Error writes, with the Sec-Websocket-Version header. */
export function refusalResponse(status: number, date: Date = new Date()): string {
  const text = STATUS_TEXT[status] ?? 'Error';
  const body = `${text}\n`;
  return (
    `HTTP/1.1 ${status} ${text}\r\n` +
    'Content-Type: text/plain; charset=utf-8\r\n' +
    'Sec-Websocket-Version: 13\r\n' +
    'X-Content-Type-Options: nosniff\r\n' +
    `Date: ${date.toUTCString()}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    '\r\n' +
    body
  );
}
