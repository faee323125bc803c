// Turns a parsed config file into server options. Each top-level key has a handler;
// the core keys live here and other layers (security, streaming, cluster) register
// theirs, so an unknown key is an error naming file, line and key, while keys of the
// reference that wirebus does not implement are reported and ignored.

import {
  ConfigError,
  type ConfEntry,
  type ConfMap,
  type ConfValue,
  parseConfigFile,
  parseDuration,
} from './conf.js';
import type { ServerOptions } from './options.js';
import { goDuration } from './duration-format.js';

/** What a config file says: server options plus the sections other layers read. */
export interface LoadedConfig {
  readonly file: string;
  readonly options: Partial<ServerOptions>;
  /** Top-level entries handled by a registered layer, by lower-case key. */
  readonly sections: Map<string, ConfEntry>;
  /** Problems that do not stop the server, for the log. */
  readonly warnings: string[];
}

type KeyHandler = (entry: ConfEntry, out: LoadedConfig) => void;

const handlers = new Map<string, KeyHandler>();

/**
 * Lets a layer claim top-level keys. The default handler keeps the entry in
 * `sections` for the layer to read when it starts.
 */
export function registerConfigKeys(names: readonly string[], handler?: KeyHandler): void {
  const h: KeyHandler =
    handler ??
    ((entry, out) => {
      out.sections.set(entry.key.toLowerCase(), entry);
    });
  for (const n of names) handlers.set(n.toLowerCase(), h);
}

/** Keys of the reference server that wirebus does not implement: logged, then ignored. */
const unsupported = new Set([
  'store_dir',
  'leafnodes',
  'leaf',
  'gateway',
  'mqtt',
  'ocsp',
  'server_tags',
  'prof_port',
  'syslog',
  'remote_syslog',
  'log_size_limit',
  'max_traced_msg_len',
  'trace_verbose',
  'connect_error_reports',
  'reconnect_error_reports',
  'lame_duck_duration_warning',
  'logfile_size_limit',
  'max_sub_tokens',
  'max_subscription_tokens',
  'maps',
  'storedir',
  'mappings',
  'default_js_domain',
]);

// ---- value readers: each checks the kind and names the key on failure ---------

export function expectString(v: ConfValue, key: string): string {
  if (v.kind !== 'string')
    throw new ConfigError(v, `${key}: expected a string, got ${describe(v)}`);
  return v.value;
}

export function expectInt(v: ConfValue, key: string, min = 0): number {
  if (v.kind !== 'int') throw new ConfigError(v, `${key}: expected an integer, got ${describe(v)}`);
  if (v.value < min) throw new ConfigError(v, `${key}: must be at least ${min}, got ${v.value}`);
  return v.value;
}

export function expectBool(v: ConfValue, key: string): boolean {
  if (v.kind !== 'bool') throw new ConfigError(v, `${key}: expected a boolean, got ${describe(v)}`);
  return v.value;
}

export function expectMap(v: ConfValue, key: string): ConfMap {
  if (v.kind !== 'map') throw new ConfigError(v, `${key}: expected a map, got ${describe(v)}`);
  return v;
}

/** A Go duration string ("2m") or integer seconds; milliseconds. */
export function expectDuration(v: ConfValue, key: string, out: LoadedConfig): number {
  return parseDuration(v, key, (warning) => out.warnings.push(warning.message));
}

function describe(v: ConfValue): string {
  return v.kind === 'string' ? `string "${v.value}"` : v.kind;
}

/** Splits `host:port` (IPv6 in brackets); either part may be missing. */
export function splitHostPort(text: string): { host: string | null; port: number | null } {
  const m = /^(?:\[([^\]]+)\]|([^:]*))(?::(\d+))?$/.exec(text);
  if (m === null) return { host: text, port: null };
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? null : host, port: m[3] === undefined ? null : Number(m[3]) };
}

function setOption<K extends keyof ServerOptions>(
  out: LoadedConfig,
  key: K,
  value: ServerOptions[K],
): void {
  (out.options as Record<string, unknown>)[key] = value;
}

function listen(
  entry: ConfEntry,
  out: LoadedConfig,
  hostKey: 'host' | 'httpHost',
  portKey: 'port' | 'httpPort',
): void {
  const v = entry.value;
  if (v.kind === 'int') {
    setOption(out, portKey, v.value);
    return;
  }
  const hp = splitHostPort(expectString(v, entry.key));
  if (hp.host !== null) setOption(out, hostKey, hp.host);
  if (hp.port !== null) setOption(out, portKey, hp.port);
}

// ---- the core keys -----------------------------------------------------------------

