// A started server as a process: its pid and ports files, and the signals the
// reference's handleSignals traps: SIGINT and SIGTERM stop (SIGTERM is ignored in
// lame duck mode, which stops by itself), SIGHUP reloads the config file, SIGUSR1
// reopens the log file (rotation), SIGUSR2 enters lame duck mode.

import type { LoadedConfig } from '../config/load.js';
import type { ServerOptions } from '../config/options.js';
import { rememberConfig } from '../server/reload.js';
import type { Server } from '../server/server.js';
import {
  type MonitorAddress,
  processFilesReloadHook,
  removePidFile,
  removePortsFile,
  writePortsFile,
} from './process-files.js';

export interface ProcessSettings {
  options: Partial<ServerOptions>;
  config: LoadedConfig | null;
}

export interface ProcessContext {
  readonly server: Server;
  readonly monitor: MonitorAddress | null;
  /** The config file given with -c; empty when none. */
  readonly configFile: string;
  /** What that file said at start, so a reload can tell what changed. */
  readonly config: LoadedConfig | null;
  /** Reads the config file again with the command line's flags on top (throws ConfigError). */
  readonly loadSettings: () => ProcessSettings;
}

/** Go's names of the signals, which the reference logs. */
const SIGNAL_NAMES: Readonly<Partial<Record<NodeJS.Signals, string>>> = {
  SIGINT: 'interrupt',
  SIGTERM: 'terminated',
  SIGHUP: 'hangup',
  SIGUSR1: 'user defined signal 1',
  SIGUSR2: 'user defined signal 2',
};

const TRAPPED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2'];

/**
 * Holds the trapped signals that arrive while the server starts (the reference traps
 * them before it listens). Untrapped, a SIGHUP, SIGUSR1 or SIGUSR2 sent on "Server is
 * ready" would end the process by its default action while the cluster or the
 * streaming layer still start; runProcess acts on what was held, in order.
 */
export class EarlySignals {
  private readonly held: NodeJS.Signals[] = [];
  private readonly hold = (signal: NodeJS.Signals): void => {
    this.held.push(signal);
  };

  constructor() {
    for (const signal of TRAPPED) process.on(signal, this.hold);
  }

  /** Stops holding; the signals that came, in order. */
  release(): NodeJS.Signals[] {
    for (const signal of TRAPPED) process.off(signal, this.hold);
    return this.held.splice(0);
  }
}

/**
 * Writes the ports file (the pid file is written before start), traps the signals
 * (then acts on those `early` held) and resolves with the exit code once the server
 * has shut down, whichever way.
 */
export function runProcess(ctx: ProcessContext, early?: EarlySignals): Promise<number> {
  const { server } = ctx;
  writePortsFile(server, ctx.monitor);
  server.reloadHooks.push(processFilesReloadHook(ctx.monitor));
  rememberConfig(server, ctx.config);

  return new Promise<number>((resolve) => {
    const handlers = new Map<NodeJS.Signals, () => void>();
    const exit = (): void => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
      const { pidFile, portsFileDir } = server.options;
      void server.close().then(() => {
        removePortsFile(server, portsFileDir);
        removePidFile(pidFile);
        resolve(0);
      });
    };
    const trap = (signal: NodeJS.Signals, action: () => void): void => {
      const handler = (): void => {
        if (server.logger.debugEnabled) {
          server.logger.debug(`Trapped "${SIGNAL_NAMES[signal] ?? signal}" signal`);
        }
        action();
      };
      handlers.set(signal, handler);
      process.on(signal, handler);
    };
    trap('SIGINT', exit);
    trap('SIGTERM', () => {
      // Lame duck mode ends the process itself once its clients are gone.
      if (!server.lameDuck) exit();
    });
    trap('SIGHUP', () => {
      reload(ctx);
    });
    trap('SIGUSR1', () => {
      reopenLog(server);
    });
    trap('SIGUSR2', () => {
      void server.lameDuckShutdown().then(exit);
    });
    for (const signal of early?.release() ?? []) handlers.get(signal)?.();
  });
}

/** SIGHUP: the config file again, flags on top; a refused reload keeps the running config. */
export function reload(ctx: ProcessContext): void {
  const { server } = ctx;
  try {
    if (ctx.configFile === '') {
      throw new Error('can only reload config when a file is provided using -c or --config');
    }
    const settings = ctx.loadSettings();
    server.reloadConfig(settings.options, settings.config);
    for (const warning of settings.config?.warnings ?? []) server.logger.warn(warning);
  } catch (err) {
    server.logger.error(`Failed to reload server configuration: ${(err as Error).message}`);
  }
}

/** SIGUSR1: after `mv wirebus.log wirebus.log.1`, the next lines go to a new wirebus.log. */
export function reopenLog(server: Server): void {
  if (server.options.logFile === '') {
    server.logger.info('File log re-open ignored, not a file logger');
    return;
  }
  try {
    server.logger.reopen();
    server.logger.info('File log re-opened');
  } catch (err) {
    server.logger.error(`File log re-open failed: ${(err as Error).message}`);
  }
}
