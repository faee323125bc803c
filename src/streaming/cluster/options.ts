// Options of the clustered mode (`--clustered`, `streaming { cluster { ... } }`), with
// the reference's names. wirebus keeps a clustered deployment's channels in the
// JetStream of the `-ns` NATS cluster and elects the Leader with a lease in a
// replicated key-value bucket there (docs/design/clustered-streaming.md): the raft
// settings that size a lease keep a meaning, the ones about a local raft log do not
// and are accepted, then logged once as ignored.

export interface ClusteringOptions {
  /** `cluster_node_id`: this node's name in serverz and in the lease; random if empty. */
  nodeId: string;
  /** `cluster_peers`: the other nodes' IDs (informational: the lease needs no membership). */
  peers: string[];
  /**
   * `raft_lease_timeout`: a Leader serves for this long after it sent its last
   * successful lease renewal, and steps down when that runs out.
   */
  leaseTimeout: number;
  /**
   * `raft_election_timeout`: how long the lease must stay unchanged before another
   * node may take it. Greater than leaseTimeout, so a Leader that cannot renew has
   * stepped down before anyone can take over.
   */
  electionTimeout: number;
  /** How often the Leader renews its lease (a fifth of leaseTimeout unless set). */
  renewInterval: number;
  /**
   * How long a Leader whose lease ran out without being taken stays suspended, trying
   * to renew, before it steps down (lease.ts). Longer than a JetStream stream's raft
   * leader election (4-9 s in nats-server 2.9): a JetStream server that dies while it
   * leads the lease bucket suspends the Leader for that long, and clients only wait.
   */
  suspendLimit: number;
  /** Replicas of the streams and buckets (3; 1 when the JetStream is not clustered). */
  replicas: number;
  /** Options of the reference that mean nothing without a local raft log, for the log. */
  ignored: string[];
}

export const DEFAULT_CLUSTERING: Readonly<ClusteringOptions> = Object.freeze({
  nodeId: '',
  peers: [],
  // A failover takes electionTimeout plus a read interval plus the promotion: a few
  // seconds. A JetStream server killed while it led the lease bucket leaves the bucket
  // without a raft leader for 4-9 s in nats-server 2.9: the lease lapses then, the
  // Leader is suspended and resumes once the bucket has a leader again.
  leaseTimeout: 3000,
  electionTimeout: 4000,
  renewInterval: 600,
  suspendLimit: 20_000,
  replicas: 3,
  ignored: [],
});

/** Problems that stop a clustered node from starting. */
export function validateClustering(c: ClusteringOptions, natsServer: string): string[] {
  const problems: string[] = [];
  if (natsServer === '') {
    problems.push(
      'cluster: clustered mode keeps the channels in the JetStream of a NATS cluster: give its URLs with -ns (--nats_server)',
    );
  }
  if (c.nodeId !== '' && !/^[a-zA-Z0-9_-]+$/.test(c.nodeId)) {
    problems.push(`cluster: invalid node ID "${c.nodeId}", only alphanumeric and '-', '_' allowed`);
  }
  if (!(c.leaseTimeout > 0) || !(c.renewInterval > 0) || c.renewInterval >= c.leaseTimeout) {
    problems.push(
      `cluster: the lease renewal (${c.renewInterval} ms) must be positive and shorter than raft_lease_timeout (${c.leaseTimeout} ms)`,
    );
  }
  if (!(c.electionTimeout > c.leaseTimeout)) {
    problems.push(
      `cluster: raft_election_timeout (${c.electionTimeout} ms) must be greater than raft_lease_timeout (${c.leaseTimeout} ms)`,
    );
  }
  if (!Number.isInteger(c.replicas) || c.replicas < 1 || c.replicas > 5) {
    problems.push(`cluster: replicas must be 1 to 5 (${c.replicas})`);
  }
  return problems;
}
