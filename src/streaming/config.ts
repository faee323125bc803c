// Streaming settings from the command line and the config file, with the reference
// streaming server's names: its flags (`-cid`, `-st`, `-mm`, `-hbi`, `-ns`, ...) and
// its `streaming { ... }` section (keys case-insensitive, with the reference's
// aliases). Importing this module registers the flags and the section.

import {
  ConfigError,
  findKey,
  parseConfigFile,
  type ConfMap,
  type ConfValue,
} from '../config/conf.js';
import { DurationError, parseGoDuration } from '../config/duration.js';
import { registerFlag, UsageError, type CommandLine } from '../config/flags.js';
import { expectDuration, registerConfigKeys, type LoadedConfig } from '../config/load.js';
import { fileFlagNames, fileOptionsFromFlags, readFileOptions } from './config-file.js';
import {
  clusterFlagNames,
  clusteredFlag,
  clusteringFromFlags,
  readClusterSection,
  resolveClustering,
} from './config-cluster.js';
import type { StreamingOptions, StoreKind } from './options.js';
import type { ChannelLimitsOverride, StoreLimitsConfig } from './store/limits.js';

/** Whether streaming runs, and with what; flags win over the config file. */
export interface StreamingSettings {
  readonly enabled: boolean;
  readonly options: Partial<StreamingOptions>;
  /** Problems that do not stop the server (ignored keys), for the log. */
  readonly warnings: string[];
}

// ---- flags ------------------------------------------------------------------------

const valueFlags: [string[], string][] = [
  [['cid', 'cluster_id'], 'Cluster ID (default: test-cluster)'],
  [['st', 'store'], 'Store type: MEMORY|FILE|SQL (default: MEMORY)'],
  [['dir'], 'For FILE store type, this is the root directory'],
  [['mc', 'max_channels'], 'Max number of channels (0 for unlimited)'],
  [['msu', 'max_subs'], 'Max number of subscriptions per channel (0 for unlimited)'],
  [['mm', 'max_msgs'], 'Max number of messages per channel (0 for unlimited)'],
  [['mb', 'max_bytes'], 'Max messages total size per channel (0 for unlimited)'],
  [['ma', 'max_age'], 'Max duration a message can be stored ("0s" for unlimited)'],
  [['mi', 'max_inactivity'], 'Max inactivity before a channel is deleted ("0s" for unlimited)'],
  [['hbi', 'hb_interval'], 'Interval at which server sends heartbeat to a client'],
  [['hbt', 'hb_timeout'], 'How long server waits for a heartbeat response'],
  [['hbf', 'hb_fail_count'], 'Failed heartbeats before server closes the client connection'],
  [['ns', 'nats_server'], 'Connect to this external NATS Server URL (embedded otherwise)'],
  [['sc', 'stan_config'], 'Streaming server configuration file'],
  [
    ['ft_group'],
    'Name of the FT Group. A group can be 2 or more servers with a single active server and all sharing the same datastore',
  ],
  [['sql_driver'], 'Name of the SQL Driver ("postgres" or "mysql")'],
  [['sql_source'], 'Datasource used when opening an SQL connection to the database'],
  [['sql_max_open_conns'], 'Maximum number of opened connections to the database'],
  [['sql_bulk_insert_limit'], 'Limit the number of messages inserted in one SQL query (from 5 on)'],
  [['io_batch_size'], 'Max number of messages in an IO batch'],
  [['io_sleep_time'], 'Duration in microseconds of the IO sleep (accepted, not used)'],
];

const boolFlags: [string[], string][] = [
  [['streaming'], 'Run the streaming (NATS Streaming) layer'],
  [['SD', 'stan_debug'], 'Enable STAN debugging output'],
  [['SV', 'stan_trace'], 'Trace the raw STAN protocol'],
  [['SDV'], 'Debug and trace STAN'],
  [['replace_durable'], 'Replace the existing durable subscription instead of an error'],
  [['sql_no_caching'], 'One SubsPending row per pending message (writes are always batched)'],
];

for (const [names, help] of valueFlags) registerFlag({ names, value: true, help });
for (const [names, help] of boolFlags) registerFlag({ names, value: false, help });

