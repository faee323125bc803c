// bin/wirebus with its config file rewritten between SIGHUPs (and `--signal
// reload=<pid>`): users added and removed, a password and a token changed,
// permissions narrowed, a certificate replaced, a malformed security section
// refused with file:line:col while the running settings stay. The bytes and log
// lines are those nats-server 2.9.10 gives for the same steps.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import * as nats from 'nats';
import { freePort } from '../helpers/process.js';
import { ensureStopped, runWirebus, waitUntil, type Child } from '../ops/helpers.js';
import { connectError } from './clients.js';
import { connectLine, makeCerts, open, type RawClient, tempDir, VIOLATION } from './helpers.js';

interface Running {
  readonly w: Child;
  readonly port: number;
  readonly file: string;
  /** Rewrites the config file, sends SIGHUP and waits for the outcome's log line. */
  reload(text: string, outcome?: string): Promise<void>;
}

async function run(text: (port: number) => string): Promise<Running> {
  const port = await freePort();
  const file = join(tempDir(), 'wirebus.conf');
  writeFileSync(file, text(port));
  const w = runWirebus(['-c', file]);
  await waitUntil(() => w.stderr().includes('Server is ready'), 10_000, 'ready');
  let reloads = 0;
  return {
    w,
    port,
    file,
    async reload(next: string, outcome = 'Reloaded server configuration'): Promise<void> {
      writeFileSync(file, next);
      const before = w.stderr().split(outcome).length;
      reloads++;
      process.kill(w.child.pid!, 'SIGHUP');
      await waitUntil(
        () => w.stderr().split(outcome).length > before,
        3000,
        `reload ${reloads}: ${outcome}`,
      );
    },
  };
}

async function connected(port: number, fields: Record<string, unknown>): Promise<RawClient> {
  const c = await open(port);
  assert.equal(await c.exchange(connectLine(fields) + 'PING\r\n'), 'PONG\r\n');
  return c;
}

function v2(port: number, auth: Partial<nats.ConnectionOptions>): Promise<nats.NatsConnection> {
  return nats.connect({ servers: `127.0.0.1:${port}`, reconnect: false, timeout: 3000, ...auth });
}