registerConfigKeys(['host', 'net', 'addr'], (e, out) => {
  setOption(out, 'host', expectString(e.value, e.key));
});
registerConfigKeys(['port'], (e, out) => {
  setOption(out, 'port', expectInt(e.value, e.key, -1));
});
registerConfigKeys(['listen'], (e, out) => {
  listen(e, out, 'host', 'port');
});
registerConfigKeys(['server_name'], (e, out) => {
  setOption(out, 'serverName', expectString(e.value, e.key));
});
registerConfigKeys(['system_account'], (e, out) => {
  setOption(out, 'systemAccount', expectString(e.value, e.key));
});
registerConfigKeys(['no_system_account'], (e, out) => {
  setOption(out, 'noSystemAccount', expectBool(e.value, e.key));
});
registerConfigKeys(['client_advertise'], (e, out) => {
  setOption(out, 'clientAdvertise', expectString(e.value, e.key));
});
registerConfigKeys(['max_payload'], (e, out) => {
  setOption(out, 'maxPayload', expectInt(e.value, e.key, 1));
});
registerConfigKeys(['max_control_line'], (e, out) => {
  setOption(out, 'maxControlLine', expectInt(e.value, e.key, 1));
});
registerConfigKeys(['max_connections', 'max_conn'], (e, out) => {
  setOption(out, 'maxConnections', expectInt(e.value, e.key));
});
registerConfigKeys(['max_subscriptions', 'max_subs'], (e, out) => {
  setOption(out, 'maxSubscriptions', expectInt(e.value, e.key));
});
registerConfigKeys(['max_pending'], (e, out) => {
  setOption(out, 'maxPending', expectInt(e.value, e.key, 1));
});
registerConfigKeys(['ping_interval'], (e, out) => {
  setOption(out, 'pingInterval', expectDuration(e.value, e.key, out));
});
registerConfigKeys(['ping_max'], (e, out) => {
  setOption(out, 'pingMax', expectInt(e.value, e.key));
});
registerConfigKeys(['write_deadline'], (e, out) => {
  setOption(out, 'writeDeadline', expectDuration(e.value, e.key, out));
});
registerConfigKeys(['lame_duck_duration'], (e, out) => {
  const ms = expectDuration(e.value, e.key, out);
  if (ms < 30_000) {
    throw new ConfigError(
      e.value,
      `invalid lame_duck_duration of ${goDuration(ms)}, minimum is 30 seconds`,
    );
  }
  setOption(out, 'lameDuckDuration', ms);
});
registerConfigKeys(['lame_duck_grace_period'], (e, out) => {
  const ms = expectDuration(e.value, e.key, out);
  if (ms < 0)
    throw new ConfigError(e.value, 'invalid lame_duck_grace_period, needs to be positive');
  setOption(out, 'lameDuckGracePeriod', ms);
});
registerConfigKeys(['no_header_support'], (e, out) => {
  setOption(out, 'noHeaderSupport', expectBool(e.value, e.key));
});
registerConfigKeys(['disable_sublist_cache', 'no_sublist_cache'], (e, out) => {
  setOption(out, 'disableSublistCache', expectBool(e.value, e.key));
});
registerConfigKeys(['debug'], (e, out) => {
  setOption(out, 'debug', expectBool(e.value, e.key));
});
registerConfigKeys(['trace'], (e, out) => {
  setOption(out, 'trace', expectBool(e.value, e.key));
});
registerConfigKeys(['logtime', 'log_time'], (e, out) => {
  setOption(out, 'logtime', expectBool(e.value, e.key));
});
registerConfigKeys(['logfile', 'log_file'], (e, out) => {
  setOption(out, 'logFile', expectString(e.value, e.key));
});
registerConfigKeys(['pidfile', 'pid_file'], (e, out) => {
  setOption(out, 'pidFile', expectString(e.value, e.key));
});
registerConfigKeys(['ports_file_dir'], (e, out) => {
  setOption(out, 'portsFileDir', expectString(e.value, e.key));
});
registerConfigKeys(['http_port', 'monitor_port'], (e, out) => {
  setOption(out, 'httpPort', expectInt(e.value, e.key, -1));
});
registerConfigKeys(['http'], (e, out) => {
  listen(e, out, 'httpHost', 'httpPort');
});
registerConfigKeys(['http_base_path'], (e, out) => {
  setOption(out, 'httpBasePath', expectString(e.value, e.key));
});

/** Reads and applies a config file. Throws ConfigError (file:line:col: reason). */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const tree = parseConfigFile(path, env);
  return applyConfig(tree, path);
}

export function applyConfig(tree: ConfMap, file: string): LoadedConfig {
  const out: LoadedConfig = { file, options: {}, sections: new Map(), warnings: [] };
  for (const entry of tree.value.values()) {
    const key = entry.key.toLowerCase();
    const handler = handlers.get(key);
    if (handler !== undefined) {
      handler(entry, out);
    } else if (unsupported.has(key)) {
      out.warnings.push(
        `${entry.file}:${entry.line}:${entry.col}: "${entry.key}" is not supported by wirebus and is ignored`,
      );
    } else if (!entry.usedAsVariable) {
      throw new ConfigError(entry, `unknown field "${entry.key}"`);
    }
  }
  return out;
}
