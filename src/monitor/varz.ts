// /varz: the server's identity, settings and counters, with the reference's field
// names, order and units (durations in nanoseconds, auth_timeout and tls_timeout in
// float seconds, times as RFC 3339, uptime as "1d2h3m4s").

import { availableParallelism } from 'node:os';
import { advertisedHost, advertisedPort, type Server } from '../server/server.js';
import { PROTOCOL_VERSION } from '../server/version.js';
import { routeCounts, varzCluster } from '../cluster/monitor.js';
import { msToNs, nowMs, rfc3339, uptime } from './format.js';
import { json, type Monitor, type MonitorHandler } from './http.js';

/** The reference's default TLS handshake timeout, in seconds; wirebus has no TLS yet. */
const TLS_TIMEOUT = 2;
/** CPU use is averaged over windows of at least this long, as the reference's 1 s sampler. */
const CPU_WINDOW_MS = 1000;

/** Resident memory and CPU percent of this process, sampled on demand. */
export class ProcessUsage {
  private lastCpu = process.cpuUsage();
  private lastTime = nowMs();
  private pcpu = 0;

  /** CPU percent (one decimal, 100 = one core busy) over the last window of >= 1 s. */
  cpu(): number {
    const now = nowMs();
    const elapsed = now - this.lastTime;
    if (elapsed >= CPU_WINDOW_MS) {
      const cur = process.cpuUsage();
      const usedMs = (cur.user - this.lastCpu.user + cur.system - this.lastCpu.system) / 1000;
      this.pcpu = Math.round((usedMs / elapsed) * 1000) / 10;
      this.lastCpu = cur;
      this.lastTime = now;
    }
    return this.pcpu;
  }

  rss(): number {
    return process.memoryUsage.rss();
  }
}

/** The system account's name as monitoring shows it; empty when there is none. */
export function systemAccount(server: Server): string {
  const o = server.options;
  return o.noSystemAccount ? '' : o.systemAccount;
}

/** Open connections of kind client: in-process clients are not connections. */
export function clientCount(server: Server): number {
  let n = 0;
  for (const c of server.clients.values()) if (c.kind === 'client') n++;
  return n;
}

/** Subscriptions of every account, in-process ones included, as the reference counts. */
export function subscriptionTotal(server: Server): number {
  let n = 0;
  for (const a of server.accounts.values()) n += a.sublist.size;
  return n;
}

/** The /varz object; `monitor` supplies the HTTP settings and request counts. */
export function varz(
  server: Server,
  monitor: Monitor,
  usage: ProcessUsage,
): Record<string, unknown> {
  const o = server.options;
  const now = nowMs();
  const start = server.startTime.getTime();
  const v: Record<string, unknown> = {
    server_id: server.id,
    server_name: server.name,
    version: PROTOCOL_VERSION,
    proto: 1,
    go: process.version,
    host: advertisedHost(o),
    port: advertisedPort(o, server.port),
  };
  if (server.authRequired) v.auth_required = true;
  // TLS and the cluster's client URLs, as the client INFO states them.
  const info: Record<string, unknown> = {};
  server.security?.tlsInfo(info);
  if (info.tls_required === true) v.tls_required = true;
  if (info.tls_verify === true) v.tls_verify = true;
  server.cluster?.clientInfo(info, false);
  if (Array.isArray(info.connect_urls) && info.connect_urls.length > 0) {
    v.connect_urls = info.connect_urls;
  }
  v.max_connections = o.maxConnections;
  if (o.maxSubscriptions > 0) v.max_subscriptions = o.maxSubscriptions;
  v.ping_interval = msToNs(o.pingInterval);
  v.ping_max = o.pingMax;
  v.http_host = monitor.host;
  v.http_port = monitor.port;
  v.http_base_path = o.httpBasePath;
  v.https_port = 0;
  v.auth_timeout = o.authTimeout;
  v.max_control_line = o.maxControlLine;
  v.max_payload = o.maxPayload;
  v.max_pending = o.maxPending;
  // No gateways, leaf nodes, MQTT, websocket or JetStream yet: the reference writes
  // these as empty objects when they are not configured.
  v.cluster = varzCluster(server);
  v.gateway = {};
  v.leaf = {};
  v.mqtt = {};
  v.websocket = server.sideListeners.get('websocket')?.varz() ?? {};
  v.jetstream = server.jetstream === null ? {} : server.jetstream.varz();
  v.tls_timeout = TLS_TIMEOUT;
  v.write_deadline = msToNs(o.writeDeadline);
  v.start = rfc3339(start);
  v.now = rfc3339(now);
  v.uptime = uptime(now - start);
  v.mem = usage.rss();
  const cores = availableParallelism();
  v.cores = cores;
  v.gomaxprocs = cores;
  v.cpu = usage.cpu();
  v.connections = clientCount(server);
  v.total_connections = server.totalConnections;
  const routes = routeCounts(server);
  v.routes = routes.routes;
  v.remotes = routes.remotes;
  v.leafnodes = 0;
  v.in_msgs = server.inMsgs;
  v.out_msgs = server.outMsgs;
  v.in_bytes = server.inBytes;
  v.out_bytes = server.outBytes;
  v.slow_consumers = server.slowConsumers;
  v.subscriptions = subscriptionTotal(server);
  // Go writes map keys sorted.
  const stats: Record<string, number> = {};
  for (const key of [...monitor.requestStats.keys()].sort()) {
    stats[key] = monitor.requestStats.get(key) ?? 0;
  }
  v.http_req_stats = stats;
  v.config_load_time = rfc3339(server.configLoadTime.getTime());
  const system = systemAccount(server);
  if (system !== '') v.system_account = system;
  return v;
}

export function varzHandler(monitor: Monitor, usage: ProcessUsage): MonitorHandler {
  return (req) => json(varz(monitor.server, monitor, usage), req.query);
}
