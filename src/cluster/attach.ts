// Joining a server to a cluster: the embedding API (`startServer({ cluster })`) and
// the command line both come through here.

import type { Server } from '../server/server.js';
import { Cluster } from './cluster.js';
import { resolveClusterOptions, validateClusterOptions, type ClusterOptions } from './options.js';

/**
 * Attaches the cluster layer to a server that has not started yet, so that its
 * first client INFO already names the cluster; Cluster.start() opens the route port
 * once the server listens. Throws on unusable options.
 */
export function attachCluster(server: Server, options: Partial<ClusterOptions>): Cluster {
  const o = resolveClusterOptions(options);
  const problems = validateClusterOptions(o);
  if (problems.length > 0) throw new Error(`invalid cluster options: ${problems.join('; ')}`);
  return new Cluster(server, o);
}