/** Canonical names of the flags above (the last name of each). */
const streamingFlagNames = new Set(
  [...valueFlags, ...boolFlags].map(([names]) => names[names.length - 1]!),
);

registerConfigKeys(['streaming']);

// ---- values -------------------------------------------------------------------------

const SIZE = /^(\d+)\s*([kmgt]i?b?|b)?$/i;

/** A size as the reference accepts it: `1024`, `10MB`, `1GB`, `64KB` (1024-based). */
export function parseSize(text: string): number | null {
  const m = SIZE.exec(text.trim());
  if (m === null) return null;
  const n = Number(m[1]);
  const unit = (m[2] ?? '').toLowerCase().charAt(0);
  const mult =
    unit === 'k'
      ? 1024
      : unit === 'm'
        ? 1024 ** 2
        : unit === 'g'
          ? 1024 ** 3
          : unit === 't'
            ? 1024 ** 4
            : 1;
  return n * mult;
}

function flagInt(name: string, v: string): number {
  if (!/^-?\d+$/.test(v))
    throw new UsageError(`invalid value "${v}" for flag -${name}: parse error`);
  return Number(v);
}

function flagDuration(name: string, v: string): number {
  try {
    return parseGoDuration(v);
  } catch (err) {
    const why = err instanceof DurationError ? err.message : String(err);
    throw new UsageError(`invalid value "${v}" for flag -${name}: ${why}`);
  }
}

function flagBool(v: string): boolean {
  return v === 'true';
}

function storeKind(v: string, fail: (msg: string) => never): StoreKind {
  const u = v.toUpperCase();
  if (u === 'MEMORY' || u === 'FILE' || u === 'SQL') return u;
  return fail(`unknown store type: ${v}`);
}

// ---- the command line -----------------------------------------------------------------

/** True when the command line has any streaming flag. */
export function hasStreamingFlags(cl: CommandLine): boolean {
  for (const name of cl.extra.keys()) {
    if (streamingFlagNames.has(name) || fileFlagNames.has(name) || clusterFlagNames.has(name)) {
      return true;
    }
  }
  return false;
}

function fromFlags(cl: CommandLine): {
  options: Partial<StreamingOptions>;
  limits: StoreLimitsConfig;
} {
  const o: Partial<StreamingOptions> = {};
  const limits: { -readonly [K in keyof StoreLimitsConfig]: StoreLimitsConfig[K] } = {};
  const fail = (msg: string): never => {
    throw new UsageError(msg);
  };
  for (const [name, v] of cl.extra) {
    switch (name) {
      case 'cluster_id':
        o.clusterId = v;
        break;
      case 'store':
        o.storeType = storeKind(v, fail);
        break;
      case 'dir':
        o.dir = v;
        break;
      case 'max_channels':
        limits.maxChannels = flagInt(name, v);
        break;
      case 'max_subs':
        limits.maxSubscriptions = flagInt(name, v);
        break;
      case 'max_msgs':
        limits.maxMsgs = flagInt(name, v);
        break;
      case 'max_bytes': {
        const n = parseSize(v);
        if (n === null) fail(`invalid value "${v}" for flag -${name}: parse error`);
        limits.maxBytes = n!;
        break;
      }
      case 'max_age':
        limits.maxAge = flagDuration(name, v);
        break;
      case 'max_inactivity':
        limits.maxInactivity = flagDuration(name, v);
        break;
      case 'hb_interval':
        o.hbInterval = flagDuration(name, v);
        break;
      case 'hb_timeout':
        o.hbTimeout = flagDuration(name, v);
        break;
      case 'hb_fail_count':
        o.hbFailCount = flagInt(name, v);
        break;
      case 'nats_server':
        o.natsServer = v;
        break;
      case 'stan_debug':
        o.debug = flagBool(v);
        break;
      case 'stan_trace':
        o.trace = flagBool(v);
        break;
      case 'SDV':
        o.debug = o.trace = flagBool(v);
        break;
      case 'replace_durable':
        o.replaceDurable = flagBool(v);
        break;
      case 'io_batch_size':
        o.ioBatchSize = flagInt(name, v);
        break;
      case 'ft_group':
        o.ftGroup = v;
        break;
      case 'sql_driver':
        o.sqlDriver = v;
        break;
      case 'sql_source':
        o.sqlSource = v;
        break;
      case 'sql_no_caching':
        o.sqlNoCaching = flagBool(v);
        break;
      case 'sql_max_open_conns':
        o.sqlMaxOpenConns = flagInt(name, v);
        break;
      case 'sql_bulk_insert_limit':
        o.sqlBulkInsertLimit = flagInt(name, v);
        break;
      default:
        break;
    }
  }
  const file = fileOptionsFromFlags(cl);
  if (Object.keys(file).length > 0) o.fileOptions = file;
  return { options: o, limits };
}

