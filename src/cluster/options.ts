// Cluster settings, with the reference server's names (`cluster { ... }` in the
// config file, `--cluster`, `--routes`, ... on the command line), their defaults and
// the parsing of route URLs.

import type { SubjectPermission } from '../auth/permissions.js';
import type { RouteTlsOptions } from './tls.js';

/** The reference's defaults (server/const.go), in milliseconds unless noted. */
export const ROUTE_CONNECT_DELAY = 1000;
export const ROUTE_RECONNECT_DELAY = 1000;
export const ROUTE_DIAL_TIMEOUT = 1000;
/** A random delay of up to this much before a reconnect, so two servers do not collide. */
export const ROUTE_RECONNECT_JITTER = 100;
/** Seconds a route has to authenticate (the reference's AUTH_TIMEOUT). */
export const DEFAULT_ROUTE_AUTH_TIMEOUT = 2;
/** First attempts and then every this many are logged as errors (connect_error_reports). */
export const CONNECT_ERROR_REPORTS = 3600;

export interface RoutePermissions {
  /** Subjects this server takes messages for: interest is sent only for these. */
  readonly import?: SubjectPermission | null;
  /** Subjects the other servers may take from this one: their interest elsewhere is ignored. */
  readonly export?: SubjectPermission | null;
}

export interface ClusterOptions {
  /** The cluster's name; empty for one drawn at random that gives way to a configured one. */
  name: string;
  /** Route listener address. */
  host: string;
  /** Route port; 0 or -1 picks a free one. */
  port: number;
  /** `host:port` the other servers are told to use instead of the listen address. */
  advertise: string;
  /** Servers to connect to (`nats-route://[user:pass@]host:port`, `nats://` works too). */
  routes: string[];
  /** Keep the other servers' client URLs from this server's clients, and this one's from theirs. */
  noAdvertise: boolean;
  /** Connect attempts after the first for a route learned from another server. */
  connectRetries: number;
  /** Credentials a connecting server must present (`cluster { authorization }`); empty for none. */
  user: string;
  /** Plain or bcrypt. */
  password: string;
  /** Seconds a connecting server has to send its CONNECT when credentials are required. */
  authTimeout: number;
  permissions: RoutePermissions | null;
  /** TLS on every route connection, both ways (`cluster { tls { ... } }`); null for none. */
  tls: RouteTlsOptions | null;
}

export const defaultClusterOptions: Readonly<ClusterOptions> = {
  name: '',
  host: '0.0.0.0',
  port: 0,
  advertise: '',
  routes: [],
  noAdvertise: false,
  connectRetries: 0,
  user: '',
  password: '',
  authTimeout: DEFAULT_ROUTE_AUTH_TIMEOUT,
  permissions: null,
  tls: null,
};

export function resolveClusterOptions(partial: Partial<ClusterOptions>): ClusterOptions {
  const o: ClusterOptions = { ...defaultClusterOptions, routes: [] };
  for (const key of Object.keys(partial) as (keyof ClusterOptions)[]) {
    const value = partial[key];
    if (value !== undefined) (o as unknown as Record<string, unknown>)[key] = value;
  }
  // As the reference's getDefaultAuthTimeout: with TLS, a second more than its timeout.
  if (partial.authTimeout === undefined && o.tls !== null) o.authTimeout = o.tls.timeout + 1;
  return o;
}

/** Problems with the settings, as messages; empty when they are usable. */
export function validateClusterOptions(o: ClusterOptions): string[] {
  const problems: string[] = [];
  if (!Number.isInteger(o.port) || o.port < -1 || o.port > 65535)
    problems.push('cluster port must be an integer from -1 to 65535');
  if (!Number.isInteger(o.connectRetries) || o.connectRetries < 0)
    problems.push('connect_retries must be an integer >= 0');
  if (!(o.authTimeout > 0)) problems.push('cluster authorization timeout must be positive');
  if (o.name.includes(' ')) problems.push(`cluster name cannot contain spaces: "${o.name}"`);
  if (o.user === '' && o.password !== '') problems.push('cluster password without a user');
  for (const r of o.routes) {
    const u = parseRouteUrl(r);
    if (typeof u === 'string') problems.push(u);
  }
  return problems;
}

/** A route to dial, from a `nats-route://` (or `nats://`) URL. */
export interface RouteUrl {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** `host:port` (IPv6 in brackets), lower case: how routes are compared. */
  readonly hostPort: string;
  /** The URL without credentials, for logs. */
  readonly redacted: string;
}

/** Parses a route URL; a message when it is not one. */
export function parseRouteUrl(text: string): RouteUrl | string {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    return `invalid route URL "${text}"`;
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = u.port === '' ? 6222 : Number(u.port);
  if (host === '' || !Number.isInteger(port) || port <= 0 || port > 65535) {
    return `invalid route URL "${text}": needs host and port`;
  }
  const hostPort = joinHostPort(host, port).toLowerCase();
  return {
    host,
    port,
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    hostPort,
    redacted: `nats-route://${hostPort}`,
  };
}

/** `host:port`, IPv6 in brackets, as Go's net.JoinHostPort. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
