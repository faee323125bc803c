// /metrics: the numbers of /varz in the Prometheus text exposition format (0.0.4).
// Names and the server_id label follow prometheus-nats-exporter (`gnatsd_varz_*`),
// so dashboards and alerts written for the reference work unchanged.

import type { Server } from '../server/server.js';
import type { Monitor, MonitorHandler } from './http.js';
import { type ProcessUsage, varz } from './varz.js';

type MetricType = 'counter' | 'gauge';

/** Each /varz field exported, with its type and help text. */
const METRICS: readonly [field: string, type: MetricType, help: string][] = [
  ['connections', 'gauge', 'Open client connections'],
  ['total_connections', 'counter', 'Client connections accepted since start'],
  ['subscriptions', 'gauge', 'Subscriptions in all accounts'],
  ['in_msgs', 'counter', 'Messages received from clients'],
  ['out_msgs', 'counter', 'Messages delivered to clients'],
  ['in_bytes', 'counter', 'Payload bytes received from clients'],
  ['out_bytes', 'counter', 'Payload bytes delivered to clients'],
  ['slow_consumers', 'counter', 'Connections closed as slow consumers'],
  ['mem', 'gauge', 'Resident set size of the process, in bytes'],
  ['cpu', 'gauge', 'CPU use of the process, in percent of one core'],
  ['cores', 'gauge', 'Logical CPU cores'],
  ['routes', 'gauge', 'Cluster routes'],
  ['remotes', 'gauge', 'Remote cluster servers'],
  ['leafnodes', 'gauge', 'Leaf node connections'],
  ['max_connections', 'gauge', 'Configured connection limit'],
  ['max_payload', 'gauge', 'Configured largest payload, in bytes'],
  ['max_pending', 'gauge', 'Configured largest pending output per client, in bytes'],
  ['max_control_line', 'gauge', 'Configured longest control line, in bytes'],
];

/** A label value with `\`, `"` and newlines escaped, as the format requires. */
function labelValue(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function sample(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

export function metricsText(server: Server, monitor: Monitor, usage: ProcessUsage): string {
  const v = varz(server, monitor, usage);
  const labels = `{server_id="${labelValue(server.id)}"}`;
  let out = '';
  for (const [field, type, help] of METRICS) {
    const value = v[field];
    if (typeof value !== 'number') continue;
    const name = `gnatsd_varz_${field}`;
    out += `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}${labels} ${sample(value)}\n`;
  }
  return out;
}

export function metricsHandler(monitor: Monitor, usage: ProcessUsage): MonitorHandler {
  return () => ({
    status: 200,
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    body: metricsText(monitor.server, monitor, usage),
  });
}
