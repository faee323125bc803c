// Runs JetStream beside a core server: the engine, the accounts that have it, INFO's
// `jetstream`, the start-up banner, /jsz and /varz figures; closed with the server.
// With a store_dir, the server first takes the directory's lock: a second server (a
// process or another embedded server) on the same store_dir does not start.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from '../server/server.js';
import { DirLock } from '../durable/dir-lock.js';
import { JetStream } from './jetstream.js';
import { defaultJetStreamOptions, domainProblem, type JetStreamOptions } from './options.js';

export async function startJetStream(
  server: Server,
  options: Partial<JetStreamOptions> = {},
): Promise<JetStream> {
  const o: JetStreamOptions = { ...defaultJetStreamOptions };
  for (const [k, v] of Object.entries(options) as [string, unknown][]) {
    if (v !== undefined) (o as unknown as Record<string, unknown>)[k] = v;
  }
  const problem = domainProblem(o.domain);
  if (problem !== null) throw new Error(problem);
  const lock = o.storeDir === '' ? null : await lockStoreDir(server, o.storeDir);
  const js = new JetStream(server, o);
  banner(server, js);
  js.enableAccounts();
  server.jetstream = js;
  // Accounts added, changed or removed by a config reload (SIGHUP, reloadSecurity):
  // looked at once every layer's work ran (the security layer's hook may come later
  // in the list when an embedded server had no security at start).
  server.reloadHooks.push({
    name: 'jetstream',
    prepare: () => () => {
      Promise.resolve()
        .then(() => js.reloadAccounts())
        .catch((err: unknown) => {
          server.logger.error(`JetStream: accounts after reload: ${String(err)}`);
        });
    },
  });
  server.onShutdown(async () => {
    server.logger.info('Initiating JetStream Shutdown...');
    await js.stop();
    await lock?.release();
    server.logger.info('JetStream Shutdown');
  });
  return js;
}

/**
 * nats-server 2.9 takes no lock on its store_dir, and two of them on one directory
 * corrupt each other's streams. wirebus takes the lock its streaming FILE store takes
 * (an fcntl lock the kernel frees when the holder dies, kill -9 included) on
 * STORE_DIR/jetstream/.rootdir.lck, and refuses to start when another server holds it.
 */
const LOCK_WAIT_MS = 2000;

async function lockStoreDir(server: Server, storeDir: string): Promise<DirLock | null> {
  const dir = join(storeDir, 'jetstream');
  mkdirSync(dir, { recursive: true });
  const lock = new DirLock(dir, (owner) => {
    server.logger.error(`JetStream: the lock on ${dir} was taken over by ${owner}`);
  });
  let held: boolean;
  try {
    // A holder that was just killed lets go once its lock helper sees it gone: a
    // restart right after a kill -9 waits a moment for that instead of failing.
    held = await lock.tryLock(true);
    for (let waited = 0; !held && waited < LOCK_WAIT_MS; waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
      held = await lock.tryLock(true);
    }
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    server.logger.warn(`JetStream: ${why}: ${dir} is not locked`);
    return null;
  }
  if (!held) {
    await lock.release();
    throw new Error(
      `JetStream store directory ${JSON.stringify(storeDir)} is in use by another server (${lock.describeOwner()})`,
    );
  }
  return lock;
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
