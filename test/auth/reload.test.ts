// Config reload of the security layer on an embedded server: the config file is
// rewritten and reloaded as SIGHUP does (and reloadSecurity is called with plain
// options). New connections meet the new settings; existing ones are checked again
// with the bytes, close reasons and log lines of nats-server 2.9.10:
//   user gone or moved to another account -> closed without a word, 'Client Closed'
//   credentials no longer valid           -> -ERR 'Authorization Violation', 'Authentication Failure'
//   subscription no longer allowed        -> -ERR 'Permissions Violation for Subscription to "foo" (sid "1")'
// TLS: new connections get the new certificate, existing sessions stay.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import bcrypt from 'bcrypt';
import { encodeAccount, encodeOperator, encodeUser } from '@nats-io/jwt';
import { createAccount, createOperator, createUser } from '@nats-io/nkeys';
import * as nats from 'nats';
import { attachSecurityFromSettings } from '../../src/auth/config.js';
import { attachSecurity } from '../../src/auth/security.js';
import { reloadSecurity } from '../../src/auth/reload.js';
import { loadConfig } from '../../src/config/load.js';
import { ReloadError, rememberConfig } from '../../src/server/reload.js';
import { Server } from '../../src/server/server.js';
import { MemoryLogger, waitUntil } from '../ops/helpers.js';
import { connectLine, makeCerts, open, RawClient, tempDir, VIOLATION } from './helpers.js';

