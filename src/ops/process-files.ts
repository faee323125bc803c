// The files a server process leaves for tools: the pid file (`-P`, `pid_file`) and
// the ports file (`--ports_file_dir`): `<dir>/<name>_<pid>.ports` holding the
// reference's JSON, `{"nats":["nats://host:port"],"monitoring":["http://host:port"]}`,
// where name is the program as invoked (`wirebus`, or `nats-server` through a
// symlink so named, as the reference's os.Args[0]).
// Both are rewritten when a reload changes where they go, and removed at exit.

import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { Server } from '../server/server.js';
import type { ReloadHook } from '../server/reload.js';
import { processName } from './process-name.js';

/** What a ports file lists; empty lists are left out, as the reference's omitempty. */
export interface Ports {
  nats?: string[];
  monitoring?: string[];
  websocket?: string[];
}

/** The listener beside the client one, when monitoring is on. */
export interface MonitorAddress {
  readonly host: string;
  readonly port: number;
}

export function portsFilePath(
  dir: string,
  pid: number = process.pid,
  name: string = processName(),
): string {
  return join(dir, `${name}_${pid}.ports`);
}

/**
 * The URLs of each listener. A listener bound to every address lists each address
 * of this host, as the reference; it lists only the IPv4 ones for 0.0.0.0, where
 * Node (unlike Go) does not also accept IPv6.
 */
export function portsOf(server: Server, monitor: MonitorAddress | null): Ports {
  const ports: Ports = { nats: urls('nats', server.options.host, server.port) };
  if (monitor !== null && monitor.port > 0) {
    ports.monitoring = urls('http', monitor.host, monitor.port);
  }
  const ws = server.sideListeners.get('websocket');
  if (ws !== undefined) ports.websocket = urls(ws.scheme, ws.host, ws.port);
  return ports;
}

function urls(scheme: string, host: string, port: number): string[] {
  const hosts = host === '0.0.0.0' || host === '::' || host === '' ? localAddresses(host) : [host];
  return hosts.map((h) => `${scheme}://${isIP(h) === 6 ? `[${h}]` : h}:${port}`);
}

function localAddresses(host: string): string[] {
  const out: string[] = [];
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) {
      if (host === '0.0.0.0' && a.family !== 'IPv4') continue;
      out.push(a.address);
    }
  }
  return out;
}

export function writePortsFile(server: Server, monitor: MonitorAddress | null): void {
  const dir = server.options.portsFileDir;
  if (dir === '') return;
  const path = portsFilePath(dir);
  try {
    // Written aside, then renamed: a tool that sees the file sees all of it.
    writeFileSync(`${path}.tmp`, JSON.stringify(portsOf(server, monitor)), { mode: 0o666 });
    renameSync(`${path}.tmp`, path);
  } catch (err) {
    server.logger.error(`Error writing ports file (${path}): ${(err as Error).message}`);
  }
}

export function removePortsFile(server: Server, dir: string): void {
  if (dir === '') return;
  const path = portsFilePath(dir);
  try {
    rmSync(path);
  } catch (err) {
    server.logger.error(`Error cleaning up ports file ${path}: ${(err as Error).message}`);
  }
}

/** Writes the pid, without a newline, as the reference. */
export function writePidFile(server: Server): void {
  const path = server.options.pidFile;
  if (path === '') return;
  try {
    writeFileSync(path, String(process.pid), { mode: 0o660 });
  } catch (err) {
    server.logger.error(`Failed to write pidfile: ${(err as Error).message}`);
  }
}

/**
 * Removed at exit (the reference leaves it behind): a stale pid file could make a
 * later `--signal reload=<file>` hit whichever process reuses the pid.
 */
export function removePidFile(path: string): void {
  if (path !== '') rmSync(path, { force: true });
}

/** Moves the files when a reload changes `pid_file` or `ports_file_dir`. */
export function processFilesReloadHook(monitor: MonitorAddress | null): ReloadHook {
  return {
    name: 'process files',
    prepare: (ctx) => {
      const pid = ctx.changed.has('pidFile');
      const ports = ctx.changed.has('portsFileDir');
      if (!pid && !ports) return null;
      return () => {
        if (pid) {
          removePidFile(ctx.previous.pidFile);
          writePidFile(ctx.server);
        }
        if (ports) {
          removePortsFile(ctx.server, ctx.previous.portsFileDir);
          writePortsFile(ctx.server, monitor);
        }
      };
    },
  };
}
