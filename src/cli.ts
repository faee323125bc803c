// The `wirebus` command: flags (and config file), then the server, then signals.

import { setFlagsFromString } from 'node:v8';
import { attachSecurityFromSettings } from './auth/config.js';
import { ConfigError } from './config/conf.js';
import { parseCommandLine, usage, UsageError, type CommandLine } from './config/flags.js';
import { loadConfig, type LoadedConfig } from './config/load.js';
import type { ServerOptions } from './config/options.js';
import { attachMonitor } from './monitor/index.js';
import { ignoredFlagWarnings } from './ops/ignored-flags.js';
import { SMALL_HEAP_GROWTH, watchHeapGrowth } from './ops/heap-growth.js';
import { EarlySignals, runProcess } from './ops/lifecycle.js';
import { writePidFile } from './ops/process-files.js';
import { DEFAULT_PROCESS_NAME, setProcessName } from './ops/process-name.js';
import { sendSignalCommand, SignalCommandError } from './ops/signal-command.js';
import { Server } from './server/server.js';
import { PROTOCOL_VERSION, WIREBUS_VERSION } from './server/version.js';
import { startStreamingForCli, streamingSettingsForCli } from './streaming/cli.js';
import { attachClusterForCli, clusterSettingsForCli, startClusterForCli } from './cluster/cli.js';
import { attachJetStreamForCli, jetstreamSettingsForCli } from './jetstream/cli.js';
import { websocketFromConfig } from './websocket/config.js';

/**
 * Runs the command with `argv` (the arguments after the script). `invokedAs` is the
 * name the program was run by (bin/wirebus passes its script's basename): it names
 * the ports file and the processes `--signal` looks for, as the reference's os.Args[0].
 */
export async function main(
  argv: readonly string[],
  invokedAs: string = DEFAULT_PROCESS_NAME,
): Promise<number> {
  setProcessName(invokedAs);
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
  if (cl.signal !== '') {
    // As the reference: handled before the config file is read; exit 1 on failure.
    try {
      sendSignalCommand(cl.signal);
      return 0;
    } catch (err) {
      if (!(err instanceof SignalCommandError)) throw err;
      process.stderr.write(`wirebus: ${err.message}\n`);
      return 1;
    }
  }
  let settings: Settings;
  try {
    settings = resolveSettings(cl);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`wirebus: ${err.file === '' ? err.reason : err.message}\n`);
      return 2;
    }
    throw err;
  }
  const streaming = streamingSettingsForCli(cl, settings.config);
  if (typeof streaming === 'number') return streaming;
  const clustering = clusterSettingsForCli(cl, settings.config);
  if (typeof clustering === 'number') return clustering;
  const jetstream = jetstreamSettingsForCli(cl, settings.config);
  if (typeof jetstream === 'number') return jetstream;
  let server: Server;
  try {
    // -t only checks: no log file is created.
    const options = { ...settings.options };
    if (cl.testConfig) options.quiet = true;
    // With -ns the streaming layer talks to an external NATS server: no local listener.
    if (streaming.enabled && (streaming.options.natsServer ?? '') !== '') {
      options.clientListener = false;
    }
    server = new Server(options);
  } catch (err) {
    process.stderr.write(`wirebus: ${(err as Error).message}\n`);
    return 2;
  }
  try {
    // Authentication, accounts and TLS: checked by -t too.
    attachSecurityFromSettings(server, settings.config, cl.extra);
  } catch (err) {
    process.stderr.write(`wirebus: ${(err as Error).message}\n`);
    return 2;
  }
  const o = server.options;
  // A configured system account must be one of the accounts (the reference exits 1).
  if (!o.noSystemAccount && o.systemAccount !== '$SYS' && !server.accounts.has(o.systemAccount)) {
    process.stderr.write('wirebus: error resolving system account: account missing\n');
    return 1;
  }
  const cluster = attachClusterForCli(server, clustering);
  if (typeof cluster === 'number') return cluster;
  try {
    const websocket = websocketFromConfig(settings.config);
    if (websocket !== null) {
      const { attachWebsocket } = await import('./websocket/attach.js');
      attachWebsocket(server, websocket);
    }
  } catch (err) {
    process.stderr.write(`wirebus: ${(err as Error).message}\n`);
    return 2;
  }
  if (cl.testConfig) {
    process.stderr.write(`wirebus: configuration file ${cl.configFile} is valid\n`);
    return 0;
  }
  for (const warning of settings.config?.warnings ?? []) server.logger.warn(warning);
  for (const warning of ignoredFlagWarnings(cl)) server.logger.warn(warning);
  const monitor = attachMonitor(server);
  await attachJetStreamForCli(server, jetstream);
  server.configFile = cl.configFile;
  // As the reference, the pid file is there before the server logs that it is ready.
  writePidFile(server);
  const early = new EarlySignals();
  const failed = async (): Promise<number> => {
    early.release();
    await server.close();
    return 1;
  };
  try {
    await server.start();
  } catch (err) {
    const message = (err as Error).message;
    server.logger.fatal(
      monitor !== null && monitor.port === 0
        ? `Can't start monitoring: ${message}`
        : `Error listening on port: ${message}`,
    );
    return failed();
  }
  if (!(await startClusterForCli(server, cluster))) return failed();
  if (!(await startStreamingForCli(server, monitor, streaming))) return failed();
  optimizeSooner();
  return runProcess(
    {
      server,
      monitor,
      configFile: cl.configFile,
      config: settings.config,
      loadSettings: () => resolveSettings(cl),
    },
    early,
  );
}

