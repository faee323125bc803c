// Every server setting, its default and its unit, in one place. Names follow the
// reference server's config keys (camelCased); defaults follow the protocol
// description where it gives one (see ../shared/spec/core-protocol.md) and the
// reference server otherwise.

import { goDuration } from './duration-format.js';

export interface ServerOptions {
  /** Client listener address. */
  host: string;
  /**
   * Whether to open the client listener at all. Off when the streaming layer runs
   * against an external NATS server (`-ns`), as the reference then embeds none.
   */
  clientListener: boolean;
  /** Client port; 0 picks a free one. */
  port: number;
  /** Defaults to the server id. */
  serverName: string;
  /**
   * The account the reference's system services live in, as monitoring names it
   * (`$SYS` by default, `system_account`); none with `no_system_account`.
   */
  systemAccount: string;
  noSystemAccount: boolean;
  /** host:port advertised to clients instead of the listen address. */
  clientAdvertise: string;
  /** Largest payload (headers included) a client may publish, in bytes. */
  maxPayload: number;
  /** Longest argument part of a PUB, HPUB, SUB or UNSUB line, in bytes. */
  maxControlLine: number;
  maxConnections: number;
  /** Per connection; 0 for no limit. */
  maxSubscriptions: number;
  /** Output a connection may have pending before it is cut off as a slow consumer, in bytes. */
  maxPending: number;
  /** Milliseconds between keep-alive PINGs. */
  pingInterval: number;
  /** Unanswered PINGs before 'Stale Connection'. */
  pingMax: number;
  /** Milliseconds a pending write may take before the client counts as a slow consumer. */
  writeDeadline: number;
  /** Seconds a client has to authenticate. */
  authTimeout: number;
  noHeaderSupport: boolean;
  disableSublistCache: boolean;
  /** Milliseconds lame duck mode takes to close every client. */
  lameDuckDuration: number;
  /** Milliseconds lame duck mode waits before it starts closing clients. */
  lameDuckGracePeriod: number;

  debug: boolean;
  trace: boolean;
  /** Timestamps on log lines. */
  logtime: boolean;
  /** Log file; empty for stderr. */
  logFile: string;
  /** Write no log at all (the default when embedded). */
  quiet: boolean;
  pidFile: string;
  portsFileDir: string;

  /** Monitoring listener address; empty for the client listener's, as the reference. */
  httpHost: string;
  /** Monitoring port; 0 means off, -1 picks a free one. */
  httpPort: number;
  /** Prefix of every monitoring path (`http_base_path`), e.g. `/nats`. */
  httpBasePath: string;
}

export const DEFAULT_PORT = 4222;

export const defaultOptions: Readonly<ServerOptions> = {
  host: '0.0.0.0',
  clientListener: true,
  port: DEFAULT_PORT,
  serverName: '',
  systemAccount: '$SYS',
  noSystemAccount: false,
  clientAdvertise: '',
  maxPayload: 1024 * 1024,
  maxControlLine: 1024,
  maxConnections: 64 * 1024,
  maxSubscriptions: 0,
  maxPending: 10 * 1024 * 1024,
  pingInterval: 2 * 60 * 1000,
  pingMax: 2,
  writeDeadline: 10 * 1000,
  authTimeout: 1,
  noHeaderSupport: false,
  disableSublistCache: false,
  lameDuckDuration: 2 * 60 * 1000,
  lameDuckGracePeriod: 10 * 1000,
  debug: false,
  trace: false,
  logtime: true,
  logFile: '',
  quiet: false,
  pidFile: '',
  portsFileDir: '',
  httpHost: '',
  httpPort: 0,
  httpBasePath: '',
};

export function resolveOptions(partial: Partial<ServerOptions>): ServerOptions {
  const o: ServerOptions = { ...defaultOptions };
  for (const key of Object.keys(partial) as (keyof ServerOptions)[]) {
    const value = partial[key];
    if (value !== undefined) (o as unknown as Record<string, unknown>)[key] = value;
  }
  return o;
}

/** Settings that make no sense, as messages; empty when the options are usable. */
export function validateOptions(o: ServerOptions): string[] {
  const problems: string[] = [];
  const int = (name: string, v: number, min: number): void => {
    if (!Number.isInteger(v) || v < min) problems.push(`${name} must be an integer >= ${min}`);
  };
  int('port', o.port, -1);
  if (o.port > 65535) problems.push('port must be at most 65535');
  int('http_port', o.httpPort, -1);
  if (o.httpPort > 65535) problems.push('http_port must be at most 65535');
  int('max_payload', o.maxPayload, 1);
  int('max_control_line', o.maxControlLine, 1);
  int('max_connections', o.maxConnections, 0);
  int('max_subscriptions', o.maxSubscriptions, 0);
  int('max_pending', o.maxPending, 1);
  int('ping_max', o.pingMax, 0);
  if (!(o.pingInterval > 0)) problems.push('ping_interval must be positive');
  if (!(o.writeDeadline > 0)) problems.push('write_deadline must be positive');
  if (!(o.authTimeout > 0)) problems.push('authorization timeout must be positive');
  if (o.lameDuckDuration > 0 && o.lameDuckGracePeriod >= o.lameDuckDuration) {
    problems.push(
      `lame duck grace period (${goDuration(o.lameDuckGracePeriod)}) should be strictly lower than lame duck duration (${goDuration(o.lameDuckDuration)})`,
    );
  }
  if (o.maxPayload > o.maxPending) {
    problems.push(
      `max_payload (${o.maxPayload}) cannot be higher than max_pending (${o.maxPending})`,
    );
  }
  return problems;
}
