// A configuration reload (SIGHUP, `--signal reload`, or `server.applyReload()` when
// embedded), as the reference's reload.go: the new options are compared with the
// running ones field by field; a change to a field that cannot change at run time
// refuses the whole reload and the running configuration stays; otherwise every
// changed field takes effect and is logged ("Reloaded: max_payload = 524288").
//
// Layers with their own configuration (security, streaming, cluster) take part
// through `server.reloadHooks`: each one checks the new configuration first and may
// refuse it, and only once every layer accepted does anything change.

import { isDeepStrictEqual } from 'node:util';
import { ErrText, CloseReason } from '../protocol/errors.js';
import { toPlain, type ConfEntry } from '../config/conf.js';
import type { LoadedConfig } from '../config/load.js';
import { goDuration } from '../config/duration-format.js';
import { type ServerOptions, resolveOptions, validateOptions } from '../config/options.js';
import { sendAsyncInfo } from './async-info.js';
import type { Client } from './client.js';
import type { Server } from './server.js';

/** Why a reload was refused; the running configuration is unchanged. */
export class ReloadError extends Error {
  override readonly name = 'ReloadError';
}

export interface ReloadContext {
  readonly server: Server;
  /** The options before the reload (a copy). */
  readonly previous: Readonly<ServerOptions>;
  /** The options the reload installs. */
  readonly next: Readonly<ServerOptions>;
  /** Option keys whose value changes. */
  readonly changed: ReadonlySet<string>;
  /** Config sections of other layers (`authorization`, `streaming`...) whose content changes. */
  readonly changedSections: ReadonlySet<string>;
  /** The config file as read, with the sections of other layers; null when reloaded from code. */
  readonly config: LoadedConfig | null;
}

/**
 * One layer's part in a reload. `prepare` runs before anything changes: it throws
 * (any Error; its message is logged) to refuse the reload, or returns the work to do
 * once every layer accepted (null for none). That work logs its own "Reloaded: ..."
 * lines and, as the reference's reloadAuthorization does, re-checks existing
 * connections where the new rules apply to them.
 */
export interface ReloadHook {
  readonly name: string;
  /** Option keys this layer reloads; a change to an option nobody reloads is refused. */
  readonly options?: readonly string[];
  /**
   * Config sections (top-level keys, lower case) this layer reloads. A change to a
   * section nobody reloads is refused, so that a reload never half-applies a file
   * (say, keeps the old users while logging success).
   */
  readonly sections?: readonly string[];
  prepare(ctx: ReloadContext): (() => void) | null;
}

type Effect = (server: Server, value: never, previous: never) => void;

interface Field {
  readonly key: keyof ServerOptions;
  /** The reference's Options field, named in "config reload not supported for <Go>". */
  readonly go: string;
  readonly duration?: boolean;
  /** Absent: the field cannot change at run time. */
  readonly apply?: Effect;
  readonly logging?: boolean;
}

