// Helpers for the security tests: servers configured the way operators configure
// them (SecurityOptions or config file text), raw clients, certificates made at run
// time with openssl, and NKEY/JWT credentials minted with @nats-io/nkeys and
// @nats-io/jwt.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { attachSecurityFromSettings } from '../../src/auth/config.js';
import type { SecurityOptions } from '../../src/auth/options.js';
import { attachSecurity, type Security } from '../../src/auth/security.js';
import type { ServerOptions } from '../../src/config/options.js';
import { loadConfig } from '../../src/config/load.js';
import { Server } from '../../src/server/server.js';
import { RawClient } from '../helpers/raw.js';

export { RawClient, C0 } from '../helpers/raw.js';

const servers: Server[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A temporary directory removed when the test file ends. */
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'wirebus-auth-'));
  dirs.push(d);
  return d;
}

const base: Partial<ServerOptions> = { host: '127.0.0.1', port: 0, quiet: true };

/** An embedded server with the given security options, started. */
export async function startSecure(
  security: SecurityOptions,
  options: Partial<ServerOptions> = {},
): Promise<{ server: Server; security: Security; port: number }> {
  const server = new Server({ ...base, ...options });
  const sec = attachSecurity(server, security);
  await server.start();
  servers.push(server);
  return { server, security: sec, port: server.port };
}

/** A server configured by config file text, as `wirebus -c file` reads it. */
export async function startWithConfig(
  text: string,
  options: Partial<ServerOptions> = {},
  flags: ReadonlyMap<string, string> = new Map(),
): Promise<{ server: Server; port: number; file: string }> {
  const dir = tempDir();
  const file = join(dir, 'server.conf');
  writeFileSync(file, text);
  const config = loadConfig(file);
  const server = new Server({ ...config.options, ...base, ...options });
  attachSecurityFromSettings(server, config, flags);
  await server.start();
  servers.push(server);
  return { server, port: server.port, file };
}

export async function open(port: number): Promise<RawClient> {
  return RawClient.open(port);
}

/** Sends bytes and returns what came back once the server closed or `ms` passed. */
export async function exchangeUntilClose(c: RawClient, bytes: string, ms = 1500): Promise<string> {
  c.send(bytes);
  await c.waitClosed(ms);
  return c.take();
}

export function connectLine(fields: Record<string, unknown>): string {
  return `CONNECT ${JSON.stringify({ verbose: false, pedantic: false, ...fields })}\r\n`;
}

export const VIOLATION = "-ERR 'Authorization Violation'\r\n";

// ---- certificates -----------------------------------------------------------------------

export interface Certs {
  readonly dir: string;
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** A client certificate signed by a CA the server does not trust. */
  readonly rogueCert: string;
  readonly rogueKey: string;
  /** Route certificates (server and client use, as routes need both): trusted and not. */
  readonly routeCert: string;
  readonly routeKey: string;
  readonly rogueRouteCert: string;
  readonly rogueRouteKey: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** A CA, a server certificate for 127.0.0.1/localhost and client certificates, made now. */
export function makeCerts(): Certs {
  const dir = tempDir();
  const ext = join(dir, 'ext.cnf');
  writeFileSync(
    ext,
    [
      '[server]',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      'extendedKeyUsage=serverAuth',
      '[client]',
      'extendedKeyUsage=clientAuth',
      '[route]',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      'extendedKeyUsage=serverAuth,clientAuth',
      '',
    ].join('\n'),
  );
  const ca = (name: string): void => {
    openssl(dir, [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}-key.pem`,
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    ]);
  };
  const leaf = (name: string, issuer: string, section: string): void => {
    openssl(dir, [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}-key.pem`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name}`,
    ]);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${issuer}.pem`,
      '-CAkey',
      `${issuer}-key.pem`,
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      ext,
      '-extensions',
      section,
    ]);
  };
  ca('ca');
  ca('rogue-ca');
  leaf('server', 'ca', 'server');
  leaf('client', 'ca', 'client');
  leaf('rogue', 'rogue-ca', 'client');
  leaf('route', 'ca', 'route');
  leaf('rogue-route', 'rogue-ca', 'route');
  const p = (f: string): string => join(dir, f);
  return {
    dir,
    ca: p('ca.pem'),
    serverCert: p('server.pem'),
    serverKey: p('server-key.pem'),
    clientCert: p('client.pem'),
    clientKey: p('client-key.pem'),
    rogueCert: p('rogue.pem'),
    rogueKey: p('rogue-key.pem'),
    routeCert: p('route.pem'),
    routeKey: p('route-key.pem'),
    rogueRouteCert: p('rogue-route.pem'),
    rogueRouteKey: p('rogue-route-key.pem'),
  };
}

/** Waits ms milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
