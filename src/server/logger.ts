// Log lines in the reference server's format: `[pid] 2006/01/02 15:04:05.000000 [INF] text`.
// Debug and trace are checked by the caller through flags, so a disabled level
// costs one boolean test and builds no string.

import { createWriteStream, type WriteStream } from 'node:fs';

export interface Logger {
  readonly debugEnabled: boolean;
  readonly traceEnabled: boolean;
  info(text: string): void;
  warn(text: string): void;
  error(text: string): void;
  fatal(text: string): void;
  debug(text: string): void;
  trace(text: string): void;
  /** Reopens the log file (SIGUSR1), so log rotation works. */
  reopen(): void;
  close(): void;
}

export interface LoggerOptions {
  debug: boolean;
  trace: boolean;
  logtime: boolean;
  logFile: string;
  quiet: boolean;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

export function timestamp(d: Date): string {
  return (
    `${d.getFullYear()}/${pad(d.getMonth() + 1, 2)}/${pad(d.getDate(), 2)} ` +
    `${pad(d.getHours(), 2)}:${pad(d.getMinutes(), 2)}:${pad(d.getSeconds(), 2)}.` +
    pad(d.getMilliseconds() * 1000, 6)
  );
}

export function createLogger(options: LoggerOptions): Logger {
  const quiet = options.quiet;
  let file: WriteStream | null = null;
  const open = (): void => {
    if (options.logFile !== '') file = createWriteStream(options.logFile, { flags: 'a' });
  };
  open();
  const prefix = `[${process.pid}] `;
  const write = (tag: string, text: string): void => {
    if (quiet) return;
    const line =
      prefix + (options.logtime ? timestamp(new Date()) + ' ' : '') + tag + ' ' + text + '\n';
    if (file !== null) file.write(line);
    else process.stderr.write(line);
  };
  return {
    debugEnabled: !quiet && (options.debug || options.trace),
    traceEnabled: !quiet && options.trace,
    info: (t) => {
      write('[INF]', t);
    },
    warn: (t) => {
      write('[WRN]', t);
    },
    error: (t) => {
      write('[ERR]', t);
    },
    fatal: (t) => {
      write('[FTL]', t);
    },
    debug: (t) => {
      if (options.debug || options.trace) write('[DBG]', t);
    },
    trace: (t) => {
      if (options.trace) write('[TRC]', t);
    },
    reopen: () => {
      if (file !== null) {
        file.end();
        file = null;
        open();
      }
    },
    close: () => {
      if (file !== null) file.end();
      file = null;
    },
  };
}