// ---- the config file --------------------------------------------------------------------

type Reader = (
  value: ConfValue,
  key: string,
  o: Partial<StreamingOptions>,
  l: LimitsOut,
  warn: (w: string) => void,
) => void;
type LimitsOut = { -readonly [K in keyof StoreLimitsConfig]: StoreLimitsConfig[K] };

function str(v: ConfValue, key: string): string {
  if (v.kind !== 'string') throw new ConfigError(v, `${key}: expected a string, got ${v.kind}`);
  return v.value;
}

function int(v: ConfValue, key: string): number {
  if (v.kind !== 'int') throw new ConfigError(v, `${key}: expected an integer, got ${v.kind}`);
  return v.value;
}

function bool(v: ConfValue, key: string): boolean {
  if (v.kind !== 'bool') throw new ConfigError(v, `${key}: expected a boolean, got ${v.kind}`);
  return v.value;
}

function size(v: ConfValue, key: string): number {
  if (v.kind === 'int') return v.value;
  const n = parseSize(str(v, key));
  if (n === null) throw new ConfigError(v, `${key}: invalid size "${str(v, key)}"`);
  return n;
}

function duration(v: ConfValue, key: string, warn: (w: string) => void): number {
  const out: LoadedConfig = { file: v.file, options: {}, sections: new Map(), warnings: [] };
  const ms = expectDuration(v, key, out);
  for (const w of out.warnings) warn(w);
  return ms;
}

const limitKeys: [
  string[],
  keyof ChannelLimitsOverride | 'maxChannels',
  'int' | 'size' | 'duration',
][] = [
  [['max_channels', 'mc', 'maxchannels'], 'maxChannels', 'int'],
  [['max_msgs', 'mm', 'maxmsgs', 'max_count', 'maxcount'], 'maxMsgs', 'int'],
  [['max_bytes', 'mb', 'maxbytes'], 'maxBytes', 'size'],
  [['max_age', 'ma', 'maxage'], 'maxAge', 'duration'],
  [['max_subs', 'msu', 'max_subscriptions', 'maxsubscriptions'], 'maxSubscriptions', 'int'],
  [['max_inactivity', 'mi', 'maxinactivity'], 'maxInactivity', 'duration'],
];
const channelsKeys = ['channels', 'channels_limits', 'per_channel', 'per_channel_limits'];

function limitValue(
  kind: 'int' | 'size' | 'duration',
  v: ConfValue,
  key: string,
  warn: (w: string) => void,
): number {
  if (kind === 'int') return int(v, key);
  if (kind === 'size') return size(v, key);
  return duration(v, key, warn);
}

function readLimits(map: ConfMap, l: LimitsOut, warn: (w: string) => void): void {
  for (const entry of map.value.values()) {
    const k = entry.key.toLowerCase();
    if (channelsKeys.includes(k)) {
      if (entry.value.kind !== 'map')
        throw new ConfigError(entry.value, `${entry.key}: expected a map`);
      const per: Record<string, ChannelLimitsOverride> = {};
      for (const ch of entry.value.value.values()) {
        if (ch.value.kind !== 'map') throw new ConfigError(ch.value, `${ch.key}: expected a map`);
        const o: { -readonly [K in keyof ChannelLimitsOverride]: number } = {};
        for (const f of ch.value.value.values()) {
          const spec = limitKeys.find(([names]) => names.includes(f.key.toLowerCase()));
          if (spec === undefined || spec[1] === 'maxChannels') {
            throw new ConfigError(
              f,
              `unknown field "${f.key}" in the limits of channel "${ch.key}"`,
            );
          }
          const n = limitValue(spec[2], f.value, f.key, warn);
          // In a config file 0 means unlimited (stored as -1); an absent key inherits.
          o[spec[1]] = n === 0 ? -1 : n;
        }
        per[ch.key] = o;
      }
      l.perChannel = per;
      continue;
    }
    const spec = limitKeys.find(([names]) => names.includes(k));
    if (spec === undefined)
      throw new ConfigError(entry, `unknown field "${entry.key}" in store_limits`);
    l[spec[1]] = limitValue(spec[2], entry.value, entry.key, warn);
  }
}

