// The cluster's part in a config reload (SIGHUP, `--signal reload`, or reloadCluster
// when embedded), as nats-server 2.9.10's reload.go allows it:
//
// - the cluster host and port cannot change ("config reload not supported for
//   cluster port: old=6222, new=6333"), nor can clustering be turned on or off;
// - routes added are dialled and routes removed are closed ("Removed route ...",
//   closed as 'Route Removed' and not dialled again), then "Reloaded: cluster routes";
// - every other setting applies to the routes made from then on: the name ("Cluster
//   name updated to X", as 2.9.10 allows it), authorization, advertise,
//   no_advertise, connect_retries, TLS (its files read again); then "Reloaded: cluster";
// - new route permissions apply at once, as the reference's reloadClusterPermissions:
//   each route hears the new INFO, interest this server may now import is sent and
//   interest it may no longer import withdrawn, and the other servers' interest it
//   may no longer export is dropped. A server whose INFO brings wider export
//   permissions is sent the interest it dropped before (updateRemoteRoutePerms).

import { isDeepStrictEqual } from 'node:util';
import type { ClientPermissions } from '../auth/permissions.js';
import type { LoadedConfig } from '../config/load.js';
import { CloseReason } from '../protocol/errors.js';
import { ReloadError, type ReloadContext, type ReloadHook } from '../server/reload.js';
import type { Server } from '../server/server.js';
import { canImport, type Cluster } from './cluster.js';
import type { ClusterSettings } from './config.js';
import { interestLine } from './interest.js';
import {
  type ClusterOptions,
  parseRouteUrl,
  resolveClusterOptions,
  type RouteUrl,
  validateClusterOptions,
} from './options.js';
import { RouteTls } from './tls.js';

/** The config section the cluster layer reloads. */
const SECTION = 'cluster';

interface Watch {
  readonly cluster: Cluster | null;
  /** Reads the cluster settings of a config file (with the command line's flags on top). */
  readonly reread: ((config: LoadedConfig) => ClusterSettings) | null;
  /** Set by reloadCluster for the duration of its reload. */
  pending: Partial<ClusterOptions> | undefined;
}

const watches = new WeakMap<Server, Watch>();

/**
 * Registers the cluster layer's reload hook (once per server). `cluster` is null
 * when no cluster port is configured: a reload may then not add one, as in the
 * reference, but a name still changes.
 */
export function watchCluster(
  server: Server,
  cluster: Cluster | null,
  reread: ((config: LoadedConfig) => ClusterSettings) | null,
): void {
  if (watches.has(server)) return;
  const w: Watch = { cluster, reread, pending: undefined };
  watches.set(server, w);
  server.reloadHooks.push(clusterHook(server, w));
}

/**
 * The embedding program's reload: changes the cluster settings of a running server
 * (changes on top of the running ones) exactly as a config reload would. Throws
 * ReloadError, and changes nothing, when they are refused.
 */
export function reloadCluster(server: Server, changes: Partial<ClusterOptions>): void {
  const cluster = server.cluster as Cluster | null;
  if (!watches.has(server)) watchCluster(server, cluster, null);
  const w = watches.get(server)!;
  w.pending = changes;
  try {
    server.applyReload({});
  } finally {
    w.pending = undefined;
  }
}

function clusterHook(server: Server, w: Watch): ReloadHook {
  return {
    name: 'cluster',
    sections: [SECTION],
    prepare: (ctx) => {
      const next = nextSettings(w, ctx);
      if (next === undefined) return null;
      const cluster = w.cluster;
      if (cluster === null) return withoutCluster(server, next);
      return prepareCluster(cluster, next);
    },
  };
}

interface Next {
  readonly enabled: boolean;
  readonly options: ClusterOptions;
}

/** The settings this reload installs; undefined when it leaves the cluster alone. */
function nextSettings(w: Watch, ctx: ReloadContext): Next | undefined {
  if (w.pending !== undefined) {
    const base = w.cluster?.options ?? {};
    return {
      enabled: w.cluster !== null,
      options: resolveClusterOptions({ ...base, ...w.pending }),
    };
  }
  const config = ctx.config;
  if (config === null || w.reread === null || !ctx.changedSections.has(SECTION)) return undefined;
  let settings: ClusterSettings;
  try {
    settings = w.reread(config);
  } catch (err) {
    throw new ReloadError(err instanceof Error ? err.message : String(err));
  }
  return { enabled: settings.enabled, options: resolveClusterOptions(settings.options) };
}

/** No cluster port at start: one cannot come now; the name is all there is. */
function withoutCluster(server: Server, next: Next): (() => void) | null {
  if (next.enabled) {
    throw new ReloadError(
      `config reload not supported for cluster port: old=0, new=${String(next.options.port)}`,
    );
  }
  const name = next.options.name;
  if (name === '' || name === server.clusterName) return null;
  return () => {
    server.clusterName = name;
    server.logger.info(`Cluster name updated to ${name}`);
    server.logger.info('Reloaded: cluster');
  };
}

