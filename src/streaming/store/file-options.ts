// Options of the FILE store, with the reference server's names and defaults
// (nats-streaming-server stores.DefaultFileStoreOptions). The streaming server builds
// one from its flags and config file; every field has a default, so `{ dir }` is a
// complete configuration.
//
//   option            flag                         file_options key     default
//   sync              --file_sync                  sync                 true
//   autoSync          --file_auto_sync (duration)  auto_sync            1 min (0 = off)
//   sliceMaxMsgs      --file_slice_max_msgs        slice_max_msgs       0 (no limit)
//   sliceMaxBytes     --file_slice_max_bytes       slice_max_bytes      64 MB
//   sliceMaxAge       --file_slice_max_age         slice_max_age        0 (no limit)
//   fdsLimit          --file_fds_limit             fds_limit            0 (built-in cap)
//   truncateBadEof    --file_truncate_bad_eof      truncate_bad_eof     false
//   crc               --file_crc                   crc                  true
//   crcPoly           --file_crc_poly              crc_poly             0xedb88320 (IEEE)
//   sliceArchiveScript --file_slice_archive_script slice_archive_script ''
//   compact           --file_compact_enabled       compact              true
//   compactFrag       --file_compact_frag          compact_frag         50 (%)
//   compactInterval   --file_compact_interval      compact_interval     300 s
//   compactMinSize    --file_compact_min_size      compact_min_size     1 MB
//   bufferSize        --file_buffer_size           buffer_size          2 MB
//   readBufferSize    --file_read_buffer_size      read_buffer_size     2 MB
//   parallelRecovery  --file_parallel_recovery     parallel_recovery    1
//
// Durations are milliseconds here, as everywhere in the store layer.
import { CRC_IEEE } from './file-record.js';
import type { StoreLimitsConfig } from './limits.js';
import type { ResolvedLimits } from './limits.js';
import type { StoreHooks } from './types.js';

export interface FileStoreTuning {
  /**
   * fsync (fdatasync) every file written before flush() resolves, so a PubAck means
   * "on disk": survives a power loss. False: flush() resolves once the OS has the
   * bytes (survives a process crash), and `autoSync` bounds what a power loss takes.
   */
  readonly sync: boolean;
  /**
   * Milliseconds between background fsyncs; 0: never. With `sync` off it bounds what a
   * power loss takes; with it on, it syncs deliveries and acks of channels nobody
   * publishes to (the rest are synced with each publish batch).
   */
  readonly autoSync: number;
  /** A new slice is started after this many messages (0: no count limit). */
  readonly sliceMaxMsgs: number;
  /** ... or once a slice's .dat would pass this many bytes (0: no size limit). */
  readonly sliceMaxBytes: number;
  /** ... or once the slice's first message is this old, in ms (0: no age limit). */
  readonly sliceMaxAge: number;
  /** Soft cap on open files; 0 means the built-in cap (DEFAULT_FDS_CAP). */
  readonly fdsLimit: number;
  /**
   * At recovery, cut a file at its first unreadable record (a torn tail after a
   * crash, or damage) instead of refusing to start. What was cut is logged.
   */
  readonly truncateBadEof: boolean;
  /** Check the CRC of records read back from disk (recovery included, as the reference). */
  readonly crc: boolean;
  /** CRC32 polynomial, reversed form as Go's crc32.MakeTable takes it (the reference's). */
  readonly crcPoly: number;
  /**
   * Run with (channel, dat, idx) when limits remove a slice, its files first renamed
   * with a `.bak` suffix: the script archives or removes them. '' removes them.
   */
  readonly sliceArchiveScript: string;
  /** Rewrite subs.dat and clients.dat once they are mostly obsolete records. */
  readonly compact: boolean;
  /** Percentage of obsolete records that triggers a compaction. */
  readonly compactFrag: number;
  /** Minimum milliseconds between two compactions of one file. */
  readonly compactInterval: number;
  /** Files smaller than this are never compacted. */
  readonly compactMinSize: number;
  /** Size of the write buffers records are copied into (one write per file per turn). */
  readonly bufferSize: number;
  /** Bytes read at once when a subscription reads messages no longer cached. */
  readonly readBufferSize: number;
  /** Channels recovered concurrently. */
  readonly parallelRecovery: number;
  /**
   * Bytes of recently stored messages kept in memory per channel, for delivery; all
   * channels together keep at most four times this (file-msgs.ts CacheBudget), and
   * none keeps messages its limits removed.
   */
  readonly cacheBytes: number;
}