/** `sql_options { driver, source, no_caching, max_open_conns (max_conns), bulk_insert_limit }`. */
function readSqlOptions(map: ConfMap, o: Partial<StreamingOptions>): void {
  for (const entry of map.value.values()) {
    const k = entry.key.toLowerCase();
    if (k === 'driver') o.sqlDriver = str(entry.value, entry.key);
    else if (k === 'source') o.sqlSource = str(entry.value, entry.key);
    else if (k === 'no_caching') o.sqlNoCaching = bool(entry.value, entry.key);
    else if (k === 'max_open_conns' || k === 'max_conns')
      o.sqlMaxOpenConns = int(entry.value, entry.key);
    else if (k === 'bulk_insert_limit') o.sqlBulkInsertLimit = int(entry.value, entry.key);
    else throw new ConfigError(entry, `unknown field "${entry.key}" in sql_options`);
  }
}

const readers: [string[], Reader][] = [
  [['id', 'cid', 'cluster_id'], (v, k, o) => (o.clusterId = str(v, k))],
  [['discover_prefix'], (v, k, o) => (o.discoverPrefix = str(v, k))],
  [
    ['store', 'st', 'store_type', 'storetype'],
    (v, k, o) =>
      (o.storeType = storeKind(str(v, k), (msg) => {
        throw new ConfigError(v, msg);
      })),
  ],
  [['dir', 'datastore'], (v, k, o) => (o.dir = str(v, k))],
  [
    ['hb_interval', 'hbi', 'server_to_client_hb_interval'],
    (v, k, o, _l, w) => (o.hbInterval = duration(v, k, w)),
  ],
  [
    ['hb_timeout', 'hbt', 'server_to_client_hb_timeout'],
    (v, k, o, _l, w) => (o.hbTimeout = duration(v, k, w)),
  ],
  [
    ['hb_fail_count', 'hbf', 'server_to_client_hb_fail_count'],
    (v, k, o) => (o.hbFailCount = int(v, k)),
  ],
  [['nats_server', 'ns', 'nats_server_url'], (v, k, o) => (o.natsServer = str(v, k))],
  [['sd', 'stan_debug'], (v, k, o) => (o.debug = bool(v, k))],
  [['sv', 'stan_trace'], (v, k, o) => (o.trace = bool(v, k))],
  [
    [
      'replace_durable',
      'replace_durables',
      'replace_duplicate_durable',
      'replace_duplicate_durables',
    ],
    (v, k, o) => (o.replaceDurable = bool(v, k)),
  ],
  [['io_batch_size'], (v, k, o) => (o.ioBatchSize = int(v, k))],
  [
    ['store_limits', 'limits', 'storelimits'],
    (v, k, _o, l, w) => {
      if (v.kind !== 'map') throw new ConfigError(v, `${k}: expected a map`);
      readLimits(v, l, w);
    },
  ],
  [['ft_group', 'ft_group_name'], (v, k, o) => (o.ftGroup = str(v, k))],
  [
    ['cluster', 'clustering'],
    (v, k, o) => {
      if (v.kind !== 'map') throw new ConfigError(v, `${k}: expected a map`);
      o.clustering = resolveClustering(readClusterSection(v));
    },
  ],
  [
    ['file_options', 'file'],
    (v, k, o, _l, w) => {
      if (v.kind !== 'map') throw new ConfigError(v, `${k}: expected a map`);
      o.fileOptions = { ...o.fileOptions, ...readFileOptions(v, w) };
    },
  ],
  [
    ['sql_options', 'sql'],
    (v, k, o) => {
      if (v.kind !== 'map') throw new ConfigError(v, `${k}: expected a map`);
      readSqlOptions(v, o);
    },
  ],
];