/** Core fields in the order of the reference's Options struct, so errors name the same field first. */
const FIELDS: readonly Field[] = [
  { key: 'serverName', go: 'ServerName' },
  { key: 'host', go: 'Host' },
  { key: 'port', go: 'Port' },
  {
    key: 'clientAdvertise',
    go: 'ClientAdvertise',
    apply: (s, v: string) => {
      s.logger.info(`Reload: client_advertise = ${v}`);
    },
  },
  { key: 'trace', go: 'Trace', logging: true, apply: logged('trace') },
  { key: 'debug', go: 'Debug', logging: true, apply: logged('debug') },
  { key: 'disableSublistCache', go: 'NoSublistCache' },
  { key: 'noHeaderSupport', go: 'NoHeaderSupport' },
  { key: 'logtime', go: 'Logtime', logging: true, apply: logged('logtime') },
  { key: 'maxConnections', go: 'MaxConn', apply: applyMaxConnections },
  { key: 'maxSubscriptions', go: 'MaxSubs' },
  { key: 'systemAccount', go: 'SystemAccount' },
  { key: 'noSystemAccount', go: 'NoSystemAccount' },
  {
    key: 'pingInterval',
    go: 'PingInterval',
    duration: true,
    apply: (s, v: number) => {
      s.logger.info(`Reloaded: ping_interval = ${goDuration(v)}`);
    },
  },
  { key: 'pingMax', go: 'MaxPingsOut', apply: logged('ping_max') },
  { key: 'httpHost', go: 'HTTPHost' },
  { key: 'httpPort', go: 'HTTPPort' },
  { key: 'httpBasePath', go: 'HTTPBasePath' },
  { key: 'authTimeout', go: 'AuthTimeout', apply: logged('authorization timeout') },
  { key: 'maxControlLine', go: 'MaxControlLine', apply: applyMaxControlLine },
  { key: 'maxPayload', go: 'MaxPayload', apply: applyMaxPayload },
  { key: 'maxPending', go: 'MaxPending' },
  // The files themselves are rewritten by the process layer's hook (src/ops).
  {
    key: 'pidFile',
    go: 'PidFile',
    apply: (s, v: string) => {
      if (v !== '') s.logger.info(`Reloaded: pid_file = ${v}`);
    },
  },
  { key: 'portsFileDir', go: 'PortsFileDir', apply: logged('ports_file_dir') },
  { key: 'logFile', go: 'LogFile', logging: true, apply: logged('log_file') },
  {
    key: 'writeDeadline',
    go: 'WriteDeadline',
    duration: true,
    apply: (s, v: number) => {
      s.logger.info(`Reloaded: write_deadline = ${goDuration(v)}`);
    },
  },
  { key: 'lameDuckDuration', go: 'LameDuckDuration', duration: true },
  { key: 'lameDuckGracePeriod', go: 'LameDuckGracePeriod', duration: true },
];

const FIELD_BY_KEY = new Map<string, Field>(FIELDS.map((f) => [f.key, f]));

/** The config each server runs with, to tell which sections a reload changes. */
const runningConfig = new WeakMap<Server, LoadedConfig>();

/** Records the config file a server started from (the command line does). */
export function rememberConfig(server: Server, config: LoadedConfig | null): void {
  if (config !== null) runningConfig.set(server, config);
}

function sameEntry(a: ConfEntry | undefined, b: ConfEntry | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return isDeepStrictEqual(toPlain(a.value), toPlain(b.value));
}

/** Options that no config file sets: they keep their running value. */
const RUNTIME_ONLY: readonly (keyof ServerOptions)[] = ['quiet'];

function logged(name: string): Effect {
  return (s, v: unknown) => {
    s.logger.info(`Reloaded: ${name} = ${String(v)}`);
  };
}

function clientsOf(server: Server): IterableIterator<Client> {
  return server.clients.values();
}

function applyMaxControlLine(server: Server, value: number): void {
  for (const c of clientsOf(server)) c.parser.maxControlLine = value;
  server.logger.info(`Reloaded: max_control_line = ${value}`);
}

function applyMaxPayload(server: Server, value: number): void {
  for (const c of clientsOf(server)) c.parser.maxPayload = value;
  // spec §8: clients that take async INFO hear of the new limit now; those not yet
  // past their first PONG get the INFO then (Server.afterFirstPong). The 2.9.10
  // binary sends nothing here: its clients learn the limit at their next connect.
  server.maxPayloadChangedAt = Date.now();
  sendAsyncInfo(server);
  server.logger.info(`Reloaded: max_payload = ${value}`);
}

function applyMaxConnections(server: Server, value: number): void {
  const clients = [...clientsOf(server)].filter((c) => c.kind === 'client' && !c.closed);
  if (value > 0 && clients.length > value) {
    // The newest connections go first (the reference picks them in map order).
    const excess = clients.sort((a, b) => b.cid - a.cid).slice(0, clients.length - value);
    for (const c of excess) c.close(CloseReason.maxConnections, ErrText.maxConnections);
    server.logger.info(`Closed ${excess.length} connections to fall within max_connections`);
  }
  server.logger.info(`Reloaded: max_connections = ${value}`);
}

