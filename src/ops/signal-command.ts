// `wirebus --signal <command>[=<pid|pidfile>]` (`-sl`): sends a signal to a running
// server instead of starting one, as the reference's ProcessSignal. Without a pid,
// the one running server is found the way the reference runs `pgrep nats-server`:
// here, processes whose command line runs a script named as this command was
// invoked (processName(): `wirebus`, or `nats-server` through a symlink so named)
// under node (`node bin/wirebus ...`, `node_modules/.bin/wirebus ...`) or whose
// program itself has that name. The command's own process is skipped.

import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { processName } from './process-name.js';

const COMMANDS: Readonly<Record<string, NodeJS.Signals>> = {
  stop: 'SIGKILL',
  quit: 'SIGINT',
  term: 'SIGTERM',
  reopen: 'SIGUSR1',
  reload: 'SIGHUP',
  ldm: 'SIGUSR2',
};

export class SignalCommandError extends Error {
  override readonly name = 'SignalCommandError';
}

export interface SignalCommandEnv {
  /** Where to look for processes; /proc on Linux. */
  procRoot?: string;
  /** This process, skipped when looking. */
  selfPid?: number;
  kill?: (pid: number, signal: NodeJS.Signals) => void;
}

/**
 * Sends the signal `spec` asks for. Throws SignalCommandError with the reference's
 * message ("no wirebus processes running", "invalid pid: x", ...) otherwise.
 */
export function sendSignalCommand(spec: string, env: SignalCommandEnv = {}): void {
  const parts = spec.split('=');
  if (parts.length > 2) {
    // Go prints the rest as a slice: [a b].
    throw new SignalCommandError(`invalid signal parameters: [${parts.slice(2).join(' ')}]`);
  }
  const command = parts[0]!;
  // As the reference, an empty pid (`reload=`) means "find it".
  const pidText = parts.length === 2 ? maybeReadPidFile(parts[1]!) : '';
  const pid = pidText === '' ? findServer(env) : resolvePid(pidText);
  const signal = COMMANDS[command];
  if (signal === undefined) throw new SignalCommandError(`unknown signal "${command}"`);
  try {
    (env.kill ?? process.kill)(pid, signal);
  } catch (err) {
    throw new SignalCommandError(killMessage(err as NodeJS.ErrnoException));
  }
}

/** A pid file's contents when `text` names a readable file, else `text` itself. */
function maybeReadPidFile(text: string): string {
  try {
    return readFileSync(text, 'utf8');
  } catch {
    return text;
  }
}

function resolvePid(text: string): number {
  // The reference refuses a trailing newline in a pid file (strconv.Atoi); pid
  // files written by other tools often have one, so surrounding blanks are allowed.
  const trimmed = text.trim();
  if (!/^\+?\d+$/.test(trimmed) || Number(trimmed) <= 0) {
    throw new SignalCommandError(`invalid pid: ${text}`);
  }
  return Number(trimmed);
}

function findServer(env: SignalCommandEnv): number {
  const pids = findServerPids(env.procRoot ?? '/proc', env.selfPid ?? process.pid);
  const name = processName();
  if (pids.length === 0) throw new SignalCommandError(`no ${name} processes running`);
  if (pids.length > 1) {
    throw new SignalCommandError(
      `multiple ${name} processes running:\n${pids.map(String).join('\n')}`,
    );
  }
  return pids[0]!;
}

/** The pids of running servers named `name`, in ascending order. */
export function findServerPids(
  procRoot: string,
  selfPid: number,
  name: string = processName(),
): number[] {
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    throw new SignalCommandError('unable to resolve pid, try providing one');
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === selfPid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(join(procRoot, entry, 'cmdline'), 'latin1');
    } catch {
      continue; // the process ended meanwhile, or is not ours to read
    }
    if (
      isServerCommandLine(
        cmdline.split('\0').filter((a) => a !== ''),
        name,
      )
    )
      pids.push(pid);
  }
  return pids.sort((a, b) => a - b);
}

/** `<name> ...`, or `node [node options] .../<name> ...` (name: `wirebus` by default). */
export function isServerCommandLine(
  argv: readonly string[],
  name: string = processName(),
): boolean {
  const program = argv[0];
  if (program === undefined) return false;
  if (basename(program) === name) return true;
  if (!/^node(js)?(\d+)?$/.test(basename(program))) return false;
  const script = argv.slice(1).find((a) => !a.startsWith('-'));
  return script !== undefined && basename(script) === name;
}

/** Go's text for the errno of kill(2). */
function killMessage(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ESRCH':
      return 'no such process';
    case 'EPERM':
      return 'operation not permitted';
    default:
      return err.message;
  }
}