function prepareCluster(cluster: Cluster, next: Next): (() => void) | null {
  const before = cluster.options;
  const o = next.options;
  if (o.host !== before.host) {
    throw new ReloadError(
      `config reload not supported for cluster host: old=${before.host}, new=${o.host}`,
    );
  }
  // As the reference, a random port (0 or -1) in the new settings is the one bound.
  const port = !next.enabled ? 0 : o.port <= 0 ? cluster.port : o.port;
  if (port !== cluster.port) {
    throw new ReloadError(
      `config reload not supported for cluster port: old=${String(cluster.port)}, new=${String(port)}`,
    );
  }
  const problems = validateClusterOptions(o);
  if (problems.length > 0) throw new ReloadError(problems.join('; '));
  const urls: RouteUrl[] = [];
  for (const text of o.routes) {
    const u = parseRouteUrl(text);
    if (typeof u !== 'string' && !urls.some((x) => x.hostPort === u.hostPort)) urls.push(u);
  }
  const added = o.routes.filter((r) => !before.routes.some((b) => sameRoute(b, r)));
  const removed = before.routes.filter((b) => !o.routes.some((r) => sameRoute(b, r)));
  // The certificate files are read again: renewed ones (new contents in the same
  // files) count as a change, as they do for the reference.
  let tls: RouteTls | null = null;
  if (o.tls !== null) {
    try {
      tls = new RouteTls(o.tls);
    } catch (err) {
      throw new ReloadError(err instanceof Error ? err.message : String(err));
    }
    if (cluster.tls !== null && tls.sameAs(cluster.tls)) tls = cluster.tls;
  }
  const settingsChanged =
    tls !== cluster.tls || SETTINGS.some((k) => !isDeepStrictEqual(before[k], o[k]));
  if (!settingsChanged && added.length === 0 && removed.length === 0) return null;
  return () => {
    const logger = cluster.server.logger;
    if (settingsChanged) {
      const permsChanged = !isDeepStrictEqual(before.permissions, o.permissions);
      const nameChanged = o.name !== '' && o.name !== cluster.name;
      Object.assign(before, { ...o, host: before.host, port: before.port, routes: before.routes });
      cluster.tls = tls;
      if (nameChanged) {
        cluster.name = o.name;
        logger.info(`Cluster name updated to ${o.name}`);
      }
      cluster.dynamic = o.name === '';
      logger.info('Reloaded: cluster');
      if (permsChanged) reloadPermissions(cluster, cluster.setPermissions(o.permissions));
    }
    if (added.length > 0 || removed.length > 0) {
      before.routes = [...o.routes];
      for (const text of removed) removeRoute(cluster, text);
      cluster.setConfiguredRoutes(urls);
      logger.info('Reloaded: cluster routes');
    }
  };
}

/** What applies to new routes (the reference's clusterOption), routes and ports aside. */
const SETTINGS: readonly (keyof ClusterOptions)[] = [
  'name',
  'advertise',
  'noAdvertise',
  'connectRetries',
  'user',
  'password',
  'authTimeout',
  'permissions',
  'tls',
];

/** The reference compares route URLs whole (urlsAreEqual): scheme, credentials and all. */
function sameRoute(a: string, b: string): boolean {
  try {
    return new URL(a.trim()).href === new URL(b.trim()).href;
  } catch {
    return a.trim() === b.trim();
  }
}

/** Closes the routes dialled for a removed URL, never to be dialled again. */
function removeRoute(cluster: Cluster, text: string): void {
  const u = parseRouteUrl(text);
  if (typeof u === 'string') return;
  for (const r of cluster.allConnections()) {
    const url = r.url;
    if (!r.didSolicit || url === null) continue;
    if (url.hostPort !== u.hostPort || url.user !== u.user || url.password !== u.password) continue;
    r.noReconnect = true;
    r.close(CloseReason.routeRemoved);
    cluster.server.logger.info(`Removed route ${text}`);
  }
}

/**
 * New route permissions on running routes (reloadClusterPermissions): the new INFO,
 * interest now importable sent, interest no longer importable withdrawn, and other
 * servers' interest no longer exportable dropped.
 */
function reloadPermissions(cluster: Cluster, oldImport: ClientPermissions | null): void {
  const lines: Buffer[] = [];
  for (const change of cluster.interest.all()) {
    const could = canImport(oldImport, change.subject);
    const can = cluster.canImport(change.subject);
    if (can && !could) lines.push(interestLine(change));
    else if (could && !can) lines.push(interestLine({ ...change, count: 0 }));
  }
  const info = cluster.infoLine();
  for (const route of cluster.routes.values()) {
    for (const [key, sub] of [...route.subs]) {
      if (!cluster.canExport(sub.subject)) route.dropSubscription(key);
    }
    route.sendProto(info, 'INFO');
    for (const line of lines) route.sendProto(line);
  }
}
