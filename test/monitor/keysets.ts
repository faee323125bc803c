// The two configurations whose monitoring answers are compared key by key with the
// reference's (fixtures/keysets-*.json, recorded by capture-keysets.ts): the
// defaults, and accounts with users, a cluster of two servers and TLS on the
// client port. The same config text and the same clients serve the recording
// (nats-server) and the test (bin/wirebus), so the two cannot drift apart.

import { connect, type NatsConnection } from 'nats';
import type { Certs } from '../auth/helpers.js';
import { freePort } from '../helpers/process.js';

export type KeysetKind = 'default' | 'secure';

/** The endpoints recorded, and compared, for each configuration. */
export const KEYSET_ENDPOINTS: Record<KeysetKind, readonly string[]> = {
  default: ['/varz', '/connz', '/subsz', '/routez', '/accountz', '/jsz', '/healthz'],
  secure: [
    '/varz',
    '/connz',
    '/connz?subs=detail&auth=true',
    '/subsz',
    '/routez',
    '/routez?subs=1',
    '/accountz',
    '/accountz?acc=A',
    '/jsz',
    '/healthz',
  ],
};

export interface KeysetPorts {
  readonly client: number;
  readonly http: number;
  readonly cluster: number;
  /** The other server's route port (secure only). */
  readonly peer: number;
}

/** Ports of the two servers: each one's route port is the other's peer. */
export async function keysetPorts(): Promise<[KeysetPorts, KeysetPorts]> {
  const one: KeysetPorts = {
    client: await freePort(),
    http: await freePort(),
    cluster: await freePort(),
    peer: await freePort(),
  };
  const two: KeysetPorts = {
    client: await freePort(),
    http: await freePort(),
    cluster: one.peer,
    peer: one.cluster,
  };
  return [one, two];
}

/** Config text of one server of the configuration. */
export function keysetConfig(kind: KeysetKind, p: KeysetPorts, certs: Certs | null): string {
  const common = `listen: 127.0.0.1:${p.client}\nhttp: 127.0.0.1:${p.http}\n`;
  if (kind === 'default' || certs === null) return common;
  return (
    common +
    `server_name: keys-${p.client}\n` +
    `accounts {\n` +
    `  A { users [ { user: a, password: apass } ] }\n` +
    `  B { users [ { user: b, password: bpass } ] }\n` +
    `}\n` +
    `tls {\n  cert_file: "${certs.serverCert}"\n  key_file: "${certs.serverKey}"\n}\n` +
    `cluster {\n  name: keys\n  listen: 127.0.0.1:${p.cluster}\n` +
    `  routes: [ "nats-route://127.0.0.1:${p.peer}" ]\n}\n`
  );
}

/** Clients with subscriptions and traffic, so lists are not empty. */
export async function keysetClients(
  kind: KeysetKind,
  port: number,
  certs: Certs | null,
): Promise<NatsConnection[]> {
  const servers = `127.0.0.1:${port}`;
  if (kind === 'default' || certs === null) {
    const nc = await connect({ servers, name: 'keys' });
    nc.subscribe('keys.>');
    nc.subscribe('keys.q', { queue: 'workers' });
    nc.publish('keys.x', 'hi');
    await nc.flush();
    return [nc];
  }
  const tls = { caFile: certs.ca };
  const a = await connect({ servers, name: 'keys-a', user: 'a', pass: 'apass', tls });
  const b = await connect({ servers, name: 'keys-b', user: 'b', pass: 'bpass', tls });
  a.subscribe('keys.>');
  a.subscribe('keys.q', { queue: 'workers' });
  b.subscribe('other');
  a.publish('keys.x', 'hi');
  await a.flush();
  await b.flush();
  return [a, b];
}
