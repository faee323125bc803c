// Runs a streaming server beside a core server: in-process bus unless natsServer is
// set, /streaming/* endpoints on the core monitor, closed with the core server.

import { createLogger } from '../server/logger.js';
import type { Server } from '../server/server.js';
import { registerStreamingEndpoints, type MonitorRegistry } from './monitor.js';
import type { StreamingOptions } from './options.js';
import { StreamingServer } from './server.js';

export async function startStreaming(
  server: Server,
  monitor: MonitorRegistry | null,
  options: Partial<StreamingOptions>,
): Promise<StreamingServer> {
  // -SD / -SV turn on debug / trace for the streaming layer alone.
  const o = server.options;
  const wants = options.debug === true || options.trace === true;
  const logger =
    wants && !server.logger.debugEnabled
      ? createLogger({
          debug: options.debug === true,
          trace: options.trace === true,
          logtime: o.logtime,
          logFile: o.logFile,
          quiet: o.quiet,
        })
      : server.logger;
  const streaming = new StreamingServer(server, options, logger);
  await streaming.start();
  if (monitor !== null) registerStreamingEndpoints(monitor, streaming);
  server.onShutdown(() => streaming.close());
  return streaming;
}