const servers: Server[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

interface Reloadable {
  server: Server;
  log: MemoryLogger;
  port: number;
  file: string;
  /** Rewrites the file and reloads it as SIGHUP does; returns the error text of a refusal. */
  reload(text: string): string | null;
}

/** A server started from config text the way `wirebus -c file` starts. */
async function startConf(text: string): Promise<Reloadable> {
  const file = join(tempDir(), 'server.conf');
  writeFileSync(file, text);
  const config = loadConfig(file);
  const log = new MemoryLogger();
  const server = new Server({ ...config.options, host: '127.0.0.1', port: 0 }, log);
  attachSecurityFromSettings(server, config, new Map());
  rememberConfig(server, config);
  await server.start();
  servers.push(server);
  return {
    server,
    log,
    port: server.port,
    file,
    reload(next: string): string | null {
      writeFileSync(file, next);
      try {
        const c = loadConfig(file);
        server.reloadConfig({ ...c.options, host: '127.0.0.1', port: 0 }, c);
        return null;
      } catch (err) {
        return (err as Error).message;
      }
    },
  };
}

/** A raw client past CONNECT (and its PONG). */
async function connected(port: number, fields: Record<string, unknown>): Promise<RawClient> {
  const c = await open(port);
  assert.equal(await c.exchange(connectLine(fields) + 'PING\r\n'), 'PONG\r\n');
  return c;
}

/** What a fresh connection with these credentials gets for CONNECT+PING. */
async function tryConnect(port: number, fields: Record<string, unknown>): Promise<string> {
  const c = await open(port);
  const reply = await c.exchange(connectLine(fields) + 'PING\r\n', 'PONG\r\n', 1500);
  c.close();
  return reply;
}

function lastClosed(server: Server, cid: number): string | undefined {
  return server.closedClients.find((c) => c.cid === cid)?.reason;
}

const users = (list: string, extra = ''): string =>
  `authorization {\n  users: [\n${list}\n  ]\n${extra}}\n`;

describe('reload: users and passwords', () => {
  it('a user added can connect after the reload; the log names what was reloaded', async () => {
    const s = await startConf(users('{ user: alice, password: a1 }'));
    assert.equal(await tryConnect(s.port, { user: 'carol', pass: 'c1' }), VIOLATION);
    s.log.lines.length = 0;
    assert.equal(
      s.reload(users('{ user: alice, password: a1 }\n{ user: carol, password: c1 }')),
      null,
    );
    assert.deepEqual(s.log.lines, [
      '[INF] Reloaded: authorization users',
      '[INF] Reloaded: accounts',
      '[INF] Reloaded server configuration',
    ]);
    assert.equal(await tryConnect(s.port, { user: 'carol', pass: 'c1' }), 'PONG\r\n');
    const nc = await nats.connect({
      servers: `127.0.0.1:${s.port}`,
      user: 'carol',
      pass: 'c1',
      reconnect: false,
    });
    await nc.flush();
    await nc.close();
  });

  it('a user removed: its connection is closed without a word (Client Closed), a new one is refused', async () => {
    const s = await startConf(users('{ user: alice, password: a1 }\n{ user: bob, password: b1 }'));
    const bob = await connected(s.port, { user: 'bob', pass: 'b1' });
    const alice = await connected(s.port, { user: 'alice', pass: 'a1' });
    const bobCid = s.server.closedClients.length; // nothing closed yet
    assert.equal(bobCid, 0);
    assert.equal(s.reload(users('{ user: alice, password: a1 }')), null);
    assert.ok(await bob.waitClosed());
    assert.equal(bob.take(), '', 'the reference sends nothing to a removed user');
    assert.deepEqual(
      s.server.closedClients.map((c) => [c.user, c.reason]),
      [['bob', 'Client Closed']],
    );
    assert.equal(await alice.exchange('PING\r\n'), 'PONG\r\n', 'alice stays');
    assert.equal(await tryConnect(s.port, { user: 'bob', pass: 'b1' }), VIOLATION);
    alice.close();
  });

  it('a password changed: -ERR Authorization Violation, Authentication Failure, and the reference log line', async () => {
    const s = await startConf(users('{ user: alice, password: a1 }\n{ user: bob, password: b1 }'));
    const alice = await connected(s.port, { user: 'alice', pass: 'a1' });
    const bob = await connected(s.port, { user: 'bob', pass: 'b1' });
    const cid = alice.infoJson().client_id as number;
    assert.equal(
      s.reload(users('{ user: alice, password: a2 }\n{ user: bob, password: b1 }')),
      null,
    );
    assert.ok(await alice.waitClosed());
    assert.equal(alice.take(), VIOLATION);
    assert.equal(lastClosed(s.server, cid), 'Authentication Failure');
    assert.deepEqual(s.log.grep('authentication error'), [
      `[ERR] 127.0.0.1:${portOf(s, cid)} - cid:${cid} - authentication error - User "alice"`,
    ]);
    assert.equal(await bob.exchange('PING\r\n'), 'PONG\r\n', 'bob stays');
    assert.equal(await tryConnect(s.port, { user: 'alice', pass: 'a1' }), VIOLATION);
    assert.equal(await tryConnect(s.port, { user: 'alice', pass: 'a2' }), 'PONG\r\n');
    bob.close();
  });

  it('bcrypt passwords are checked again off the event loop', async () => {
    const h1 = await bcrypt.hash('s3cret', 4);
    const h2 = await bcrypt.hash('other', 4);
    const s = await startConf(users(`{ user: alice, password: "${h1}" }`));
    const alice = await connected(s.port, { user: 'alice', pass: 's3cret' });
    // The same hash again (a comment changed): still in.
    assert.equal(s.reload(users(`{ user: alice, password: "${h1}" }`, '# edited\n')), null);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await alice.exchange('PING\r\n'), 'PONG\r\n');
    assert.equal(s.reload(users(`{ user: alice, password: "${h2}" }`)), null);
    assert.ok(await alice.waitClosed());
    assert.equal(alice.take(), VIOLATION);
  });

  it('a CONNECT whose bcrypt check is under way when the user is removed does not get in', async () => {
    const hash = await bcrypt.hash('slow', 12);
    // A long auth timeout: on a loaded machine the compare may take over the default
    // second, and the timeout is not what this test is about.
    const s = await startConf(
      users(`{ user: alice, password: "${hash}" }\n{ user: bob, password: b }`, '  timeout: 10\n'),
    );
    const c = await open(s.port);
    c.send(connectLine({ user: 'alice', pass: 'slow' }) + 'PING\r\n');
    await waitUntil(() => s.server.clients.size === 1 && !c.closed, 1000, 'connection');
    await new Promise((r) => setTimeout(r, 30)); // the CONNECT is in, its compare running
    assert.equal(s.reload(users('{ user: bob, password: b }', '  timeout: 10\n')), null);
    assert.ok(await c.waitClosed(15_000));
    assert.equal(c.take(), VIOLATION);
  });

  it('a token changed: token clients get Authorization Violation, the new token works', async () => {
    const s = await startConf('authorization { token: t1 }\n');
    const c = await connected(s.port, { auth_token: 't1' });
    s.log.lines.length = 0;
    assert.equal(s.reload('authorization { token: t2 }\n'), null);
    assert.ok(await c.waitClosed());
    assert.equal(c.take(), VIOLATION);
    assert.ok(s.log.lines.includes('[INF] Reloaded: authorization token'));
    // No users: the reference's line has no user part.
    assert.equal(s.log.grep('authentication error').length, 1);
    assert.match(s.log.grep('authentication error')[0]!, / - authentication error$/);
    assert.equal(await tryConnect(s.port, { auth_token: 't1' }), VIOLATION);
    const nc = await nats.connect({
      servers: `127.0.0.1:${s.port}`,
      token: 't2',
      reconnect: false,
    });
    await nc.flush();
    await nc.close();
  });

  it('a single user/password: unrelated reloads keep its clients, a new password closes them', async () => {
    const s = await startConf('authorization { user: a, password: b }\n');
    const c = await connected(s.port, { user: 'a', pass: 'b' });
    assert.equal(s.reload('authorization { user: a, password: b }\nmax_payload: 2000\n'), null);
    assert.equal(await c.exchange('PING\r\n', 'PONG\r\n'), 'PONG\r\n');
    assert.equal(s.reload('authorization { user: a, password: c }\n'), null);
    assert.ok(await c.waitClosed());
    assert.equal(c.take(), VIOLATION);
    assert.ok(s.log.lines.includes('[INF] Reloaded: authorization password'));
  });

  it('authorization added to an open server: clients without credentials are closed', async () => {
    const s = await startConf('max_payload: 1MB\n');
    const anon = await connected(s.port, {});
    const early = await connected(s.port, { user: 'alice', pass: 'a1' });
    assert.equal(s.reload(users('{ user: alice, password: a1 }')), null);
    assert.ok(await anon.waitClosed());
    assert.equal(anon.take(), VIOLATION);
    // Credentials sent before they were needed are checked all the same, as the reference.
    assert.equal(await early.exchange('PING\r\n'), 'PONG\r\n');
    const c = await open(s.port);
    assert.equal(c.infoJson().auth_required, true);
    c.close();
    early.close();
  });

  it('authorization removed: users are closed (Client Closed), anyone may connect', async () => {
    const s = await startConf(users('{ user: alice, password: a1 }'));
    const alice = await connected(s.port, { user: 'alice', pass: 'a1' });
    assert.equal(s.reload('max_payload: 1MB\n'), null);
    assert.ok(await alice.waitClosed());
    assert.equal(alice.take(), '');
    assert.equal(s.server.security, null);
    const c = await open(s.port);
    assert.equal(c.infoJson().auth_required, undefined);
    assert.equal(await c.exchange(connectLine({}) + 'PING\r\n'), 'PONG\r\n');
    c.close();
  });
});

