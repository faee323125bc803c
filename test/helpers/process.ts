// Runs `bin/wirebus` as a child process, as users and tools run it: started on a
// port, ready once it logs "Server is ready", stopped with SIGTERM. Needs the
// build in dist/ (bin/wirebus imports dist/src/cli.js).

import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The repository root: this file runs as dist/test/helpers/process.js. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Upper bound on start-up, so a broken build fails the test instead of hanging it. */
const START_LIMIT_MS = 10_000;
const STOP_LIMIT_MS = 5_000;

const running = new Set<ChildProcess>();
// A test file that crashes must not leave servers behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface WirebusProcess {
  readonly port: number;
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stderr so far (its log). */
  log(): string;
  /** SIGTERM, then resolves once the process has exited. */
  stop(): Promise<void>;
}

/** A port nobody listens on right now. */
/**
 * A port free on 127.0.0.1 now, for a server started later (or restarted on the same
 * port). Drawn below the kernel's ephemeral range (32768-60999 on Linux): a port from
 * listen(0) is one the kernel also hands out as the local end of outgoing connections,
 * and the suite opens thousands of those, so one took a test's monitoring port between
 * this check and the server's listen (CI, file-config.test.ts).
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    if ((await bound(port)) !== 0) return port;
  }
  return bound(0);
}

/** Binds `port` (0: any) on 127.0.0.1 and lets it go: the port bound, or 0 if it was taken. */
async function bound(port: number): Promise<number> {
  const probe = createServer();
  const ok = await new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!ok) return 0;
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port bound');
  return address.port;
}

/** Starts `bin/wirebus -a 127.0.0.1 -p <port>` and resolves once it is ready. */
export async function startWirebus(
  port: number,
  extraArgs: readonly string[] = [],
  /** The log line that means ready (with -ns there is no client listener to wait for). */
  readyText = 'Server is ready',
  /**
   * How long to wait for `readyText`. A clustered node creates its replicated buckets
   * before it logs ready, which takes seconds on a loaded machine.
   */
  limitMs = START_LIMIT_MS,
): Promise<WirebusProcess> {
  const child = spawn(
    process.execPath,
    ['bin/wirebus', '-a', '127.0.0.1', '-p', String(port), ...extraArgs],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  running.add(child);
  let stderr = '';
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      running.delete(child);
      resolve();
    });
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const guard = setTimeout(() => child.kill('SIGKILL'), STOP_LIMIT_MS);
    await exited;
    clearTimeout(guard);
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`bin/wirebus not ready after ${limitMs} ms:\n${stderr}`));
      }, limitMs);
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (text: string) => {
        stderr += text;
        if (stderr.includes(readyText)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(
          new Error(
            `bin/wirebus exited before it was ready (${String(child.exitCode)}):\n${stderr}`,
          ),
        );
      });
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    child,
    log: () => stderr,
    stop,
  };
}
