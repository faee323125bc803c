// The cluster part of the `wirebus` command: settings from flags and the config file
// (problems exit 2), then the route port once the server listens.

import { ConfigError } from '../config/conf.js';
import { UsageError, type CommandLine } from '../config/flags.js';
import type { LoadedConfig } from '../config/load.js';
import type { Server } from '../server/server.js';
import { attachCluster } from './attach.js';
import type { Cluster } from './cluster.js';
import { resolveClusterSettings, type ClusterSettings } from './config.js';
import { watchCluster } from './reload.js';

/** The settings, or the exit code after the problem was printed. */
export function clusterSettingsForCli(
  cl: CommandLine,
  config: LoadedConfig | null,
): ClusterSettings | number {
  try {
    return resolveClusterSettings(cl, config);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UsageError) {
      process.stderr.write(`wirebus: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

/** Attaches the cluster layer before the server starts; the exit code when it cannot. */
export function attachClusterForCli(
  server: Server,
  settings: ClusterSettings,
): Cluster | null | number {
  for (const w of settings.warnings) server.logger.warn(w);
  if (!settings.enabled) {
    // As the reference: a name without a port still names the server's cluster.
    server.clusterName = settings.options.name ?? '';
    watchCluster(server, null, settings.reread);
    return null;
  }
  try {
    const cluster = attachCluster(server, settings.options);
    watchCluster(server, cluster, settings.reread);
    return cluster;
  } catch (err) {
    process.stderr.write(`wirebus: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
}

/** Opens the route port; false (after logging why) when it cannot. */
export async function startClusterForCli(
  server: Server,
  cluster: Cluster | null,
): Promise<boolean> {
  if (cluster === null) return true;
  try {
    await cluster.start();
    return true;
  } catch (err) {
    server.logger.fatal(
      `Error listening on router port: ${cluster.options.port} - ${err instanceof Error ? err.message : String(err)}`,
    );
    return false;
  }
}
