// Token and user/password authentication: the exact bytes over a raw socket, real
// clients, bcrypt (off the event loop, cached), no_auth_user and the auth timeout.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import bcrypt from 'bcrypt';
import { clients, connectError } from './clients.js';
import {
  C0,
  connectLine,
  exchangeUntilClose,
  open,
  sleep,
  startSecure,
  startWithConfig,
  VIOLATION,
} from './helpers.js';

const HASH_A = bcrypt.hashSync('s3cret', 4); // $2b$
const HASH_2A = HASH_A.replace(/^\$2b\$/, '$2a$');

describe('token', () => {
  it('row 74: a wrong token gets Authorization Violation and a close', async () => {
    const { port } = await startSecure({ token: 's3cret' });
    const c = await open(port);
    assert.equal(c.infoJson().auth_required, true);
    assert.equal(
      await exchangeUntilClose(c, connectLine({ auth_token: 'nope' }) + 'PING\r\n'),
      VIOLATION,
    );
    assert.ok(c.closed);
  });

  it('the right token is accepted; a missing one is not', async () => {
    const { port } = await startSecure({ token: 's3cret' });
    const ok = await open(port);
    assert.equal(await ok.exchange(connectLine({ auth_token: 's3cret' }) + 'PING\r\n'), 'PONG\r\n');
    ok.close();
    const none = await open(port);
    assert.equal(await exchangeUntilClose(none, C0 + 'PING\r\n'), VIOLATION);
  });

  it('row 75: nothing but CONNECT before authentication', async () => {
    const { port } = await startSecure({ token: 't' });
    for (const op of ['PING\r\n', 'SUB foo 1\r\n', 'PUB foo 1\r\na\r\n', 'UNSUB 1\r\n']) {
      const c = await open(port);
      assert.equal(await exchangeUntilClose(c, op), VIOLATION, op);
    }
  });

  it('a bcrypt token is checked with bcrypt; the hash itself is refused', async () => {
    const { port } = await startWithConfig(`authorization { token: "${HASH_A}" }`);
    const ok = await open(port);
    assert.equal(await ok.exchange(connectLine({ auth_token: 's3cret' }) + 'PING\r\n'), 'PONG\r\n');
    ok.close();
    const hash = await open(port);
    assert.equal(
      await exchangeUntilClose(hash, connectLine({ auth_token: HASH_A }) + 'PING\r\n'),
      VIOLATION,
    );
  });

  for (const k of clients) {
    it(`${k.name}: token success and failure`, async () => {
      const { port } = await startWithConfig('authorization { token: s3cret }');
      const nc = await k.connect(port, { token: 's3cret' });
      await nc.flush();
      await nc.close();
      assert.match(
        await connectError(k.connect(port, { token: 'wrong' })),
        /authorization violation/i,
      );
      assert.match(await connectError(k.connect(port)), /authorization violation/i);
    });
  }
});

describe('user and password', () => {
  it('authorization { user, password } and the users list, plain and bcrypt ($2a$, $2b$)', async () => {
    const single = await startWithConfig('authorization { user: alice, password: pw1 }');
    const list = await startWithConfig(`authorization {
      users: [
        { user: bob, password: plain }
        { user: carol, password: "${HASH_A}" }
        { user: dave, password: "${HASH_2A}" }
      ]
    }`);
    const cases: [number, string, string, boolean][] = [
      [single.port, 'alice', 'pw1', true],
      [single.port, 'alice', 'pw2', false],
      [single.port, 'mallory', 'pw1', false],
      [list.port, 'bob', 'plain', true],
      [list.port, 'bob', 'Plain', false],
      [list.port, 'carol', 's3cret', true],
      [list.port, 'carol', HASH_A, false],
      [list.port, 'dave', 's3cret', true],
      [list.port, 'dave', 'x', false],
      [list.port, 'nobody', 'plain', false],
      [list.port, '', '', false],
    ];
    for (const [port, user, pass, ok] of cases) {
      const c = await open(port);
      const reply = await exchangeUntilClose(
        c,
        connectLine({ user, pass }) + 'PING\r\n',
        ok ? 300 : 1500,
      );
      assert.equal(reply, ok ? 'PONG\r\n' : VIOLATION, `${user}/${pass}`);
      c.close();
    }
  });

  it('verbose: +OK for the CONNECT after a bcrypt check, and the ops behind it wait for it in order', async () => {
    const { port } = await startSecure({ users: [{ user: 'u', password: HASH_A }] });
    const c = await open(port);
    const reply = await c.exchange(
      'CONNECT {"verbose":true,"pedantic":false,"user":"u","pass":"s3cret"}\r\nSUB foo 1\r\nPUB foo 2\r\nhi\r\nPING\r\n',
    );
    assert.equal(reply, '+OK\r\n+OK\r\n+OK\r\nMSG foo 1 2\r\nhi\r\nPONG\r\n');
  });

  it('a bcrypt check does not stall other connections, and verdicts are cached', async () => {
    const slow = bcrypt.hashSync('slowpw', 12); // about a quarter of a second of CPU
    // A long auth timeout: on a loaded machine cost 12 may take over the default second.
    const { port, security } = await startSecure(
      {
        users: [
          { user: 'slow', password: slow },
          { user: 'fast', password: 'fast' },
        ],
      },
      { authTimeout: 10 },
    );
    const other = await open(port);
    assert.equal(
      await other.exchange(connectLine({ user: 'fast', pass: 'fast' }) + 'PING\r\n'),
      'PONG\r\n',
    );
    const c = await open(port);
    const started = Date.now();
    c.send(connectLine({ user: 'slow', pass: 'slowpw' }) + 'PING\r\n');
    // While bcrypt runs in the thread pool, the other client's PINGs are answered.
    const pings: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = Date.now();
      assert.equal(await other.exchange('PING\r\n'), 'PONG\r\n');
      pings.push(Date.now() - t);
    }
    assert.ok(await c.waitFor((t) => t === 'PONG\r\n', 15_000));
    const total = Date.now() - started;
    assert.ok(Math.max(...pings) < total, `pings ${pings.join(',')} vs bcrypt ${total} ms`);
    const before = security.bcrypt.compares;
    const again = await open(port);
    assert.equal(
      await again.exchange(connectLine({ user: 'slow', pass: 'slowpw' }) + 'PING\r\n'),
      'PONG\r\n',
    );
    assert.equal(security.bcrypt.compares, before, 'the second check came from the cache');
  });

  for (const k of clients) {
    it(`${k.name}: user/password success and failure, bcrypt too`, async () => {
      const { port } = await startWithConfig(`authorization {
        users: [ { user: a, password: a1 }, { user: b, password: "${HASH_A}" } ]
      }`);
      for (const [user, pass] of [
        ['a', 'a1'],
        ['b', 's3cret'],
      ] as const) {
        const nc = await k.connect(port, { user, pass });
        await nc.flush();
        await nc.close();
      }
      assert.match(
        await connectError(k.connect(port, { user: 'a', pass: 'no' })),
        /authorization violation/i,
      );
      assert.match(
        await connectError(k.connect(port, { user: 'b', pass: HASH_A })),
        /authorization violation/i,
      );
      assert.match(await connectError(k.connect(port)), /authorization violation/i);
    });
  }
});

