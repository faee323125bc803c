// Starts an embedded server on a free port for one test and stops it after.

import { startServer, type RunningServer, type StartOptions } from '../../src/index.js';

export async function withServer<T>(
  options: StartOptions,
  body: (server: RunningServer) => Promise<T>,
): Promise<T> {
  const server = await startServer({ host: '127.0.0.1', port: 0, ...options });
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}
