// Cluster settings from the config file's `cluster { ... }` block and from the
// command line (`--cluster`, `--cluster_listen`, `--cluster_name`, `--routes`,
// `--cluster_advertise`, `--no_advertise`, `--connect_retries`), with the reference's
// names and rules (server/opts.go: parseCluster, overrideCluster). Importing this
// module registers the flags and the block. Flags win over the file.

import { parseAuthorization, parsePermissions, parseTls } from '../auth/config.js';
import { ConfigError, type ConfMap, type ConfValue } from '../config/conf.js';
import { registerFlag, UsageError, type CommandLine } from '../config/flags.js';
import {
  expectBool,
  expectInt,
  expectString,
  registerConfigKeys,
  splitHostPort,
  type LoadedConfig,
} from '../config/load.js';
import type { ClusterOptions, RoutePermissions } from './options.js';

export interface ClusterSettings {
  /** A cluster port is configured: clustering runs. */
  readonly enabled: boolean;
  readonly options: Partial<ClusterOptions>;
  /** Problems that do not stop the server, for the log. */
  readonly warnings: string[];
  /** The settings of another config file with the same flags on top (a reload). */
  readonly reread: (config: LoadedConfig | null) => ClusterSettings;
}

registerFlag({ names: ['routes'], value: true, help: 'Routes to actively solicit a connection' });
registerFlag({
  names: ['cluster', 'cluster_listen'],
  value: true,
  help: 'Cluster url from which members can solicit routes',
});
registerFlag({
  names: ['cluster_name'],
  value: true,
  help: 'Cluster Name, if not set one will be dynamically generated',
});
registerFlag({
  names: ['cluster_advertise'],
  value: true,
  help: 'Cluster URL to advertise to other servers',
});
registerFlag({
  names: ['no_advertise'],
  value: false,
  help: 'Do not advertise known cluster IPs to clients',
});
registerFlag({
  names: ['connect_retries'],
  value: true,
  help: 'For implicit routes, number of connect retries',
});

registerConfigKeys(['cluster']);

/** The block's settings; `port` is left out when neither listen nor port is given. */
export function readClusterBlock(v: ConfValue, warnings: string[]): Partial<ClusterOptions> {
  if (v.kind !== 'map') {
    throw new ConfigError(v, `Expected map to define cluster, got ${v.kind}`);
  }
  const m: ConfMap = v;
  const o: Partial<ClusterOptions> = {};
  let permissions: RoutePermissions | null = null;
  for (const e of m.value.values()) {
    const key = e.key.toLowerCase();
    switch (key) {
      case 'name':
        o.name = expectString(e.value, e.key);
        break;
      case 'listen': {
        if (e.value.kind === 'int') {
          o.port = e.value.value;
          break;
        }
        const hp = splitHostPort(expectString(e.value, e.key));
        if (hp.host !== null) o.host = hp.host;
        if (hp.port !== null) o.port = hp.port;
        break;
      }
      case 'port':
        o.port = expectInt(e.value, e.key, -1);
        break;
      case 'host':
      case 'net':
        o.host = expectString(e.value, e.key);
        break;
      case 'authorization': {
        const a = parseAuthorization(e.value);
        if (a.users.length > 0) {
          throw new ConfigError(e.value, 'Cluster authorization does not allow multiple users');
        }
        if (a.token !== '') {
          throw new ConfigError(e.value, 'Cluster authorization does not support tokens');
        }
        o.user = a.user;
        o.password = a.password;
        if (a.timeout !== null) o.authTimeout = a.timeout;
        break;
      }
      case 'routes':
        o.routes = readRoutes(e.value, warnings);
        break;
      case 'cluster_advertise':
      case 'advertise':
        o.advertise = expectString(e.value, e.key);
        break;
      case 'no_advertise':
        o.noAdvertise = expectBool(e.value, e.key);
        break;
      case 'connect_retries':
        o.connectRetries = expectInt(e.value, e.key);
        break;
      case 'permissions': {
        const p = parsePermissions(e.value);
        if (p.responses != null) {
          throw new ConfigError(e.value, 'Cluster permissions do not support dynamic responses');
        }
        permissions = { import: p.publish ?? null, export: p.subscribe ?? null };
        break;
      }
      case 'tls':
        o.tls = parseTls(e.value);
        break;
      default:
        if (!e.usedAsVariable) throw new ConfigError(e, `unknown field "${e.key}"`);
    }
  }
  if (permissions !== null) o.permissions = permissions;
  return o;
}