export interface FileStoreOptions extends StoreHooks, Partial<FileStoreTuning> {
  /** Root directory of the store (`--dir`); created if missing. */
  readonly dir: string;
  /** Limits as configured (validated; throws StoreError INVALID_LIMITS), or resolved. */
  readonly limits?: StoreLimitsConfig | ResolvedLimits;
  /** The directory lock was taken over by another server: stop writing (FT). */
  readonly onLockLost?: () => void;
}

/** Used when fdsLimit is 0: far below any system limit, far above what one store needs. */
export const DEFAULT_FDS_CAP = 512;

export const DEFAULT_FILE_STORE_TUNING: FileStoreTuning = Object.freeze({
  sync: true,
  autoSync: 60_000,
  sliceMaxMsgs: 0,
  sliceMaxBytes: 64 * 1024 * 1024,
  sliceMaxAge: 0,
  fdsLimit: 0,
  truncateBadEof: false,
  crc: true,
  crcPoly: CRC_IEEE,
  sliceArchiveScript: '',
  compact: true,
  compactFrag: 50,
  compactInterval: 300_000,
  compactMinSize: 1024 * 1024,
  bufferSize: 2 * 1024 * 1024,
  readBufferSize: 2 * 1024 * 1024,
  parallelRecovery: 1,
  cacheBytes: 16 * 1024 * 1024,
});

const NON_NEGATIVE: readonly (keyof FileStoreTuning)[] = [
  'autoSync',
  'sliceMaxMsgs',
  'sliceMaxBytes',
  'sliceMaxAge',
  'fdsLimit',
  'compactInterval',
  'compactMinSize',
  'cacheBytes',
];

/** Defaults applied and values checked; throws Error with the offending option. */
export function resolveFileTuning(o: Partial<FileStoreTuning>): FileStoreTuning {
  const t: FileStoreTuning = { ...DEFAULT_FILE_STORE_TUNING };
  for (const key of Object.keys(DEFAULT_FILE_STORE_TUNING) as (keyof FileStoreTuning)[]) {
    const v = o[key];
    if (v !== undefined) (t as Record<keyof FileStoreTuning, number | boolean | string>)[key] = v;
  }
  for (const key of NON_NEGATIVE) {
    const v = t[key];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw new Error(`file store: option ${key} must be a non-negative integer (${String(v)})`);
    }
  }
  if (!(t.compactFrag >= 0 && t.compactFrag <= 100)) {
    throw new Error(`file store: option compactFrag must be between 0 and 100 (${t.compactFrag})`);
  }
  if (!Number.isSafeInteger(t.crcPoly) || t.crcPoly < 1 || t.crcPoly > 0xffffffff) {
    throw new Error(`file store: crc polynomial should be between 1 and 4294967295 (${t.crcPoly})`);
  }
  for (const key of ['bufferSize', 'readBufferSize', 'parallelRecovery'] as const) {
    if (!Number.isSafeInteger(t[key]) || t[key] < 1) {
      throw new Error(`file store: option ${key} must be at least 1 (${t[key]})`);
    }
  }
  return Object.freeze(t);
}

/** Slice limits of a channel: as configured, or ¼ of the channel limits if all are 0. */
export interface SliceLimits {
  readonly maxMsgs: number;
  readonly maxBytes: number;
  readonly maxAge: number;
}

export function sliceLimits(
  t: FileStoreTuning,
  channel: { maxMsgs: number; maxBytes: number; maxAge: number },
): SliceLimits {
  let { sliceMaxMsgs: maxMsgs, sliceMaxBytes: maxBytes, sliceMaxAge: maxAge } = t;
  if (maxMsgs === 0 && maxBytes === 0 && maxAge === 0) {
    // The reference derives them so that limits drop a quarter of a channel at a time.
    maxMsgs = channel.maxMsgs > 0 ? Math.max(1, Math.floor(channel.maxMsgs / 4)) : 0;
    maxBytes = channel.maxBytes > 0 ? Math.max(1, Math.floor(channel.maxBytes / 4)) : 0;
    maxAge = channel.maxAge > 0 ? Math.max(1000, Math.floor(channel.maxAge / 4)) : 0;
  }
  return { maxMsgs, maxBytes, maxAge };
}