describe('bin/wirebus: SIGHUP reloads security', () => {
  it('users added, removed and narrowed, a password changed, a malformed section refused', async () => {
    const conf = (port: number, users: string): string =>
      `listen: 127.0.0.1:${port}\nauthorization {\n  users: [\n${users}\n  ]\n}\n`;
    const alice = '    { user: alice, password: a1 }';
    const bob = '    { user: bob, password: b1 }';
    const carol = '    { user: carol, password: c1 }';
    const narrowAlice =
      '    { user: alice, password: a1, permissions: { subscribe: ["bar"], publish: ["bar"] } }';
    const s = await run((port) => conf(port, `${alice}\n${bob}`));
    try {
      const a = await connected(s.port, { user: 'alice', pass: 'a1' });
      assert.equal(await a.exchange('SUB foo 1\r\nSUB bar 2\r\nPING\r\n'), 'PONG\r\n');
      const b = await connected(s.port, { user: 'bob', pass: 'b1' });
      assert.match(
        await connectError(v2(s.port, { user: 'carol', pass: 'c1' })),
        /authorization violation/i,
      );

      await s.reload(conf(s.port, `${narrowAlice}\n${carol}`));
      assert.ok(await b.waitClosed(), 'bob, removed, is closed');
      assert.equal(b.take(), '');
      const removed = `-ERR 'Permissions Violation for Subscription to "foo" (sid "1")'\r\n`;
      assert.ok(await a.waitFor((t) => t === removed));
      a.take();
      assert.equal(
        await a.exchange('PUB foo 1\r\nx\r\nPUB bar 1\r\ny\r\nPING\r\n'),
        `-ERR 'Permissions Violation for Publish to "foo"'\r\nMSG bar 2 1\r\ny\r\nPONG\r\n`,
      );
      const nc = await v2(s.port, { user: 'carol', pass: 'c1' });
      await nc.flush();
      assert.match(
        await connectError(v2(s.port, { user: 'bob', pass: 'b1' })),
        /authorization violation/i,
      );
      assert.match(
        s.w.stderr(),
        /\[INF\] Reloaded: authorization users\n.*\[INF\] Reloaded: accounts\n.*\[INF\] Removed sub "foo" \(sid "1"\) for User "alice" - not authorized\n.*\[INF\] Reloaded server configuration\n/,
      );

      // A malformed section: refused with file:line:col, nothing changes.
      await s.reload(
        `listen: 127.0.0.1:${s.port}\nauthorization {\n  users: [ { user: alice, password: a2 } ]\n  bogus: 1\n}\n`,
        'Failed to reload server configuration',
      );
      assert.ok(
        s.w
          .stderr()
          .includes(
            `[ERR] Failed to reload server configuration: ${s.file}:4:3: unknown field "bogus" in authorization\n`,
          ),
      );
      assert.equal(await a.exchange('PING\r\n'), 'PONG\r\n', 'alice keeps her password');
      await nc.flush();

      // The password changed, by `--signal reload=<pid>`.
      writeFileSync(s.file, conf(s.port, `    { user: alice, password: a2 }\n${carol}`));
      const sl = runWirebus(['--signal', `reload=${String(s.w.child.pid)}`]);
      assert.equal(await sl.exited, 0);
      assert.ok(await a.waitClosed());
      assert.equal(a.take(), VIOLATION);
      assert.match(
        s.w.stderr(),
        /\[ERR\] 127\.0\.0\.1:\d+ - cid:\d+ - authentication error - User "alice"\n/,
      );
      await nc.flush();
      await nc.close();
    } finally {
      await ensureStopped(s.w);
    }
  });

  it('a token changed', async () => {
    const s = await run((port) => `listen: 127.0.0.1:${port}\nauthorization { token: t1 }\n`);
    try {
      const nc = await v2(s.port, { token: 't1' });
      const closed = nc.closed();
      await s.reload(`listen: 127.0.0.1:${s.port}\nauthorization { token: t2 }\n`);
      const err = await closed;
      assert.match(String(err), /authorization violation/i);
      assert.match(s.w.stderr(), /\[INF\] Reloaded: authorization token\n/);
      const nc2 = await v2(s.port, { token: 't2' });
      await nc2.flush();
      await nc2.close();
    } finally {
      await ensureStopped(s.w);
    }
  });

  it('a certificate replaced in place: a new connection sees its fingerprint', async () => {
    const one = makeCerts();
    const two = makeCerts();
    const dir = tempDir();
    const cert = join(dir, 'server.pem');
    const key = join(dir, 'server-key.pem');
    copyFileSync(one.serverCert, cert);
    copyFileSync(one.serverKey, key);
    const text = (port: number): string =>
      `listen: 127.0.0.1:${port}\ntls {\n  cert_file: "${cert}"\n  key_file: "${key}"\n}\n`;
    const s = await run(text);
    const seen = async (): Promise<string> => {
      const raw = await open(s.port);
      const secure = tlsConnect({
        socket: (raw as unknown as { socket: Socket }).socket,
        rejectUnauthorized: false,
      });
      await new Promise<void>((resolve, reject) => {
        secure.once('secureConnect', resolve);
        secure.once('error', reject);
      });
      const f = secure.getPeerCertificate().fingerprint256;
      secure.destroy();
      return f;
    };
    const fp = (file: string): string => new X509Certificate(readFileSync(file)).fingerprint256;
    try {
      assert.equal(await seen(), fp(one.serverCert));
      const nc = await v2(s.port, { tls: { caFile: one.ca } });
      await nc.flush();
      copyFileSync(two.serverCert, cert);
      copyFileSync(two.serverKey, key);
      await s.reload(text(s.port));
      assert.match(s.w.stderr(), /\[INF\] Reloaded: tls = enabled\n/);
      assert.equal(await seen(), fp(two.serverCert));
      assert.notEqual(fp(one.serverCert), fp(two.serverCert));
      // The session made with the first certificate goes on.
      await nc.flush();
      assert.equal(nc.isClosed(), false);
      await nc.close();
      // A real client that trusts only the new CA connects.
      const nc2 = await v2(s.port, { tls: { caFile: two.ca } });
      await nc2.flush();
      await nc2.close();
    } finally {
      await ensureStopped(s.w);
    }
  });
});