/** Keys of the reference that wirebus accepts and ignores (with a warning). */
const ignored = new Set([
  'partitioning',
  'syslog_name',
  'username',
  'user',
  'password',
  'pass',
  'token',
  'nkey_seed_file',
  'credentials',
  'tls',
  'secure',
  'encrypt',
  'encryption_cipher',
  'encryption_key',
  'io_sleep_time',
  'store_limits_channels',
]);

/** Reads a `streaming { ... }` block (or a whole -sc file without one). */
export function readStreamingSection(map: ConfMap): {
  options: Partial<StreamingOptions>;
  limits: LimitsOut;
  warnings: string[];
} {
  const options: Partial<StreamingOptions> = {};
  const limits: LimitsOut = {};
  const warnings: string[] = [];
  const warn = (w: string): void => {
    warnings.push(w);
  };
  for (const entry of map.value.values()) {
    const k = entry.key.toLowerCase();
    const reader = readers.find(([names]) => names.includes(k));
    if (reader !== undefined) {
      reader[1](entry.value, entry.key, options, limits, warn);
    } else if (ignored.has(k)) {
      warnings.push(
        `${entry.file}:${entry.line}:${entry.col}: streaming "${entry.key}" is not supported by wirebus yet and is ignored`,
      );
    } else if (!entry.usedAsVariable) {
      throw new ConfigError(entry, `unknown field "${entry.key}" in streaming`);
    }
  }
  return { options, limits, warnings };
}

/**
 * The streaming settings: the config file's `streaming` section (or a -sc file),
 * then the flags on top. Throws ConfigError or UsageError.
 */
export function resolveStreamingSettings(
  cl: CommandLine,
  config: LoadedConfig | null,
): StreamingSettings {
  let fileOptions: Partial<StreamingOptions> = {};
  let fileLimits: LimitsOut = {};
  const warnings: string[] = [];
  let section = false;
  const entry = config?.sections.get('streaming');
  if (entry !== undefined) {
    if (entry.value.kind !== 'map') throw new ConfigError(entry.value, 'streaming: expected a map');
    section = true;
    const r = readStreamingSection(entry.value);
    fileOptions = r.options;
    fileLimits = r.limits;
    warnings.push(...r.warnings);
  }
  const sc = cl.extra.get('stan_config');
  if (sc !== undefined && sc !== '') {
    const tree = parseConfigFile(sc);
    const block = findKey(tree, 'streaming');
    const map = block !== undefined && block.value.kind === 'map' ? block.value : tree;
    const r = readStreamingSection(block === undefined ? withoutCoreKeys(map) : map);
    fileOptions = { ...fileOptions, ...r.options };
    fileLimits = { ...fileLimits, ...r.limits };
    warnings.push(...r.warnings);
    section = true;
  }
  const flags = fromFlags(cl);
  const limits: StoreLimitsConfig = { ...fileLimits, ...flags.limits };
  const options: Partial<StreamingOptions> = { ...fileOptions, ...flags.options, limits };
  // FILE store options: the flags win field by field over file_options.
  if (fileOptions.fileOptions !== undefined || flags.options.fileOptions !== undefined) {
    options.fileOptions = { ...fileOptions.fileOptions, ...flags.options.fileOptions };
  }
  // Clustered mode: the config file's `cluster {}` block, the --cluster_* flags on top;
  // --clustered=false turns it off.
  const clusterFlags = clusteringFromFlags(cl);
  if (clusteredFlag(cl) === false) options.clustering = null;
  else if (clusterFlags !== undefined && (clusteredFlag(cl) === true || options.clustering)) {
    const base = options.clustering ?? undefined;
    options.clustering = resolveClustering({
      ...base,
      ...clusterFlags,
      ignored: [...(base?.ignored ?? []), ...(clusterFlags.ignored ?? [])],
    });
  }
  return { enabled: section || hasStreamingFlags(cl), options, warnings };
}

/** A -sc file without a streaming block may also hold the core server's keys. */
function withoutCoreKeys(map: ConfMap): ConfMap {
  const known = new Set(readers.flatMap(([names]) => names).concat([...ignored]));
  const value = new Map([...map.value].filter(([, e]) => known.has(e.key.toLowerCase())));
  return { ...map, value };
}
