// bin/wirebus as operators run it: --user/--pass and --auth flags, config files
// with authorization and accounts (-t checks them), and no secret in the log even
// with debug and trace (-DV) on.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcrypt';
import { encodeAccount, encodeOperator, encodeUser } from '@nats-io/jwt';
import { createAccount, createOperator, createUser } from '@nats-io/nkeys';
import { freePort, startWirebus } from '../helpers/process.js';
import { clients, connectError } from './clients.js';
import { connectLine, exchangeUntilClose, open, tempDir, VIOLATION } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function conf(text: string): string {
  const file = join(tempDir(), 'wirebus.conf');
  writeFileSync(file, text);
  return file;
}

describe('bin/wirebus security flags and config', () => {
  it('--user and --pass', async () => {
    const port = await freePort();
    const server = await startWirebus(port, ['--user', 'ops', '--pass', 'p4ss']);
    try {
      for (const k of clients) {
        const nc = await k.connect(port, { user: 'ops', pass: 'p4ss' });
        await nc.flush();
        await nc.close();
        assert.match(
          await connectError(k.connect(port, { user: 'ops', pass: 'x' })),
          /authorization violation/i,
        );
      }
    } finally {
      await server.stop();
    }
  });

  it('--auth, and flags win over the config file', async () => {
    const port = await freePort();
    const file = conf('authorization { token: fromfile }');
    const server = await startWirebus(port, ['-c', file, '--auth', 'fromflag']);
    try {
      const c = await open(port);
      assert.equal(
        await c.exchange(connectLine({ auth_token: 'fromflag' }) + 'PING\r\n'),
        'PONG\r\n',
      );
      const d = await open(port);
      assert.equal(
        await exchangeUntilClose(d, connectLine({ auth_token: 'fromfile' }) + 'PING\r\n'),
        VIOLATION,
      );
    } finally {
      await server.stop();
    }
  });

  it('-t reports security config errors with file:line:col and accepts good files', () => {
    const bad = conf(
      'port: 4222\naccounts {\n  A: { imports: [ { stream: { account: B, subject: "x" } } ] }\n}\n',
    );
    const r = spawnSync(process.execPath, ['bin/wirebus', '-t', '-c', bad], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /"B" account not defined for stream import/);
    const typo = conf('authorization {\n  users: [ { user: a, pasword: b } ]\n}\n');
    const r2 = spawnSync(process.execPath, ['bin/wirebus', '-t', '-c', typo], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(r2.status, 2);
    assert.match(r2.stderr, /wirebus\.conf:2:\d+: unknown field "pasword"/);
    const good = conf('authorization { users: [ { user: a, password: b } ] }\n');
    const r3 = spawnSync(process.execPath, ['bin/wirebus', '-t', '-c', good], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(r3.status, 0, r3.stderr);
  });

  it('no password, token, JWT or signature appears in the log with -DV', async () => {
    const plain = 'Pl41nSecretPassw0rd';
    const hashed = 'Bcr7ptSecretPassw0rd';
    const token = 'T0kenSecretValue99';
    const hash = bcrypt.hashSync(hashed, 4);
    const nkeyUser = createUser();
    const secrets = [plain, hashed, token];

    // Users, bcrypt and an nkey user.
    const port = await freePort();
    const file = conf(`authorization { users: [
      { user: alice, password: ${plain} }
      { user: bob, password: "${hash}" }
      { nkey: ${nkeyUser.getPublicKey()} }
    ] }`);
    const server = await startWirebus(port, ['-c', file, '-DV']);
    try {
      for (const k of clients) {
        (await k.connect(port, { user: 'alice', pass: plain })).close().catch(() => undefined);
        (await k.connect(port, { user: 'bob', pass: hashed })).close().catch(() => undefined);
        await connectError(k.connect(port, { user: 'alice', pass: hashed }));
        await connectError(k.connect(port, { user: 'bob', pass: plain }));
        await connectError(k.connect(port, { token }));
      }
      const c = await open(port);
      const sig = Buffer.from(nkeyUser.sign(Buffer.from(c.infoJson().nonce as string))).toString(
        'base64url',
      );
      secrets.push(sig);
      await c.exchange(connectLine({ nkey: nkeyUser.getPublicKey(), sig }) + 'PING\r\n');
      // Odd spellings of the same fields, and a CONNECT that does not parse.
      const d = await open(port);
      await exchangeUntilClose(d, `CONNECT {"user":"alice","p\\u0061ss":"${plain}"}\r\nPING\r\n`);
      const e = await open(port);
      await exchangeUntilClose(e, `CONNECT {"user":"alice","pass":"${plain}"\r\nPING\r\n`);
    } finally {
      await server.stop();
    }
    const log1 = server.log();
    assert.match(log1, /\[TRC\].*CONNECT/, 'the trace is on');

    // Operator mode: JWTs and signatures.
    const op = createOperator();
    const acc = createAccount();
    const u = createUser();
    const jwt = await encodeUser('u', u, acc);
    const port2 = await freePort();
    const file2 = conf(`operator: ${await encodeOperator('O', op)}
resolver: MEMORY
resolver_preload: { ${acc.getPublicKey()}: ${await encodeAccount('A', acc, {}, { signer: op })} }`);
    const server2 = await startWirebus(port2, ['-c', file2, '-DV']);
    try {
      const c = await open(port2);
      const sig = Buffer.from(u.sign(Buffer.from(c.infoJson().nonce as string))).toString(
        'base64url',
      );
      secrets.push(sig);
      assert.equal(await c.exchange(connectLine({ jwt, sig }) + 'PING\r\n'), 'PONG\r\n');
      const bad = await open(port2);
      await exchangeUntilClose(bad, connectLine({ jwt, sig: sig.slice(2) + 'AA' }) + 'PING\r\n');
    } finally {
      await server2.stop();
    }
    const log2 = server2.log();
    assert.match(log2, /\[TRC\].*CONNECT/);
    // The JWT's signature part is what makes it a credential.
    secrets.push(jwt.split('.')[2]!);
    for (const secret of secrets) {
      assert.ok(
        !log1.includes(secret) && !log2.includes(secret),
        `a secret leaked into the log: ${secret.slice(0, 4)}…`,
      );
    }
  });
});
