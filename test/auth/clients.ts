// The two real clients, nats (v2) and @nats-io/transport-node (v3), behind one small
// connect function, so each security test runs against both.

import * as v2 from 'nats';
import * as v3 from '@nats-io/transport-node';

export interface AuthOptions {
  user?: string;
  pass?: string;
  token?: string;
  /** An NKEY seed (S...) to sign the nonce with. */
  nkeySeed?: string;
  /** A user JWT, signed with jwtSeed. */
  jwt?: string;
  jwtSeed?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

export interface Client {
  publish(subject: string, data?: string): void;
  subscribe(
    subject: string,
    opts?: { queue?: string },
  ): AsyncIterable<{ subject: string; string(): string; respond(d: string): boolean }> & {
    unsubscribe(): void;
  };
  request(subject: string, data: string, opts: { timeout: number }): Promise<{ string(): string }>;
  flush(): Promise<void>;
  close(): Promise<void>;
  closed(): Promise<unknown>;
  isClosed(): boolean;
  status(): AsyncIterable<{ type: string; data?: unknown; error?: unknown }>;
}

export interface ClientKind {
  readonly name: string;
  connect(port: number, auth?: AuthOptions): Promise<Client>;
}

const enc = new TextEncoder();

function common(port: number, auth: AuthOptions): Record<string, unknown> {
  const o: Record<string, unknown> = {
    servers: `127.0.0.1:${port}`,
    reconnect: false,
    maxReconnectAttempts: 0,
    timeout: 3000,
  };
  if (auth.user !== undefined) o.user = auth.user;
  if (auth.pass !== undefined) o.pass = auth.pass;
  if (auth.token !== undefined) o.token = auth.token;
  if (auth.tls !== undefined) o.tls = auth.tls;
  return o;
}

export const clients: readonly ClientKind[] = [
  {
    name: 'nats v2',
    async connect(port, auth = {}) {
      const o = common(port, auth) as v2.ConnectionOptions;
      if (auth.nkeySeed !== undefined)
        o.authenticator = v2.nkeyAuthenticator(enc.encode(auth.nkeySeed));
      if (auth.jwt !== undefined) {
        o.authenticator = v2.jwtAuthenticator(auth.jwt, enc.encode(auth.jwtSeed ?? ''));
      }
      return await v2.connect(o);
    },
  },
  {
    name: '@nats-io/transport-node v3',
    async connect(port, auth = {}) {
      const o = common(port, auth) as v3.NodeConnectionOptions;
      if (auth.nkeySeed !== undefined)
        o.authenticator = v3.nkeyAuthenticator(enc.encode(auth.nkeySeed));
      if (auth.jwt !== undefined) {
        o.authenticator = v3.jwtAuthenticator(auth.jwt, enc.encode(auth.jwtSeed ?? ''));
      }
      return await v3.connect(o);
    },
  },
];

/** The message of a rejected connect, for matching. */
export async function connectError(p: Promise<unknown>): Promise<string> {
  try {
    const c = (await p) as Client;
    await c.close();
    return 'connected';
  } catch (err) {
    if (!(err instanceof Error)) return String(err);
    const code = (err as { code?: unknown }).code;
    return `${err.message} ${typeof code === 'string' ? code : ''}`;
  }
}