/**
 * Installs new options on a running server; returns the keys that changed. Throws
 * ReloadError (or a hook's error) and changes nothing when the reload is refused.
 * The server's options object stays the same object, so code that holds it sees
 * the new values.
 *
 * `replace`: the options are a whole configuration (a config file with the flags on
 * top), so an option they leave out goes back to its default, as in the reference;
 * otherwise they are changes to the running options.
 */
export function reloadServer(
  server: Server,
  options: Partial<ServerOptions>,
  config: LoadedConfig | null,
  replace: boolean,
): string[] {
  const current = server.options;
  const previous: ServerOptions = { ...current };
  const next = resolveOptions(replace ? options : { ...current, ...options });
  for (const key of RUNTIME_ONLY) (next as unknown as Record<string, unknown>)[key] = current[key];
  // As the reference: a random port (0 or -1) in the new config means the bound one.
  if (next.port === 0 || next.port === -1) next.port = current.port;

  const hooks = server.reloadHooks;
  const claimed = new Set(hooks.flatMap((h) => h.options ?? []));
  const changed: string[] = [];
  const keys = new Set<string>([...FIELDS.map((f) => f.key), ...Object.keys(next)]);
  for (const key of keys) {
    const before = (previous as unknown as Record<string, unknown>)[key];
    const after = (next as unknown as Record<string, unknown>)[key];
    if (isDeepStrictEqual(before, after)) continue;
    changed.push(key);
    const field = FIELD_BY_KEY.get(key);
    if (claimed.has(key) || field?.apply !== undefined) continue;
    // Values are printed for the core fields only: another layer's option may hold
    // a secret (the reference also avoids printing passwords here).
    throw new ReloadError(
      field === undefined
        ? `config reload not supported for ${key}`
        : `config reload not supported for ${field.go}: ` +
            `old=${formatValue(before, field)}, new=${formatValue(after, field)}`,
    );
  }
  const changedSections: string[] = [];
  if (config !== null) {
    const before = runningConfig.get(server)?.sections ?? new Map<string, ConfEntry>();
    const reloadable = new Set(hooks.flatMap((h) => h.sections ?? []));
    for (const key of new Set([...before.keys(), ...config.sections.keys()])) {
      if (sameEntry(before.get(key), config.sections.get(key))) continue;
      if (!reloadable.has(key)) throw new ReloadError(`config reload not supported for ${key}`);
      changedSections.push(key);
    }
  }
  if (changed.length > 0) {
    const problems = validateOptions(next);
    if (problems.length > 0) throw new ReloadError(problems.join('; '));
  }

  const ctx: ReloadContext = {
    server,
    previous,
    next,
    changed: new Set(changed),
    changedSections: new Set(changedSections),
    config,
  };
  const work: (() => void)[] = [];
  for (const hook of hooks) {
    const apply = hook.prepare(ctx);
    if (apply !== null) work.push(apply);
  }

  Object.assign(current, next);
  let logging = false;
  for (const key of changed) {
    const field = FIELD_BY_KEY.get(key);
    if (field?.apply === undefined) continue;
    (field.apply as (s: Server, v: unknown, p: unknown) => void)(
      server,
      (next as unknown as Record<string, unknown>)[key],
      (previous as unknown as Record<string, unknown>)[key],
    );
    logging ||= field.logging === true;
  }
  // As the reference, the logger takes its new settings after the "Reloaded" lines.
  if (logging) server.logger.configure(current);
  for (const apply of work) apply();
  if (config !== null) runningConfig.set(server, config);
  server.configLoadTime = new Date();
  server.logger.info('Reloaded server configuration');
  return changed;
}

function formatValue(v: unknown, field: Field): string {
  if (field.duration === true && typeof v === 'number') return goDuration(v);
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return v === undefined ? '' : JSON.stringify(v);
}
