// Log lines in the reference server's format: `[pid] 2006/01/02 15:04:05.000000 [INF] text`.
// Debug and trace are checked by the caller through flags, so a disabled level
// costs one boolean test and builds no string.

import { closeSync, openSync, writeSync } from 'node:fs';
import { perf, TIME_ORIGIN } from './clock.js';

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
  /** Takes new settings (a config reload): levels, timestamps, another file. */
  configure(options: LoggerOptions): void;
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

/** Local time with microseconds, as the reference's log lines (ms since epoch, fractional). */
export function timestamp(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getFullYear()}/${pad(d.getMonth() + 1, 2)}/${pad(d.getDate(), 2)} ` +
    `${pad(d.getHours(), 2)}:${pad(d.getMinutes(), 2)}:${pad(d.getSeconds(), 2)}.` +
    pad(Math.floor(ms * 1000) % 1_000_000, 6)
  );
}

export function createLogger(options: LoggerOptions): Logger {
  return new LineLogger(options);
}

/**
 * Writes each line at once, to the file with a synchronous write as the reference
 * does: a line logged just before the process exits is on disk, and a rotated file
 * (renamed, then SIGUSR1) gets no line after its reopen.
 */
class LineLogger implements Logger {
  debugEnabled = false;
  traceEnabled = false;
  private readonly prefix = `[${process.pid}] `;
  private settings: LoggerOptions;
  private fd: number | null = null;

  constructor(options: LoggerOptions) {
    this.settings = { ...options };
    this.levels();
    this.open();
  }

  private levels(): void {
    const o = this.settings;
    this.debugEnabled = !o.quiet && (o.debug || o.trace);
    this.traceEnabled = !o.quiet && o.trace;
  }

  private open(): void {
    if (this.settings.logFile !== '' && !this.settings.quiet) {
      this.fd = openSync(this.settings.logFile, 'a', 0o640);
    }
  }

  private write(tag: string, text: string): void {
    const o = this.settings;
    if (o.quiet) return;
    const line =
      this.prefix +
      (o.logtime ? timestamp(TIME_ORIGIN + perf.now()) + ' ' : '') +
      tag +
      ' ' +
      text +
      '\n';
    if (this.fd === null) {
      process.stderr.write(line);
      return;
    }
    try {
      writeSync(this.fd, line);
    } catch {
      // A full disk must not take the server down; the line goes to stderr instead.
      process.stderr.write(line);
    }
  }

  info(text: string): void {
    this.write('[INF]', text);
  }
  warn(text: string): void {
    this.write('[WRN]', text);
  }
  error(text: string): void {
    this.write('[ERR]', text);
  }
  fatal(text: string): void {
    this.write('[FTL]', text);
  }
  debug(text: string): void {
    if (this.debugEnabled) this.write('[DBG]', text);
  }
  trace(text: string): void {
    if (this.traceEnabled) this.write('[TRC]', text);
  }

  reopen(): void {
    if (this.fd === null) return;
    this.close();
    this.open();
  }

  configure(options: LoggerOptions): void {
    const fileChanged = options.logFile !== this.settings.logFile;
    this.settings = { ...options };
    this.levels();
    if (fileChanged) {
      this.close();
      this.open();
    }
  }

  close(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      // Already closed: nothing left to release.
    }
    this.fd = null;
  }
}
