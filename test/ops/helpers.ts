// Helpers of the operations tests: a logger that keeps its lines, an embedded
// server built with it, and a bin/wirebus child whose log goes to a file.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerOptions } from '../../src/config/options.js';
import type { Logger, LoggerOptions } from '../../src/server/logger.js';
import { Server } from '../../src/server/server.js';

/** The repository root: this file runs as dist/test/ops/helpers.js. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A Logger that keeps `[LVL] text` lines in memory. */
export class MemoryLogger implements Logger {
  readonly lines: string[] = [];
  debugEnabled: boolean;
  traceEnabled: boolean;

  constructor(options: Partial<LoggerOptions> = {}) {
    this.debugEnabled = options.debug === true || options.trace === true;
    this.traceEnabled = options.trace === true;
  }

  info(t: string): void {
    this.lines.push(`[INF] ${t}`);
  }
  warn(t: string): void {
    this.lines.push(`[WRN] ${t}`);
  }
  error(t: string): void {
    this.lines.push(`[ERR] ${t}`);
  }
  fatal(t: string): void {
    this.lines.push(`[FTL] ${t}`);
  }
  debug(t: string): void {
    if (this.debugEnabled) this.lines.push(`[DBG] ${t}`);
  }
  trace(t: string): void {
    if (this.traceEnabled) this.lines.push(`[TRC] ${t}`);
  }
  reopen(): void {
    this.lines.push('(reopen)');
  }
  configure(o: LoggerOptions): void {
    this.debugEnabled = o.debug || o.trace;
    this.traceEnabled = o.trace;
  }
  close(): void {
    // Nothing to release.
  }

  /** Lines that contain `text`. */
  grep(text: string): string[] {
    return this.lines.filter((l) => l.includes(text));
  }
}

/** A started embedded server on 127.0.0.1 and a free port, logging into memory. */
export async function startLogged(
  options: Partial<ServerOptions> = {},
): Promise<{ server: Server; log: MemoryLogger }> {
  const log = new MemoryLogger(options);
  const server = new Server({ host: '127.0.0.1', port: 0, ...options }, log);
  await server.start();
  return { server, log };
}

export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-ops-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function waitUntil(
  check: () => boolean,
  ms = 5000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface Child {
  readonly child: ChildProcess;
  /** stderr so far. */
  stderr(): string;
  /** Resolves with the exit code once the process exited. */
  readonly exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

/** Runs `bin/wirebus args...`; the caller waits for readiness its own way. */
export function runWirebus(args: readonly string[], cwd = ROOT): Child {
  const child = spawn(process.execPath, [join(ROOT, 'bin/wirebus'), ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (t: string) => {
    stderr += t;
  });
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
  });
  const guard = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', guard);
  void exited.then(() => process.off('exit', guard));
  return {
    child,
    stderr: () => stderr,
    exited,
    kill: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/** The text of a file, '' while it does not exist. */
export function readText(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

/** Stops a child with SIGKILL if it outlived its test. */
export async function ensureStopped(c: Child): Promise<void> {
  c.kill('SIGKILL');
  await c.exited;
}
