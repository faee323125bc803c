// The clustered mode's settings with the reference's names: `--clustered`,
// `--cluster_node_id`, `--cluster_peers`, `--cluster_bootstrap`, `--cluster_log_path`,
// the other `--cluster_*` flags, and the `cluster { ... }` block of the streaming
// section (keys case-insensitive). They fill StreamingOptions.clustering
// (cluster/options.ts). Settings about the reference's local raft log are accepted
// and listed in `ignored`, for the server to log once. Importing this module
// registers the flags.

import { ConfigError, type ConfMap, type ConfValue } from '../config/conf.js';
import { DurationError, parseGoDuration } from '../config/duration.js';
import { registerFlag, type CommandLine } from '../config/flags.js';
import { DEFAULT_CLUSTERING, type ClusteringOptions } from './cluster/options.js';

type Kind = 'bool' | 'string' | 'int';

interface Setting {
  readonly flag: string | null;
  /** The key inside `cluster { }`. */
  readonly key: string;
  readonly kind: Kind | 'duration' | 'peers';
  readonly help: string;
  /** Meaningless without a local raft log: accepted, logged as ignored. */
  readonly ignored?: true;
}

const settings: readonly Setting[] = [
  { flag: 'clustered', key: '', kind: 'bool', help: 'Run the server in a clustered configuration' },
  {
    flag: 'cluster_node_id',
    key: 'node_id',
    kind: 'string',
    help: 'ID of the node within the cluster',
  },
  {
    flag: 'cluster_peers',
    key: 'peers',
    kind: 'peers',
    help: 'Comma-separated list of peer node IDs',
  },
  {
    flag: 'cluster_bootstrap',
    key: 'bootstrap',
    kind: 'bool',
    help: 'Bootstrap the cluster (accepted: the lease needs no bootstrap)',
    ignored: true,
  },
  {
    flag: 'cluster_log_path',
    key: 'log_path',
    kind: 'string',
    help: 'Directory of the raft logs (accepted: the channels live in JetStream)',
    ignored: true,
  },
  {
    flag: 'cluster_log_cache_size',
    key: 'log_cache_size',
    kind: 'int',
    help: 'Raft log cache size (accepted)',
    ignored: true,
  },
  {
    flag: 'cluster_log_snapshots',
    key: 'log_snapshots',
    kind: 'int',
    help: 'Raft snapshots to keep (accepted)',
    ignored: true,
  },
  {
    flag: 'cluster_trailing_logs',
    key: 'trailing_logs',
    kind: 'int',
    help: 'Raft logs left after a snapshot (accepted)',
    ignored: true,
  },
  {
    flag: 'cluster_sync',
    key: 'sync',
    kind: 'bool',
    help: 'Sync the raft log on every append (accepted)',
    ignored: true,
  },
  {
    flag: 'cluster_raft_logging',
    key: 'raft_logging',
    kind: 'bool',
    help: 'Raft logging (accepted)',
    ignored: true,
  },
  {
    flag: 'cluster_proceed_on_restore_failure',
    key: 'proceed_on_restore_failure',
    kind: 'bool',
    help: 'Proceed when a raft snapshot restore fails (accepted)',
    ignored: true,
  },
  {
    flag: 'cluster_allow_add_remove_node',
    key: 'allow_add_remove_node',
    kind: 'bool',
    help: 'Allow adding and removing raft nodes (accepted: any node may join)',
    ignored: true,
  },
  { flag: null, key: 'raft_lease_timeout', kind: 'duration', help: '' },
  { flag: null, key: 'raft_election_timeout', kind: 'duration', help: '' },
  { flag: null, key: 'raft_heartbeat_timeout', kind: 'duration', help: '', ignored: true },
  { flag: null, key: 'raft_commit_timeout', kind: 'duration', help: '', ignored: true },
  { flag: null, key: 'bolt_free_list_sync', kind: 'bool', help: '', ignored: true },
  { flag: null, key: 'bolt_free_list_map', kind: 'bool', help: '', ignored: true },
  { flag: null, key: 'nodes_connections', kind: 'bool', help: '', ignored: true },
];

