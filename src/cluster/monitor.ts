// What the monitor shows of the cluster: /routez (the reference's Routez and
// RouteInfo, field for field) and the cluster section and route counts of /varz.

import type { Server } from '../server/server.js';
import { nowMs, rfc3339, rttString, uptime } from '../monitor/format.js';
import { Cluster } from './cluster.js';
import type { RouteSubscription } from './route.js';

function clusterOf(server: Server): Cluster | null {
  return server.cluster instanceof Cluster ? server.cluster : null;
}

/** The /routez object; `subs` lists each route's subjects, `detail` its subscriptions. */
export function routez(
  server: Server,
  q: { subs: boolean; detail: boolean },
): Record<string, unknown> {
  const now = nowMs();
  const cluster = clusterOf(server);
  const out: Record<string, unknown> = { server_id: server.id, now: rfc3339(now) };
  const perms = cluster?.options.permissions ?? null;
  if (perms?.import != null) out.import = perms.import;
  if (perms?.export != null) out.export = perms.export;
  const routes: Record<string, unknown>[] = [];
  for (const r of cluster?.routes.values() ?? []) {
    const c = r.client;
    const ri: Record<string, unknown> = {
      rid: r.rid,
      remote_id: r.remoteId,
      did_solicit: r.didSolicit,
      is_configured: r.explicit,
      ip: r.ip,
      port: r.port,
      start: rfc3339(r.start.getTime()),
      last_activity: rfc3339(r.lastActivity),
    };
    if (c.rtt >= 0) ri.rtt = rttString(c.rtt);
    ri.uptime = uptime(now - r.start.getTime());
    ri.idle = uptime(now - r.lastActivity);
    ri.pending_size = c.out.queued + (c.socket?.writableLength ?? 0);
    ri.in_msgs = r.inMsgs;
    ri.out_msgs = c.outMsgs;
    ri.in_bytes = r.inBytes;
    ri.out_bytes = c.outBytes;
    ri.subscriptions = r.subs.size;
    if (r.subs.size > 0) {
      if (q.detail)
        ri.subscriptions_list_detail = [...r.subs.values()].map((s) => detail(s, r.rid));
      else if (q.subs) ri.subscriptions_list = [...r.subs.values()].map((s) => s.subject);
    }
    routes.push(ri);
  }
  out.num_routes = routes.length;
  out.routes = routes;
  return out;
}

function detail(s: RouteSubscription, rid: number): Record<string, unknown> {
  const d: Record<string, unknown> = { subject: s.subject };
  if (s.queue !== null) d.qgroup = s.queue;
  d.sid = s.sid;
  d.msgs = s.delivered;
  d.cid = rid;
  return d;
}

/** /varz `cluster`: empty when clustering is off, as the reference writes it. */
export function varzCluster(server: Server): Record<string, unknown> {
  const cluster = clusterOf(server);
  if (cluster === null) return {};
  const o = cluster.options;
  const v: Record<string, unknown> = {
    name: cluster.name,
    addr: o.host,
    cluster_port: cluster.port,
    auth_timeout: o.authTimeout,
  };
  if (o.routes.length > 0) v.urls = o.routes.map(hostOf);
  // The reference writes its default TLS timeout (2 s) without TLS too.
  v.tls_timeout = o.tls?.timeout ?? 2;
  if (o.tls !== null) {
    v.tls_required = true;
    v.tls_verify = true;
  }
  return v;
}

/** Registered routes and remote servers, for /varz `routes` and `remotes`. */
export function routeCounts(server: Server): { routes: number; remotes: number } {
  const cluster = clusterOf(server);
  return cluster === null
    ? { routes: 0, remotes: 0 }
    : { routes: cluster.routes.size, remotes: cluster.remotes.size };
}

/** `host:port` of a route URL, as the reference's urlsToStrings. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
