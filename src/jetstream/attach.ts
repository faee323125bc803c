// Runs JetStream beside a core server: the engine, the accounts that have it, INFO's
// `jetstream`, the start-up banner, /jsz and /varz figures; closed with the server.

import type { Server } from '../server/server.js';
import { JetStream } from './jetstream.js';
import { defaultJetStreamOptions, type JetStreamOptions } from './options.js';

export function startJetStream(server: Server, options: Partial<JetStreamOptions> = {}): JetStream {
  const o: JetStreamOptions = { ...defaultJetStreamOptions };
  for (const [k, v] of Object.entries(options) as [string, unknown][]) {
    if (v !== undefined) (o as unknown as Record<string, unknown>)[k] = v;
  }
  const js = new JetStream(server, o);
  banner(server, js);
  js.enableAccounts();
  server.jetstream = js;
  server.onShutdown(() => js.stop());
  return js;
}

function size(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(2)} ${units[i]}`;
}

/** The reference's start-up lines. */
function banner(server: Server, js: JetStream): void {
  const log = server.logger;
  log.info('Starting JetStream');
  log.info('    _ ___ _____ ___ _____ ___ ___   _   __  __');
  log.info(' _ | | __|_   _/ __|_   _| _ \\ __| /_\\ |  \\/  |');
  log.info('| || | _|  | | \\__ \\ | | |   / _| / _ \\| |\\/| |');
  log.info(' \\__/|___| |_| |___/ |_| |_|_\\___/_/ \\_\\_|  |_|');
  log.info('');
  log.info('         https://docs.nats.io/jetstream');
  log.info('');
  log.info('---------------- JETSTREAM ----------------');
  log.info(`  Max Memory:      ${size(js.maxMemory)}`);
  log.info(`  Max Storage:     ${size(js.maxStore)}`);
  const dir = js.options.storeDir === '' ? '(memory only)' : js.accountDir('').replace(/\/$/, '');
  log.info(`  Store Directory: ${JSON.stringify(dir)}`);
  if (js.options.domain !== '') log.info(`  Domain:          ${js.options.domain}`);
  log.info('-------------------------------------------');
  if (server.cluster !== null) {
    log.warn(
      "JetStream is single-server in wirebus: streams on this node are not replicated; a replicated JetStream is a nats-server cluster's job",
    );
  }
}