/** The client port of a connection by cid, for the reference's log label. */
function portOf(s: Reloadable, cid: number): number {
  return s.server.closedClients.find((c) => c.cid === cid)?.port ?? 0;
}

describe('reload: permissions', () => {
  const narrowed = users(
    '{ user: alice, password: a1, permissions: { subscribe: { allow: ["bar"] }, publish: { allow: ["bar"] } } }',
  );

  it('subscriptions no longer allowed are removed with the reference bytes; publish gets the violation', async () => {
    const s = await startConf(users('{ user: alice, password: a1 }'));
    const alice = await connected(s.port, { user: 'alice', pass: 'a1' });
    assert.equal(
      await alice.exchange('SUB foo 1\r\nSUB bar 2\r\nSUB foo.* q 3\r\nPING\r\n'),
      'PONG\r\n',
    );
    assert.equal(s.server.subscriptionCount, 3);
    assert.equal(s.reload(narrowed), null);
    const expected =
      `-ERR 'Permissions Violation for Subscription to "foo" (sid "1")'\r\n` +
      `-ERR 'Permissions Violation for Subscription to "foo.*" (sid "3")'\r\n`;
    assert.ok(await alice.waitFor((t) => t === expected));
    assert.equal(alice.take(), expected);
    assert.equal(s.server.subscriptionCount, 1);
    assert.deepEqual(s.log.grep('Removed sub'), [
      '[INF] Removed sub "foo" (sid "1") for User "alice" - not authorized',
      '[INF] Removed sub "foo.*" (sid "3") for User "alice" - not authorized',
    ]);
    // The same bytes the reference answers after such a reload.
    assert.equal(
      await alice.exchange('PUB foo 1\r\nx\r\nPUB bar 1\r\ny\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Publish to "foo"'\r\nMSG bar 2 1\r\ny\r\nPONG\r\n`,
    );
    assert.equal(alice.closed, false);
    // Widened again: allowed anew.
    assert.equal(s.reload(users('{ user: alice, password: a1 }')), null);
    assert.equal(
      await alice.exchange('SUB foo 4\r\nPUB foo 1\r\nz\r\nPING\r\n'),
      'MSG foo 4 1\r\nz\r\nPONG\r\n',
    );
    alice.close();
  });

  it('a nats v2 client: its subscription stops receiving and ends with the permissions error', async () => {
    const s = await startConf(users('{ user: alice, password: a1 }\n{ user: pub, password: p }'));
    const nc = await nats.connect({
      servers: `127.0.0.1:${s.port}`,
      user: 'alice',
      pass: 'a1',
      reconnect: false,
    });
    const publisher = await nats.connect({
      servers: `127.0.0.1:${s.port}`,
      user: 'pub',
      pass: 'p',
      reconnect: false,
    });
    const got: string[] = [];
    const sub = nc.subscribe('foo');
    const done = (async () => {
      try {
        for await (const m of sub) got.push(nats.StringCodec().decode(m.data));
        return 'ended';
      } catch (err) {
        return (err as Error).message;
      }
    })();
    await nc.flush();
    publisher.publish('foo', nats.StringCodec().encode('before'));
    await publisher.flush();
    await waitUntil(() => got.length === 1, 2000, 'first message');
    assert.equal(s.reload(narrowed.replace('\n  ]', '\n{ user: pub, password: p }\n  ]')), null);
    const ended = await done;
    assert.match(ended, /permissions violation for subscription to "foo"/i);
    publisher.publish('foo', nats.StringCodec().encode('after'));
    await publisher.flush();
    await nc.flush();
    assert.deepEqual(got, ['before']);
    // A publish where it may no longer publish: the client hears of the violation.
    const errors = (async () => {
      for await (const st of nc.status()) {
        if (st.type === nats.Events.Error) return st;
      }
      return null;
    })();
    nc.publish('foo');
    await nc.flush().catch(() => undefined);
    const status = await errors;
    assert.equal(status?.data, nats.ErrorCode.PermissionsViolation);
    assert.deepEqual(status.permissionContext, {
      operation: 'publish',
      subject: 'foo',
      queue: undefined,
    });
    await nc.close().catch(() => undefined);
    await publisher.close();
  });

  it('default_permissions of an account apply to its users after the reload', async () => {
    const conf = (deny: string): string =>
      `accounts {\n  A: {\n    users: [ { user: u, password: p } ]\n    default_permissions: { subscribe: { deny: ${deny} } }\n  }\n}\n`;
    const s = await startConf(conf('["nope"]'));
    const c = await connected(s.port, { user: 'u', pass: 'p' });
    assert.equal(await c.exchange('SUB secret.x 7\r\nPING\r\n'), 'PONG\r\n');
    assert.equal(s.reload(conf('["secret.>"]')), null);
    const expected = `-ERR 'Permissions Violation for Subscription to "secret.x" (sid "7")'\r\n`;
    assert.ok(await c.waitFor((t) => t === expected));
    c.close();
  });
});

describe('reload: accounts', () => {
  it('a user moved to another account is closed without a word; the others stay', async () => {
    const conf = (a: string, b: string): string =>
      `accounts {\n  A: { users: [ { user: ${a}, password: p } ] }\n  B: { users: [ { user: ${b}, password: p } ] }\n}\n`;
    const s = await startConf(conf('u', 'v'));
    const u = await connected(s.port, { user: 'u', pass: 'p' });
    const v = await connected(s.port, { user: 'v', pass: 'p' });
    assert.equal(s.reload(conf('v', 'u')), null);
    assert.ok(await u.waitClosed());
    assert.ok(await v.waitClosed());
    assert.equal(u.take() + v.take(), '');
    assert.deepEqual(s.server.closedClients.map((c) => [c.user, c.account, c.reason]).sort(), [
      ['u', 'A', 'Client Closed'],
      ['v', 'B', 'Client Closed'],
    ]);
    // Reconnected, each lands in its new account.
    const u2 = await connected(s.port, { user: 'u', pass: 'p' });
    assert.equal(await u2.exchange('SUB x 1\r\nPING\r\n'), 'PONG\r\n');
    const v2 = await connected(s.port, { user: 'v', pass: 'p' });
    assert.equal(await v2.exchange('PUB x 1\r\nm\r\nPING\r\n'), 'PONG\r\n');
    assert.equal(await u2.exchange('PING\r\n'), 'PONG\r\n', 'u (B) does not see v (A)');
    u2.close();
    v2.close();
  });

  it('subscriptions of an account that stays keep receiving; a new stream import applies at once', async () => {
    const conf = (imports: string): string =>
      `accounts {\n  A: { users: [ { user: a, password: p } ], exports: [ { stream: "news.>" } ] }\n  B: { users: [ { user: b, password: p } ]${imports} }\n}\n`;
    const s = await startConf(conf(''));
    const a = await connected(s.port, { user: 'a', pass: 'p' });
    const b = await connected(s.port, { user: 'b', pass: 'p' });
    assert.equal(await b.exchange('SUB news.> 1\r\nSUB local 2\r\nPING\r\n'), 'PONG\r\n');
    assert.equal(await a.exchange('PUB news.x 1\r\n1\r\nPING\r\n'), 'PONG\r\n');
    assert.equal(await b.exchange('PING\r\n'), 'PONG\r\n', 'nothing imported yet');
    assert.equal(
      s.reload(conf(', imports: [ { stream: { account: A, subject: "news.>" } } ]')),
      null,
    );
    assert.equal(await a.exchange('PUB news.x 1\r\n2\r\nPING\r\n'), 'PONG\r\n');
    assert.equal(
      await b.exchange('PUB local 1\r\n3\r\nPING\r\n'),
      'MSG news.x 1 1\r\n2\r\nMSG local 2 1\r\n3\r\nPONG\r\n',
    );
    // Import removed again.
    assert.equal(s.reload(conf('')), null);
    assert.equal(await a.exchange('PUB news.x 1\r\n4\r\nPING\r\n'), 'PONG\r\n');
    assert.equal(await b.exchange('PING\r\n'), 'PONG\r\n');
    a.close();
    b.close();
  });
});

describe('reload: refused', () => {
  const good = users('{ user: alice, password: a1 }');

  it('a malformed security section is refused with file:line:col and the old config stays', async () => {
    const s = await startConf(good);
    const alice = await connected(s.port, { user: 'alice', pass: 'a1' });
    // Syntax and field errors: the config file itself does not load.
    let err = s.reload(
      'authorization {\n  users: [ { user: alice, password: a1 } ]\n  bogus: 1\n}\n',
    );
    assert.equal(err, `${s.file}:3:3: unknown field "bogus" in authorization`);
    err = s.reload('authorization {\n  token: t\n  users: [ { user: x, password: y } ]\n}\n');
    assert.match(
      err ?? '',
      new RegExp(`^${s.file}:\\d+:\\d+: Can not have a token and a users array$`),
    );
    // Problems only the security layer sees: named at their section.
    err = s.reload(
      `${good}accounts {\n  A: { imports: [ { stream: { account: B, subject: "x" } } ] }\n  B: {}\n}\n`,
    );
    assert.equal(
      err,
      `${s.file}:6:1: Error adding stream import "x": stream import not authorized`,
    );
    err = s.reload(
      `${good}tls {\n  cert_file: "${join(tempDir(), 'missing.pem')}"\n  key_file: "k.pem"\n}\n`,
    );
    assert.match(
      err ?? '',
      new RegExp(`^${s.file}:6:1: error loading certificate .*missing\\.pem`),
    );
    err = s.reload(users('{ user: alice, password: a1 }\n{ user: alice, password: a2 }'));
    assert.equal(err, `${s.file}:1:1: Duplicate user "alice" detected`);
    // Nothing changed: alice stays, the old password works, no "Reloaded" line.
    assert.equal(await alice.exchange('PING\r\n'), 'PONG\r\n');
    assert.equal(await tryConnect(s.port, { user: 'alice', pass: 'a1' }), 'PONG\r\n');
    assert.equal(s.log.grep('Reloaded').length, 0);
    // And a good file reloads after all that.
    assert.equal(
      s.reload(users('{ user: alice, password: a1 }\n{ user: bob, password: b }')),
      null,
    );
    assert.equal(await tryConnect(s.port, { user: 'bob', pass: 'b' }), 'PONG\r\n');
    alice.close();
  });

  it('no_auth_user cannot change, except to go along with its user, as the reference', async () => {
    const s = await startConf(
      `${users('{ user: x, password: y }\n{ user: z, password: y }')}no_auth_user: x\n`,
    );
    assert.equal(
      s.reload(`${users('{ user: x, password: y }\n{ user: z, password: y }')}no_auth_user: z\n`),
      'config reload not supported for NoAuthUser: old=x, new=z',
    );
    assert.equal(
      s.reload(users('{ user: x, password: y }\n{ user: z, password: y }')),
      'config reload not supported for NoAuthUser: old=x, new=',
    );
    const anon = await connected(s.port, {});
    assert.equal(s.reload(users('{ user: z, password: y }')), null);
    assert.ok(await anon.waitClosed());
    assert.equal(anon.take(), '', 'its user is gone: closed without a word');
  });
});

describe('reload: TLS certificates', () => {
  const one = makeCerts();
  const two = makeCerts();

  /** The SHA-256 fingerprint a new TLS connection sees, and its INFO. */
  async function fingerprint(port: number): Promise<string> {
    const raw = await open(port);
    const socket = (raw as unknown as { socket: Socket }).socket;
    const secure: TLSSocket = tlsConnect({ socket, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', resolve);
      secure.once('error', reject);
    });
    const f = secure.getPeerCertificate().fingerprint256;
    secure.destroy();
    return f;
  }

  const fp = (file: string): string => new X509Certificate(readFileSync(file)).fingerprint256;

  it('new files, or new contents in the same files: new connections see the new certificate, existing ones stay', async () => {
    const dir = tempDir();
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    copyFileSync(one.serverCert, cert);
    copyFileSync(one.serverKey, key);
    const conf = (c: string, k: string, extra = ''): string =>
      `tls {\n  cert_file: "${c}"\n  key_file: "${k}"\n${extra}}\n`;
    const s = await startConf(conf(cert, key));
    assert.equal(await fingerprint(s.port), fp(one.serverCert));
    // An existing session, with a real client.
    const nc = await nats.connect({
      servers: `127.0.0.1:${s.port}`,
      tls: { caFile: one.ca },
      reconnect: false,
    });
    const sub = nc.subscribe('t', { max: 1 });
    await nc.flush();

    s.log.lines.length = 0;
    copyFileSync(two.serverCert, cert);
    copyFileSync(two.serverKey, key);
    assert.equal(s.reload(conf(cert, key)), null);
    assert.deepEqual(s.log.lines, [
      '[INF] Reloaded: authorization users',
      '[INF] Reloaded: accounts',
      '[INF] Reloaded: tls = enabled',
      '[INF] Reloaded server configuration',
    ]);
    assert.equal(await fingerprint(s.port), fp(two.serverCert));
    // The session opened with the first certificate goes on.
    nc.publish('t', nats.StringCodec().encode('still here'));
    for await (const m of sub) assert.equal(nats.StringCodec().decode(m.data), 'still here');
    await nc.close();

    // Other paths, and the timeout.
    s.log.lines.length = 0;
    assert.equal(s.reload(conf(one.serverCert, one.serverKey, '  timeout: 3\n')), null);
    assert.ok(s.log.lines.includes('[INF] Reloaded: tls timeout = 3'));
    assert.equal(await fingerprint(s.port), fp(one.serverCert));
    // A key that does not match: refused, the running certificate stays.
    assert.match(
      s.reload(conf(two.serverCert, one.serverKey)) ?? '',
      new RegExp(`^${s.file}:1:1: error parsing X509 certificate/key pair`),
    );
    assert.equal(await fingerprint(s.port), fp(one.serverCert));
    // TLS off, then on again.
    assert.equal(s.reload('max_payload: 1MB\n'), null);
    assert.ok(s.log.lines.includes('[INF] Reloaded: tls = disabled'));
    const plain = await open(s.port);
    assert.equal(plain.infoJson().tls_required, undefined);
    plain.close();
    assert.equal(s.reload(conf(cert, key)), null);
    const secure = await open(s.port);
    assert.equal(secure.infoJson().tls_required, true);
    secure.close();
    assert.equal(await fingerprint(s.port), fp(two.serverCert));
  });
});

describe('reload: operator mode', () => {
  it('an account JWT that now revokes a user closes its connection; the operator cannot change', async () => {
    const operator = createOperator();
    const account = createAccount();
    const user = createUser();
    const opJwt = await encodeOperator('OP', operator);
    const conf = async (claims: Record<string, unknown>, op = opJwt): Promise<string> =>
      `operator: ${op}\nresolver: MEMORY\nresolver_preload: {\n  ${account.getPublicKey()}: ${await encodeAccount('A', account, claims, { signer: operator })}\n}\n`;
    const s = await startConf(await conf({}));
    const userJwt = await encodeUser('u', user, account);
    const c = await open(s.port);
    const sig = Buffer.from(
      user.sign(Buffer.from(c.infoJson().nonce as string, 'latin1')),
    ).toString('base64url');
    assert.equal(await c.exchange(connectLine({ jwt: userJwt, sig }) + 'PING\r\n'), 'PONG\r\n');
    // Unrelated claims: the user, checked again with its nonce signature, stays.
    assert.equal(s.reload(await conf({ tags: ['x'] })), null);
    assert.equal(await c.exchange('PING\r\n'), 'PONG\r\n');
    const revoked = { revocations: { [user.getPublicKey()]: Math.floor(Date.now() / 1000) + 60 } };
    assert.equal(s.reload(await conf(revoked)), null);
    assert.ok(await c.waitClosed());
    assert.equal(c.take(), VIOLATION);
    // The reference's line in operator mode names no user.
    assert.match(s.log.grep('authentication error')[0] ?? '', / - authentication error$/);
    const other = await encodeOperator('OP2', createOperator());
    assert.equal(
      s.reload(await conf({}, other)),
      'config reload not supported for TrustedOperators',
    );
  });
});

describe('reloadSecurity (embedded)', () => {
  it('replaces the SecurityOptions of a running server; refused options change nothing', async () => {
    const log = new MemoryLogger();
    const server = new Server({ host: '127.0.0.1', port: 0 }, log);
    attachSecurity(server, {
      users: [
        { user: 'a', password: 'p' },
        { user: 'b', password: 'p' },
      ],
    });
    await server.start();
    servers.push(server);
    const a = await connected(server.port, { user: 'a', pass: 'p' });
    const b = await connected(server.port, { user: 'b', pass: 'p' });
    assert.equal(await a.exchange('SUB x 1\r\nSUB y 2\r\nPING\r\n'), 'PONG\r\n');
    reloadSecurity(server, {
      users: [
        { user: 'a', password: 'p', permissions: { subscribe: { allow: ['y'] } } },
        { user: 'c', password: 'p' },
      ],
    });
    assert.ok(await b.waitClosed());
    const expected = `-ERR 'Permissions Violation for Subscription to "x" (sid "1")'\r\n`;
    assert.ok(await a.waitFor((t) => t === expected));
    a.take();
    assert.equal(await tryConnect(server.port, { user: 'c', pass: 'p' }), 'PONG\r\n');
    assert.throws(
      () => reloadSecurity(server, { users: [{ user: 'c', password: 'p', account: 'nowhere' }] }),
      (err: unknown) =>
        err instanceof ReloadError && err.message === 'account "nowhere" not defined',
    );
    assert.equal(await tryConnect(server.port, { user: 'c', pass: 'p' }), 'PONG\r\n');
    // A reload of other options leaves security as it is.
    server.applyReload({ maxPayload: 2048 });
    assert.equal(await a.exchange('PING\r\n'), 'PONG\r\n');
    reloadSecurity(server, null);
    assert.equal(server.security, null);
    assert.ok(await a.waitClosed(), 'a users-list user is gone with the list');
    assert.equal(await tryConnect(server.port, {}), 'PONG\r\n');
  });
});
