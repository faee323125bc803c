// JetStream's part of the `wirebus` command: the -js/--jetstream and -sd/--store_dir
// flags and the config file's `jetstream` key (`jetstream: enabled`, or a block with
// store_dir, max_memory_store, max_file_store, domain, sync_interval), as the reference
// reads them; the engine itself is loaded only when JetStream is on.

import { ConfigError } from '../config/conf.js';
import { registerFlag, type CommandLine } from '../config/flags.js';
import {
  expectDuration,
  expectString,
  registerConfigKeys,
  type LoadedConfig,
} from '../config/load.js';
import type { ConfEntry, ConfValue } from '../config/values.js';
import type { Server } from '../server/server.js';
import type { JetStreamOptions } from './options.js';

registerFlag({ names: ['js', 'jetstream'], value: false, help: 'Enable JetStream functionality' });
registerFlag({ names: ['sd', 'store_dir'], value: true, help: 'Set the storage directory' });
registerConfigKeys(['jetstream']);

export interface JetStreamSettings {
  enabled: boolean;
  options: Partial<JetStreamOptions>;
  warnings: string[];
}

function size(v: ConfValue, key: string): number {
  if (v.kind === 'int' && v.value >= 0) return v.value;
  if (v.kind === 'string' && /^\d+\s*[KMGT]?B?$/i.test(v.value.trim())) {
    const m = /^(\d+)\s*([KMGT]?)/i.exec(v.value.trim())!;
    const unit = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }[
      m[2]!.toUpperCase() as '' | 'K' | 'M' | 'G' | 'T'
    ];
    return Number(m[1]) * unit;
  }
  throw new ConfigError(v, `${key}: expected a size, got ${v.kind}`);
}

function enabledWord(v: ConfValue, key: string): boolean {
  if (v.kind === 'bool') return v.value;
  if (v.kind === 'string') {
    const w = v.value.toLowerCase();
    if (w === 'enabled' || w === 'enable' || w === 'true') return true;
    if (w === 'disabled' || w === 'disable' || w === 'false') return false;
  }
  throw new ConfigError(v, `${key}: expected enabled or disabled, got ${v.kind}`);
}

/** The `jetstream` entry of a config file. */
function fromConfig(entry: ConfEntry, config: LoadedConfig, out: JetStreamSettings): void {
  const v = entry.value;
  if (v.kind !== 'map') {
    out.enabled = enabledWord(v, 'jetstream');
    return;
  }
  out.enabled = true;
  for (const f of v.value.values()) {
    const k = f.key.toLowerCase();
    switch (k) {
      case 'enabled':
      case 'enable':
        out.enabled = enabledWord(f.value, 'jetstream.enabled');
        break;
      case 'store_dir':
      case 'store':
      case 'storedir':
        out.options.storeDir = expectString(f.value, 'jetstream.store_dir');
        break;
      case 'max_memory_store':
      case 'max_mem_store':
      case 'max_mem':
        out.options.maxMemoryStore = size(f.value, 'jetstream.max_memory_store');
        break;
      case 'max_file_store':
      case 'max_file':
        out.options.maxFileStore = size(f.value, 'jetstream.max_file_store');
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
  server.onStart(async () => {
    await startJetStream(server, settings.options);
  });
}