describe('no_auth_user', () => {
  it('binds clients without credentials, even before CONNECT; wrong credentials still fail', async () => {
    const { port } = await startWithConfig(`
      accounts { A: { users: [ { user: anon, password: x, permissions: { publish: "ok.>" } } ] } }
      authorization { users: [ { user: admin, password: admin } ] }
      no_auth_user: anon
    `);
    const c = await open(port);
    assert.equal(c.infoJson().auth_required, undefined, 'INFO drops auth_required');
    // No CONNECT at all: verbose by default, and the no-auth user's permissions apply.
    assert.equal(
      await c.exchange('SUB ok.x 1\r\nPUB no 1\r\na\r\nPUB ok.x 1\r\nb\r\nPING\r\n'),
      `+OK\r\n-ERR 'Permissions Violation for Publish to "no"'\r\n+OK\r\nMSG ok.x 1 1\r\nb\r\nPONG\r\n`,
    );
    const empty = await open(port);
    assert.equal(
      await empty.exchange(C0 + 'SUB ok.y 1\r\nPUB ok.y 1\r\nc\r\nPING\r\n'),
      'MSG ok.y 1 1\r\nc\r\nPONG\r\n',
    );
    const wrong = await open(port);
    assert.equal(
      await exchangeUntilClose(wrong, connectLine({ user: 'admin', pass: 'bad' }) + 'PING\r\n'),
      VIOLATION,
    );
    const admin = await open(port);
    assert.equal(
      await admin.exchange(connectLine({ user: 'admin', pass: 'admin' }) + 'PING\r\n'),
      'PONG\r\n',
    );
  });

  it('must name a configured user', async () => {
    await assert.rejects(
      startWithConfig('authorization { users: [ { user: a, password: b } ] }\nno_auth_user: ghost'),
      /no_auth_user: "ghost" not present as user/,
    );
  });
});

describe('authorization timeout', () => {
  it('description: Authorization Timeout after the default 1 s', async () => {
    const { port } = await startSecure({ token: 't' });
    const c = await open(port);
    const t = Date.now();
    assert.ok(await c.waitClosed(3000));
    const waited = Date.now() - t;
    assert.equal(c.take(), "-ERR 'Authorization Timeout'\r\n");
    assert.ok(waited >= 900 && waited < 2500, `closed after ${waited} ms`);
  });

  it('authorization { timeout } sets it, in seconds', async () => {
    const { port } = await startWithConfig('authorization { token: t, timeout: 0.3 }');
    const c = await open(port);
    const t = Date.now();
    assert.ok(await c.waitClosed(2000));
    assert.equal(c.take(), "-ERR 'Authorization Timeout'\r\n");
    assert.ok(Date.now() - t < 900);
  });

  it('a client that authenticated in time is not cut off', async () => {
    const { port } = await startWithConfig('authorization { token: t, timeout: 0.3 }');
    const c = await open(port);
    assert.equal(await c.exchange(connectLine({ auth_token: 't' }) + 'PING\r\n'), 'PONG\r\n');
    await sleep(500);
    assert.equal(await c.exchange('PING\r\n'), 'PONG\r\n');
  });
});

describe('embedding API', () => {
  it('startServer({ security }) configures authentication and permissions', async () => {
    const { startServer } = await import('../../src/index.js');
    const running = await startServer({
      host: '127.0.0.1',
      port: 0,
      security: {
        users: [{ user: 'app', password: 'pw', permissions: { publish: { allow: ['app.>'] } } }],
      },
    });
    try {
      const c = await open(running.port);
      assert.equal(c.infoJson().auth_required, true);
      assert.equal(
        await c.exchange(connectLine({ user: 'app', pass: 'pw' }) + 'PUB x 1\r\na\r\nPING\r\n'),
        `-ERR 'Permissions Violation for Publish to "x"'\r\nPONG\r\n`,
      );
      const bad = await open(running.port);
      assert.equal(
        await exchangeUntilClose(bad, connectLine({ user: 'app', pass: 'no' }) + 'PING\r\n'),
        VIOLATION,
      );
    } finally {
      await running.close();
    }
  });
});
