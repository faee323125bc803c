// Options of the streaming layer, with the reference server's defaults
// (nats-streaming-server's server.GetDefaultOptions). Durations are milliseconds.

import { validateClustering, type ClusteringOptions } from './cluster/options.js';
import type { FileStoreTuning } from './store/file-options.js';
import type { StoreLimitsConfig } from './store/limits.js';
import { parseDriver } from './store/sql/db.js';
import type { Store } from './store/types.js';

export type StoreKind = 'MEMORY' | 'FILE' | 'SQL';

export interface StreamingOptions {
  /** Cluster ID: the suffix of every streaming subject. */
  clusterId: string;
  /** Prefix of the discover subject (`discover_prefix`). */
  discoverPrefix: string;
  /** Store type. */
  storeType: StoreKind;
  /** Directory of the FILE store. */
  dir: string;
  /**
   * FILE store options (`--file_*` flags, `file_options { ... }`): see
   * store/file-options.ts for the names and defaults; absent fields take the default.
   */
  fileOptions: Partial<FileStoreTuning>;
  /** SQL store: driver (`--sql_driver`: postgres or mysql) and connection string (`--sql_source`). */
  sqlDriver: string;
  sqlSource: string;
  /** `--sql_no_caching`: one SubsPending row per pending sequence, as the reference then writes. */
  sqlNoCaching: boolean;
  /** `--sql_max_open_conns`: connections to the database at most (0: wirebus's default). */
  sqlMaxOpenConns: number;
  /**
   * `--sql_bulk_insert_limit`: messages per INSERT at most, from 5 on (lower values
   * and `--sql_no_caching` leave it off, as in the reference).
   */
  sqlBulkInsertLimit: number;
  /** Fault-tolerance group (`--ft_group`): empty for a standalone server. */
  ftGroup: string;
  /**
   * Clustered mode (`--clustered`, `streaming { cluster {} }`): the channels live in
   * the JetStream of the `-ns` NATS cluster; null for a standalone or FT server.
   */
  clustering: ClusteringOptions | null;
  /** Store limits (global and per channel); validated when the server starts. */
  limits: StoreLimitsConfig;
  /** A store built by the embedding program; wins over storeType. */
  store: Store | null;
  /** Server-to-client heartbeat interval, timeout and failures tolerated. */
  hbInterval: number;
  hbTimeout: number;
  hbFailCount: number;
  /** Timeout of the liveness probe of the old client on a duplicate client ID. */
  clientCheckTimeout: number;
  /** NATS server URL(s) to connect to; empty for the in-process bus. */
  natsServer: string;
  /** A new durable with the name of an online one replaces it instead of failing. */
  replaceDurable: boolean;
  /** Publishes stored before one store flush (`io_batch_size`). */
  ioBatchSize: number;
  debug: boolean;
  trace: boolean;
}

export const DEFAULT_CLUSTER_ID = 'test-cluster';
export const DEFAULT_DISCOVER_PREFIX = '_STAN.discover';

export const defaultStreamingOptions: Readonly<StreamingOptions> = Object.freeze({
  clusterId: DEFAULT_CLUSTER_ID,
  discoverPrefix: DEFAULT_DISCOVER_PREFIX,
  storeType: 'MEMORY',
  dir: '',
  fileOptions: {},
  sqlDriver: '',
  sqlSource: '',
  sqlNoCaching: false,
  sqlMaxOpenConns: 0,
  sqlBulkInsertLimit: 0,
  ftGroup: '',
  clustering: null,
  limits: {},
  store: null,
  hbInterval: 30_000,
  hbTimeout: 10_000,
  hbFailCount: 10,
  clientCheckTimeout: 500,
  natsServer: '',
  replaceDurable: false,
  ioBatchSize: 1024,
  debug: false,
  trace: false,
});

export function resolveStreamingOptions(partial: Partial<StreamingOptions>): StreamingOptions {
  const o: StreamingOptions = { ...defaultStreamingOptions };
  for (const [k, v] of Object.entries(partial) as [string, unknown][]) {
    if (v !== undefined) (o as unknown as Record<string, unknown>)[k] = v;
  }
  return o;
}

/** Problems that stop the server from starting, as the reference words them. */
export function validateStreamingOptions(o: StreamingOptions): string[] {
  const problems: string[] = [];
  if (!/^[a-zA-Z0-9_-]+$/.test(o.clusterId)) {
    problems.push(`invalid cluster name "${o.clusterId}", only alphanumeric and '-', '_' allowed`);
  }
  const positive = (name: string, v: number): void => {
    if (!Number.isFinite(v) || v <= 0) problems.push(`${name} must be positive (${v})`);
  };
  positive('hb_interval', o.hbInterval);
  positive('hb_timeout', o.hbTimeout);
  if (!Number.isInteger(o.hbFailCount) || o.hbFailCount < 0) {
    problems.push(`hb_fail_count must be a non-negative integer (${o.hbFailCount})`);
  }
  if (o.store === null && o.storeType === 'SQL') {
    if (o.sqlDriver === '' || o.sqlSource === '') {
      problems.push(
        'sql: --sql_driver (postgres or mysql) and --sql_source are required for the SQL store',
      );
    } else if (parseDriver(o.sqlDriver) === undefined) {
      problems.push(`sql: driver "${o.sqlDriver}" is not supported (postgres or mysql)`);
    }
    if (!Number.isInteger(o.sqlMaxOpenConns) || o.sqlMaxOpenConns < 0) {
      problems.push(`sql_max_open_conns must be a non-negative integer (${o.sqlMaxOpenConns})`);
    }
    if (!Number.isSafeInteger(o.sqlBulkInsertLimit)) {
      problems.push(`sql_bulk_insert_limit must be an integer (${o.sqlBulkInsertLimit})`);
    }
  }
  if (o.store === null && o.storeType === 'FILE' && o.dir === '') {
    problems.push('file store: --dir is required for the FILE store');
  }
  if (o.clustering !== null) {
    problems.push(...validateClustering(o.clustering, o.natsServer));
    if (o.ftGroup !== '') problems.push('ft_group and clustering cannot be used together');
  }
  if (o.ftGroup !== '' && o.store === null && o.storeType === 'MEMORY') {
    problems.push('ft: only FILE or SQL stores supported in FT mode');
  }
  if (!Number.isInteger(o.ioBatchSize) || o.ioBatchSize < 1) {
    problems.push(`io_batch_size must be at least 1 (${o.ioBatchSize})`);
  }
  return problems;
}
