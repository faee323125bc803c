// JetStream's part of the `wirebus` command: the -js/--jetstream and -sd/--store_dir
// flags and the config file's `jetstream` key (`jetstream: enabled`, or a block with
// store_dir, max_memory_store, max_file_store, domain, sync_interval), as the reference
// reads them; the engine itself is loaded only when JetStream is on.

import { ConfigError } from '../config/conf.js';
import { registerFlag, type CommandLine } from '../config/flags.js';
import {
  expectBool,
  expectDuration,
  expectString,
  registerConfigKeys,
  type LoadedConfig,
} from '../config/load.js';
import type { ConfEntry, ConfValue } from '../config/values.js';
import type { Server } from '../server/server.js';
import { domainProblem, type JetStreamOptions } from './options.js';

registerFlag({ names: ['js', 'jetstream'], value: false, help: 'Enable JetStream functionality' });
registerFlag({ names: ['sd', 'store_dir'], value: true, help: 'Set the storage directory' });
registerConfigKeys(['jetstream']);

export interface JetStreamSettings {
  enabled: boolean;
  options: Partial<JetStreamOptions>;
  warnings: string[];
}

const SIZE_SHIFT: Readonly<Record<string, number>> = { K: 10, M: 20, G: 30, T: 40 };

/**
 * The reference's getStorageSize: an integer as is (the config lexer already read `1GB`
 * or `64M` unquoted as one), a quoted string as digits and one of K, M, G, T (powers of
 * 1024; "2GB" is refused as the reference refuses it). `what` starts the error text.
 */
function size(v: ConfValue, what: string): number {
  if (v.kind === 'int') return v.value;
  if (v.kind !== 'string') throw new ConfigError(v, `${what} must be int64 or string`);
  const s = v.value;
  if (s === '') return 0;
  const prefix = s.slice(0, -1);
  if (!/^[+-]?\d+$/.test(prefix))
    throw new ConfigError(
      v,
      `${what} strconv.ParseInt: parsing ${JSON.stringify(prefix)}: invalid syntax`,
    );
  const shift = SIZE_SHIFT[s.slice(-1)];
  if (shift === undefined)
    throw new ConfigError(v, `${what} sizes defined as strings must end in K, M, G, T`);
  return Number(prefix) * 2 ** shift;
}

/** Go's name of a config value's type, as the reference's "got %T" prints it. */
function goType(v: ConfValue): string {
  switch (v.kind) {
    case 'int':
      return 'int64';
    case 'float':
      return 'float64';
    case 'array':
      return '[]interface {}';
    case 'map':
      return 'map[string]interface {}';
    case 'bool':
      return 'bool';
    default:
      return v.kind === 'string' ? 'string' : 'time.Time';
  }
}

function enabledWord(v: ConfValue): boolean {
  if (v.kind === 'bool') return v.value;
  if (v.kind === 'string') {
    const w = v.value.toLowerCase();
    if (w === 'enabled' || w === 'enable') return true;
    if (w === 'disabled' || w === 'disable') return false;
    throw new ConfigError(v, `Expected 'enabled' or 'disabled' for string value, got '${v.value}'`);
  }
  throw new ConfigError(v, `Expected map, bool or string to define JetStream, got ${goType(v)}`);
}

/** Keys of the reference's `jetstream` block that wirebus reads but does not act on. */
const IGNORED_KEYS = new Set([
  'key',
  'ek',
  'encryption_key',
  'cipher',
  'extension_hint',
  'limits',
  'unique_tag',
  'max_outstanding_catchup',
]);

/** The `jetstream` entry of a config file. */
function fromConfig(entry: ConfEntry, config: LoadedConfig, out: JetStreamSettings): void {
  const v = entry.value;
  if (v.kind !== 'map') {
    out.enabled = enabledWord(v);
    return;
  }
  out.enabled = true;
  for (const f of v.value.values()) {
    const k = f.key.toLowerCase();
    switch (k) {
      case 'enabled':
      case 'enable':
        out.enabled = expectBool(f.value, 'jetstream.enabled');
        break;
      case 'store_dir':
      case 'store':
      case 'storedir':
        out.options.storeDir = expectString(f.value, 'jetstream.store_dir');
        break;
      case 'max_memory_store':
      case 'max_mem_store':
      case 'max_mem':
        out.options.maxMemoryStore = size(f.value, 'max_mem_store');
        break;
      case 'max_file_store':
      case 'max_file':
        out.options.maxFileStore = size(f.value, 'max_file_store');
        break;
      case 'domain':
        out.options.domain = expectString(f.value, 'jetstream.domain');
        break;
      case 'sync_interval':
      case 'sync':
        out.options.syncInterval =
          f.value.kind === 'string' && f.value.value.toLowerCase() === 'always'
            ? 0
            : expectDuration(f.value, 'jetstream.sync_interval', config);
        break;
      default:
        if (!IGNORED_KEYS.has(k))
          throw new ConfigError(f, `unknown field ${JSON.stringify(f.key)}`);
        out.warnings.push(
          `${f.file}:${f.line}:${f.col}: "jetstream.${f.key}" is not supported by wirebus and is ignored`,
        );
    }
  }
}

/** The settings from flags over the config file, or the exit code after printing why not. */
export function jetstreamSettingsForCli(
  cl: CommandLine,
  config: LoadedConfig | null,
): JetStreamSettings | number {
  const out: JetStreamSettings = { enabled: false, options: {}, warnings: [] };
  try {
    const entry = config?.sections.get('jetstream');
    if (entry !== undefined && config !== null) fromConfig(entry, config, out);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`wirebus: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const flag = cl.extra.get('jetstream');
  if (flag !== undefined) out.enabled = flag === 'true';
  const dir = cl.extra.get('store_dir');
  if (dir !== undefined) out.options.storeDir = dir;
  const problem = out.enabled ? domainProblem(out.options.domain ?? '') : null;
  if (problem !== null) {
    process.stderr.write(`wirebus: ${problem}\n`);
    return 2;
  }
  return out;
}

/** Turns JetStream on when asked for: it starts with the server, before its listener opens. */
export async function attachJetStreamForCli(
  server: Server,
  settings: JetStreamSettings,
): Promise<void> {
  if (!settings.enabled) return;
  for (const w of settings.warnings) server.logger.warn(w);
  const { startJetStream } = await import('./attach.js');
  server.jetstreamRequested = true;
  server.onStart(async () => {
    await startJetStream(server, settings.options);
  });
}
