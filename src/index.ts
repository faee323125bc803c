// The embedding API: `await startServer({ port: 0 })` gives a running server.

import type { ServerOptions } from './config/options.js';
import { Server } from './server/server.js';

export type { ServerOptions } from './config/options.js';
export { Server } from './server/server.js';
export { WIREBUS_VERSION, PROTOCOL_VERSION } from './server/version.js';

export type StartOptions = Partial<ServerOptions>;

export interface RunningServer {
  /** The client port actually bound. */
  readonly port: number;
  /** `nats://host:port` for clients. */
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

/**
 * Starts a server and resolves once its listener accepts connections. Embedded
 * servers log nothing unless a log file, debug or trace is asked for.
 */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const quiet =
    options.quiet ??
    !(options.debug === true || options.trace === true || (options.logFile ?? '') !== '');
  const server = new Server({ ...options, quiet });
  await server.start();
  return {
    port: server.port,
    url: server.url,
    server,
    close: () => server.close(),
  };
}