for (const s of settings) {
  if (s.flag === null) continue;
  registerFlag({ names: [s.flag], value: s.kind !== 'bool', help: s.help });
}

export const clusterFlagNames: ReadonlySet<string> = new Set(
  settings.flatMap((s) => (s.flag === null ? [] : [s.flag])),
);

type Partial2 = { -readonly [K in keyof ClusteringOptions]?: ClusteringOptions[K] };

function apply(
  out: Partial2,
  s: Setting,
  v: string | boolean | number | string[],
  label: string,
): void {
  if (s.ignored === true) {
    out.ignored = [...(out.ignored ?? []), label];
    return;
  }
  switch (s.key) {
    case 'node_id':
      out.nodeId = v as string;
      break;
    case 'peers':
      out.peers = v as string[];
      break;
    case 'raft_lease_timeout':
      out.leaseTimeout = v as number;
      out.renewInterval = Math.max(1, Math.floor((v as number) / 5));
      break;
    case 'raft_election_timeout':
      out.electionTimeout = v as number;
      break;
    default:
      break;
  }
}

function splitPeers(text: string): string[] {
  return text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/**
 * The clustering given on the command line: undefined without `--clustered` (or a
 * `--clustered=false`); the other `--cluster_*` flags only count with it.
 */
export function clusteringFromFlags(cl: CommandLine): Partial2 | undefined {
  const on = cl.extra.get('clustered');
  const out: Partial2 = {};
  let any = false;
  for (const s of settings) {
    if (s.flag === null || s.flag === 'clustered') continue;
    const v = cl.extra.get(s.flag);
    if (v === undefined) continue;
    any = true;
    apply(out, s, s.kind === 'peers' ? splitPeers(v) : v, `--${s.flag}`);
  }
  if (on === undefined) return any ? out : undefined;
  return on === 'true' ? out : undefined;
}

/** True when `--clustered` (or `--clustered=true`) was given. */
export function clusteredFlag(cl: CommandLine): boolean | undefined {
  const on = cl.extra.get('clustered');
  return on === undefined ? undefined : on === 'true';
}

/** `cluster { ... }` of the streaming section: its presence turns clustering on. */
export function readClusterSection(map: ConfMap): Partial2 {
  const out: Partial2 = {};
  for (const entry of map.value.values()) {
    const k = entry.key.toLowerCase();
    const s = settings.find((x) => x.key === k && x.key !== '');
    if (s === undefined) continue; // as the reference: unknown keys are skipped
    apply(out, s, confValue(s, entry.value, entry.key), k);
  }
  return out;
}

function confValue(s: Setting, v: ConfValue, key: string): string | boolean | number | string[] {
  const expected = (what: string): never => {
    throw new ConfigError(v, `${key}: expected ${what}, got ${v.kind}`);
  };
  switch (s.kind) {
    case 'bool':
      return v.kind === 'bool' ? v.value : expected('a boolean');
    case 'string':
      return v.kind === 'string' ? v.value : expected('a string');
    case 'int':
      return v.kind === 'int' ? v.value : expected('an integer');
    case 'peers':
      if (v.kind !== 'array') return expected('an array');
      return v.value.map((p) => (p.kind === 'string' ? p.value : expected('an array of strings')));
    case 'duration': {
      const text = v.kind === 'string' ? v.value : expected('a duration string');
      try {
        return parseGoDuration(text);
      } catch (err) {
        throw new ConfigError(
          v,
          `${key}: ${err instanceof DurationError ? err.message : String(err)}`,
        );
      }
    }
  }
}

/** The full clustering options from what was given (defaults for the rest). */
export function resolveClustering(given: Partial2): ClusteringOptions {
  const out: ClusteringOptions = { ...DEFAULT_CLUSTERING, ignored: [] };
  for (const [k, v] of Object.entries(given) as [keyof ClusteringOptions, unknown][]) {
    if (v !== undefined) (out as unknown as Record<string, unknown>)[k] = v;
  }
  // As the reference: the node's own ID may be in the list of peers.
  out.peers = out.peers.filter((p) => p !== out.nodeId);
  return out;
}
