// The reference streaming server (nats-streaming-server 0.25.3) as a child process,
// for the tests that need it beside wirebus (the mixed fault-tolerance group, a
// wirebus directory served by it) and for the fixture capture. CI does not have it:
// those tests skip with refSkipReason().
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

const START_LIMIT_MS = 15_000;

export function refBinary(): string | undefined {
  const bin = process.env.STAN_REF_BIN ?? '/tmp/stan-ref/nats-streaming-server';
  return existsSync(bin) ? bin : undefined;
}

/** False when the binary is there, otherwise the reason to skip. */
export function refSkipReason(): string | false {
  if (refBinary() !== undefined) return false;
  return (
    'needs the reference nats-streaming-server 0.25.3: set STAN_REF_BIN or build ' +
    '/tmp/stan-ref/nats-streaming-server (shared/tools/build-stan-reference.sh)'
  );
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface RefProcess {
  readonly child: ChildProcess;
  readonly url: string;
  log(): string;
  /** Resolves once the process has exited (whatever stopped it). */
  readonly exited: Promise<void>;
  /** SIGINT (the reference's clean shutdown), then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts the reference on 127.0.0.1:`port` with `args`; resolves once it logs
 * `readyText` ("Streaming Server is ready", or the standby's line in FT mode).
 */
export async function startReference(
  port: number,
  args: readonly string[],
  readyText = 'Streaming Server is ready',
): Promise<RefProcess> {
  const bin = refBinary();
  if (bin === undefined) throw new Error(String(refSkipReason()));
  const child = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      running.delete(child);
      resolve();
    });
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGINT');
    const guard = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(guard);
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`reference not ready after ${START_LIMIT_MS} ms:\n${out}`));
    }, START_LIMIT_MS);
    const onData = (text: string): void => {
      out += text;
      if (out.includes(readyText)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`reference exited before it was ready:\n${out}`));
    });
  }).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  return { child, url: `nats://127.0.0.1:${port}`, log: () => out, exited, stop };
}
