// The reference streaming server (nats-streaming-server 0.25.3, built on developers'
// machines by ../shared/tools/build-stan-reference.sh) as a child process, for the
// tests that need it live: wirebus's data served by the reference, mixed
// fault-tolerance groups. CI has no such binary: those tests skip, saying why.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

export const REF_BIN = process.env.STAN_REF_BIN ?? '/tmp/stan-ref/nats-streaming-server';

/** For `it(..., { skip })`: why the reference cannot run here, or false. */
export function skipWithoutReference(): string | false {
  if (existsSync(REF_BIN)) return false;
  const why = `no reference server at ${REF_BIN} (build it with ../shared/tools/build-stan-reference.sh or set STAN_REF_BIN)`;
  process.stderr.write(`# SKIPPED reference tests: ${why}\n`);
  return why;
}

export interface RefProcess {
  readonly child: ChildProcess;
  log(): string;
  /** SIGTERM (a clean shutdown), resolves once it exited. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts the reference with `args`; resolves once its log says `readyText`. */
export async function startReference(
  args: readonly string[],
  readyText: string,
): Promise<RefProcess> {
  const child = spawn(REF_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let out = '';
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      running.delete(child);
      resolve();
    });
  });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`reference not ready after 15 s:\n${out}`));
    }, 15_000);
    const onData = (text: string): void => {
      out += text;
      if (out.includes(readyText)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`reference exited (${code}) before ready:\n${out}`));
    });
  });
  await ready;
  return {
    child,
    log: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const guard = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(guard);
    },
  };
}
