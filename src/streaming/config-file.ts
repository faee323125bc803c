// The FILE store's settings with the reference's names: its `--file_*` flags and the
// `file_options { ... }` section (alias `file`) of the streaming config (keys
// case-insensitive, with the reference's aliases). They fill
// StreamingOptions.fileOptions (store/file-options.ts has the meanings and
// defaults). Importing this module registers the flags.

import { ConfigError, type ConfMap, type ConfValue } from '../config/conf.js';
import { DurationError, parseDuration, parseGoDuration } from '../config/duration.js';
import { registerFlag, UsageError, type CommandLine } from '../config/flags.js';
import type { FileStoreTuning } from './store/file-options.js';

type Kind = 'bool' | 'int' | 'size' | 'duration' | 'seconds' | 'string' | 'ignored';
type Tuning = { -readonly [K in keyof FileStoreTuning]?: FileStoreTuning[K] };

interface Setting {
  /** The flag (without `--`), then the config keys. */
  readonly flag: string;
  readonly keys: readonly string[];
  readonly field: keyof FileStoreTuning | null;
  readonly kind: Kind;
  readonly help: string;
}

const settings: readonly Setting[] = [
  {
    flag: 'file_sync',
    keys: ['sync', 'do_sync', 'sync_on_flush'],
    field: 'sync',
    kind: 'bool',
    help: 'Enable File Store sync on flush (default: true)',
  },
  {
    flag: 'file_auto_sync',
    keys: ['auto_sync'],
    field: 'autoSync',
    kind: 'duration',
    help: "Interval at which the store should be automatically flushed and sync'ed on disk (default: 1m, 0 to disable)",
  },
  {
    flag: 'file_slice_max_msgs',
    keys: ['slice_max_msgs', 'slice_max_count', 'slice_msgs', 'slice_count'],
    field: 'sliceMaxMsgs',
    kind: 'int',
    help: 'Maximum number of messages per file slice (0 for unlimited)',
  },
  {
    flag: 'file_slice_max_bytes',
    keys: ['slice_max_bytes', 'slice_max_size', 'slice_bytes', 'slice_size'],
    field: 'sliceMaxBytes',
    kind: 'size',
    help: 'Maximum file slice size, including index file (default: 64MB, 0 for unlimited)',
  },
  {
    flag: 'file_slice_max_age',
    keys: ['slice_max_age', 'slice_age', 'slice_max_time', 'slice_time_limit'],
    field: 'sliceMaxAge',
    kind: 'duration',
    help: 'Maximum file slice duration starting when the first message is stored (0 for unlimited)',
  },
  {
    flag: 'file_fds_limit',
    keys: ['fds_limit', 'file_descriptors_limit'],
    field: 'fdsLimit',
    kind: 'int',
    help: 'Store will try to use no more file descriptors than this given limit',
  },
  {
    flag: 'file_truncate_bad_eof',
    keys: ['truncate_bad_eof', 'truncate_unexpected_eof'],
    field: 'truncateBadEof',
    kind: 'bool',
    help: 'Truncate files for which there is an unexpected EOF on recovery, dataloss may occur',
  },
  {
    flag: 'file_crc',
    keys: ['crc', 'do_crc'],
    field: 'crc',
    kind: 'bool',
    help: 'Enable file CRC-32 checksum (default: true)',
  },
  {
    flag: 'file_compact_enabled',
    keys: ['compact', 'compact_enabled'],
    field: 'compact',
    kind: 'bool',
    help: 'Enable file compaction (default: true)',
  },
  {
    flag: 'file_compact_frag',
    keys: ['compact_frag', 'compact_fragmentation'],
    field: 'compactFrag',
    kind: 'int',
    help: 'File fragmentation threshold for compaction (default: 50)',
  },
  {
    flag: 'file_compact_interval',
    keys: ['compact_interval'],
    field: 'compactInterval',
    kind: 'seconds',
    help: 'Minimum interval (in seconds) between file compactions (default: 300)',
  },
  {
    flag: 'file_compact_min_size',
    keys: ['compact_min_size'],
    field: 'compactMinSize',
    kind: 'size',
    help: 'Minimum file size for compaction (default: 1MB)',
  },
  {
    flag: 'file_buffer_size',
    keys: ['buffer_size'],
    field: 'bufferSize',
    kind: 'size',
    help: 'File buffer size (in bytes, default: 2MB)',
  },
  {
    flag: 'file_read_buffer_size',
    keys: ['read_buffer_size'],
    field: 'readBufferSize',
    kind: 'size',
    help: 'Size of messages read ahead from message files (in bytes, default: 2MB)',
  },
  {
    flag: 'file_parallel_recovery',
    keys: ['parallel_recovery'],
    field: 'parallelRecovery',
    kind: 'int',
    help: 'On startup, number of channels that can be recovered in parallel (default: 1)',
  },
  {
    flag: 'file_crc_poly',
    keys: ['crc_poly'],
    field: 'crcPoly',
    kind: 'int',
    help: 'Polynomial used to make the table used for CRC-32 checksum (default: 3988292384)',
  },
  {
    flag: 'file_slice_archive_script',
    keys: ['slice_archive_script', 'slice_archive', 'slice_script'],
    field: 'sliceArchiveScript',
    kind: 'string',
    help: 'Path to script to use if you want to archive a file slice being removed',
  },
];

