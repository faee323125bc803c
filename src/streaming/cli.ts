// The streaming part of the `wirebus` command: settings from flags and config file
// (problems exit 2, as the reference's), then the server beside the core one.

import { ConfigError } from '../config/conf.js';
import { UsageError, type CommandLine } from '../config/flags.js';
import type { LoadedConfig } from '../config/load.js';
import type { Server } from '../server/server.js';
import { resolveStreamingSettings, type StreamingSettings } from './config.js';
import type { MonitorRegistry } from './monitor.js';

/** The settings, or the exit code after the problem was printed. */
export function streamingSettingsForCli(
  cl: CommandLine,
  config: LoadedConfig | null,
): StreamingSettings | number {
  let settings: StreamingSettings;
  try {
    settings = resolveStreamingSettings(cl, config);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof UsageError) {
      process.stderr.write(`wirebus: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  return settings;
}

/** Starts streaming when asked for; false (after logging why) when it cannot start. */
export async function startStreamingForCli(
  server: Server,
  monitor: MonitorRegistry | null,
  settings: StreamingSettings,
): Promise<boolean> {
  if (!settings.enabled) return true;
  for (const w of settings.warnings) server.logger.warn(`STAN: ${w}`);
  try {
    // Loaded only when streaming is on: it is about 13 MB of the process's memory.
    const { startStreaming } = await import('./attach.js');
    const streaming = await startStreaming(server, monitor, settings.options);
    // As the reference, a fault-tolerant server that must stop serving (lost store
    // lock, another active server) exits, for its supervisor to start it again as a
    // standby; its log says why.
    streaming.onAbort = () => {
      process.exit(1);
    };
    return true;
  } catch (err) {
    server.logger.fatal(
      `STAN: Failed to start: ${err instanceof Error ? err.message : String(err)}`,
    );
    return false;
  }
}
