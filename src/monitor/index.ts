// Wires the monitor to a server: the core endpoints on one HTTP listener that opens
// in Server.start() (before the client listener, as the reference) and closes in
// Server.close(). Other layers add endpoints with monitor.register().

import type { Server } from '../server/server.js';
import { connzHandler } from './connz.js';
import { registerDashboard } from './dashboard.js';
import { Monitor } from './http.js';
import { metricsHandler } from './metrics.js';
import {
  accountzHandler,
  gatewayzHandler,
  healthzHandler,
  jszHandler,
  leafzHandler,
  routezHandler,
} from './other.js';
import { subszHandler } from './subsz.js';
import { ProcessUsage, varzHandler } from './varz.js';

export { Monitor, type MonitorHandler, type MonitorRequest, type MonitorResponse } from './http.js';
export { json, badRequest, notFound } from './http.js';
export { BadRequest } from './query.js';

/** A monitor with every core endpoint registered, not yet listening. */
export function createMonitor(server: Server): Monitor {
  const m = new Monitor(server);
  const usage = new ProcessUsage();
  registerDashboard(m);
  m.register('/varz', varzHandler(m, usage));
  m.register('/connz', connzHandler(server));
  m.register('/subsz', subszHandler(server));
  m.register('/subscriptionsz', subszHandler(server));
  m.register('/routez', routezHandler(server));
  m.register('/healthz', healthzHandler(server));
  m.register('/accountz', accountzHandler(server));
  m.register('/leafz', leafzHandler(server));
  m.register('/gatewayz', gatewayzHandler(server));
  m.register('/jsz', jszHandler(server));
  m.register('/metrics', metricsHandler(m, usage));
  return m;
}

/**
 * When the options ask for monitoring (`httpPort` not 0), creates the monitor and
 * ties it to the server's start() and close(); otherwise null. Call before start().
 */
export function attachMonitor(server: Server): Monitor | null {
  if (server.options.httpPort === 0) return null;
  const m = createMonitor(server);
  server.onStart(() => m.start());
  server.onShutdown(() => m.close());
  return m;
}