/**
 * V8 optimizes a function once it has run a certain amount of bytecode (its interrupt
 * budget, 66 KB by default). A fresh server's first clients (a test suite's, or a
 * storm of connections) run the accept and handshake code a few thousand times only,
 * much of it in the interpreter at that budget; a quarter of it cuts the main
 * thread's CPU in a fresh server's first storm of 2,000 connections by 15-28%
 * (bench/RESULTS.md). Set once the server is ready, not before: start-up itself runs
 * most of its code once, and optimizing it sooner only costs start-up CPU. The server
 * process is the command's own, so a process-wide V8 setting is ours to make; an
 * embedding application's is not, so startServer() leaves it alone.
 *
 * TurboFan also inlines less into each function it compiles (300 bytes of callees'
 * bytecode instead of 920): the publish path is a deep chain of hot functions (parse,
 * route, deliver, a stream's processMsg, the store, the record's encoding), each
 * compiled on its own with its callees inlined again, and in a fresh server's first
 * 30,000 JetStream publishes that compiling was 40-45% of the process's CPU (perf:
 * about 105 ms of 250). With the smaller budget it is about 70 ms and the warm path
 * costs what it did (bench/RESULTS.md, "JetStream publish: what a fresh server compiles").
 */
function optimizeSooner(): void {
  for (const flag of READY_V8_FLAGS) setFlagsFromString(flag);
  watchHeapGrowth();
}

/**
 * The V8 flags set once the server is ready. V8 rejects a code cache made under other
 * flags than its own, so the build (scripts/warm-code-cache.mjs) puts these back to
 * their defaults before it saves the cache of a server it ran up to ready.
 */
export const READY_V8_FLAGS: readonly string[] = [
  '--interrupt-budget=16000',
  '--max-inlined-bytecode-size-cumulative=300',
  // Fewer needless mark-compacts while the heap is small (ops/heap-growth.ts).
  SMALL_HEAP_GROWTH,
];

/** Options from the config file with the command line's flags on top, as the reference. */
export interface Settings {
  options: Partial<ServerOptions>;
  config: LoadedConfig | null;
}

export function resolveSettings(cl: CommandLine): Settings {
  if (cl.configFile === '') {
    if (cl.testConfig)
      throw new ConfigError(
        { file: '', line: 0, col: 0 },
        'must specify [-c, --config] option to check configuration file syntax',
      );
    return { options: cl.options, config: null };
  }
  const config = loadConfig(cl.configFile);
  return { options: { ...config.options, ...cl.options }, config };
}
