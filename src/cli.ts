// The `wirebus` command: flags (and config file), then the server, then signals.

import { writeFileSync, rmSync } from 'node:fs';
import { parseCommandLine, usage, UsageError } from './config/flags.js';
import { Server } from './server/server.js';
import { PROTOCOL_VERSION, WIREBUS_VERSION } from './server/version.js';

export async function main(argv: readonly string[]): Promise<number> {
  let cl;
  try {
    cl = parseCommandLine(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`wirebus: ${err.message}\n${usage()}`);
      return 2;
    }
    throw err;
  }
  if (cl.help) {
    process.stdout.write(usage());
    return 0;
  }
  if (cl.version) {
    process.stdout.write(
      `wirebus: v${WIREBUS_VERSION} (nats-server protocol ${PROTOCOL_VERSION})\n`,
    );
    return 0;
  }
  let server: Server;
  try {
    server = new Server(cl.options);
  } catch (err) {
    process.stderr.write(`wirebus: ${(err as Error).message}\n`);
    return 2;
  }
  try {
    await server.start();
  } catch (err) {
    server.logger.fatal(`Error listening on port: ${(err as Error).message}`);
    return 1;
  }
  const pidFile = server.options.pidFile;
  if (pidFile !== '') writeFileSync(pidFile, String(process.pid));
  return new Promise<number>((resolve) => {
    const stop = (signal: string): void => {
      server.logger.info(`Trapped "${signal}" signal`);
      void server.close().then(() => {
        if (pidFile !== '') rmSync(pidFile, { force: true });
        resolve(0);
      });
    };
    process.once('SIGINT', () => {
      stop('interrupt');
    });
    process.once('SIGTERM', () => {
      stop('terminated');
    });
  });
}