for (const s of settings) {
  registerFlag({ names: [s.flag], value: s.kind !== 'bool', help: s.help });
}

/** The flags above, for "is streaming asked for". */
export const fileFlagNames: ReadonlySet<string> = new Set(settings.map((s) => s.flag));

// As config.ts's parseSize (which imports this module, so it is not imported here).
const SIZE = /^(\d+)\s*([kmgt]i?b?|b)?$/i;
const UNITS: Readonly<Record<string, number>> = {
  k: 1024,
  m: 1024 ** 2,
  g: 1024 ** 3,
  t: 1024 ** 4,
};

function parseSize(text: string): number | null {
  const m = SIZE.exec(text.trim());
  if (m === null) return null;
  return Number(m[1]) * (UNITS[(m[2] ?? '').toLowerCase().charAt(0)] ?? 1);
}

/** The FILE store options given on the command line; UsageError on a bad value. */
export function fileOptionsFromFlags(cl: CommandLine): Tuning {
  const out: Tuning = {};
  for (const s of settings) {
    const v = cl.extra.get(s.flag);
    if (v === undefined || s.field === null) continue;
    const bad = (): never => {
      throw new UsageError(`invalid value "${v}" for flag -${s.flag}: parse error`);
    };
    let n: number | boolean | string;
    switch (s.kind) {
      case 'string':
        n = v;
        break;
      case 'bool':
        n = v === 'true';
        break;
      case 'int':
      case 'seconds':
        if (!/^\d+$/.test(v)) bad();
        n = Number(v) * (s.kind === 'seconds' ? 1000 : 1);
        break;
      case 'size':
        n = parseSize(v) ?? bad();
        break;
      case 'duration':
        try {
          n = parseGoDuration(v);
        } catch (err) {
          const why = err instanceof DurationError ? err.message : String(err);
          throw new UsageError(`invalid value "${v}" for flag -${s.flag}: ${why}`);
        }
        break;
      case 'ignored':
        continue;
    }
    (out as Record<string, number | boolean | string>)[s.field] = n;
  }
  return out;
}

/** `file_options { ... }`: throws ConfigError on an unknown key or a bad value. */
export function readFileOptions(map: ConfMap, warn: (w: string) => void): Tuning {
  const out: Tuning = {};
  for (const entry of map.value.values()) {
    const k = entry.key.toLowerCase();
    const s = settings.find((x) => x.keys.includes(k));
    if (s === undefined)
      throw new ConfigError(entry, `unknown field "${entry.key}" in file_options`);
    if (s.field === null) {
      warn(
        `${entry.file}:${entry.line}:${entry.col}: file_options "${entry.key}" is accepted and ignored`,
      );
      continue;
    }
    (out as Record<string, number | boolean | string>)[s.field] = value(
      s.kind,
      entry.value,
      entry.key,
      warn,
    );
  }
  return out;
}

function value(
  kind: Kind,
  v: ConfValue,
  key: string,
  warn: (w: string) => void,
): number | boolean | string {
  if (kind === 'string') {
    if (v.kind !== 'string') throw new ConfigError(v, `${key}: expected a string, got ${v.kind}`);
    return v.value;
  }
  if (kind === 'bool') {
    if (v.kind !== 'bool') throw new ConfigError(v, `${key}: expected a boolean, got ${v.kind}`);
    return v.value;
  }
  if (kind === 'duration') {
    return parseDuration(v, key, (w) => {
      warn(w.message);
    });
  }
  if (v.kind === 'int') return kind === 'seconds' ? v.value * 1000 : v.value;
  if (kind === 'size' && v.kind === 'string') {
    const n = parseSize(v.value);
    if (n !== null) return n;
    throw new ConfigError(v, `${key}: invalid size "${v.value}"`);
  }
  throw new ConfigError(v, `${key}: expected an integer, got ${v.kind}`);
}