function readRoutes(v: ConfValue, warnings: string[]): string[] {
  if (v.kind !== 'array') throw new ConfigError(v, `routes: expected an array, got ${v.kind}`);
  const routes: string[] = [];
  for (const item of v.value) {
    const url = expectString(item, 'route');
    if (routes.includes(url)) {
      warnings.push(`${item.file}:${item.line}:${item.col}: Duplicate route entry detected`);
      continue;
    }
    routes.push(url);
  }
  return routes;
}

/** `--cluster nats://[user:pass@]host:port` (port -1 for a free one), as overrideCluster. */
function clusterFlag(text: string, o: Partial<ClusterOptions>): void {
  let u: URL;
  let random = false;
  let t = text;
  if (t.endsWith(':-1')) {
    random = true;
    t = t.substring(0, t.length - 3) + ':0';
  }
  try {
    u = new URL(t);
  } catch {
    throw new UsageError(`invalid value "${text}" for flag -cluster: bad URL`);
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (u.port === '' && !t.endsWith(':0')) {
    throw new UsageError(`invalid value "${text}" for flag -cluster: missing port in address`);
  }
  o.host = host;
  o.port = random ? -1 : Number(u.port === '' ? 0 : u.port);
  if (u.username !== '') {
    if (u.password === '') throw new UsageError('expected cluster password to be set');
    o.user = decodeURIComponent(u.username);
    o.password = decodeURIComponent(u.password);
  } else {
    // The flag's URL decides: no credentials in it clears the file's.
    o.user = '';
    o.password = '';
  }
}

/**
 * The cluster settings: the config file's block, then the flags on top. Throws
 * ConfigError or UsageError.
 */
export function resolveClusterSettings(
  cl: CommandLine,
  config: LoadedConfig | null,
): ClusterSettings {
  const warnings: string[] = [];
  let o: Partial<ClusterOptions> = {};
  const entry = config?.sections.get('cluster');
  if (entry !== undefined) o = readClusterBlock(entry.value, warnings);
  const flags = cl.extra;
  const listen = flags.get('cluster_listen');
  if (listen !== undefined && listen !== '') clusterFlag(listen, o);
  const routes = flags.get('routes');
  if (routes !== undefined && routes !== '') {
    o.routes = routes
      .split(',')
      .map((r) => r.trim())
      .filter((r) => r !== '');
  }
  const name = flags.get('cluster_name');
  if (name !== undefined && name !== '') o.name = name;
  const advertise = flags.get('cluster_advertise');
  if (advertise !== undefined && advertise !== '') o.advertise = advertise;
  if (flags.get('no_advertise') === 'true') o.noAdvertise = true;
  const retries = flags.get('connect_retries');
  if (retries !== undefined) {
    if (!/^\d+$/.test(retries)) {
      throw new UsageError(`invalid value "${retries}" for flag -connect_retries: parse error`);
    }
    o.connectRetries = Number(retries);
  }
  const enabled = o.port !== undefined && o.port !== 0;
  if (!enabled && (o.routes?.length ?? 0) > 0) {
    warnings.push('routes are configured but no cluster port: clustering is off');
  }
  return {
    enabled,
    options: o,
    warnings,
    reread: (next) => resolveClusterSettings(cl, next),
  };
}
