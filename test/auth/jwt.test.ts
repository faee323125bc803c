// Decentralized auth: an operator JWT, account JWTs from the memory resolver
// (resolver_preload), user JWTs in CONNECT with the nonce signed by the user's
// seed. Credentials are minted here with @nats-io/jwt and @nats-io/nkeys.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeAccount, encodeOperator, encodeUser, type Account, type User } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, type KeyPair } from '@nats-io/nkeys';
import { clients, connectError } from './clients.js';
import {
  connectLine,
  exchangeUntilClose,
  open,
  startWithConfig,
  VIOLATION,
  type RawClient,
} from './helpers.js';

const dec = new TextDecoder();
const now = (): number => Math.floor(Date.now() / 1000);

function sign(kp: KeyPair, c: RawClient): string {
  return Buffer.from(kp.sign(Buffer.from(c.infoJson().nonce as string, 'latin1'))).toString(
    'base64url',
  );
}

interface World {
  conf: string;
  operator: KeyPair;
  accountA: KeyPair;
  accountB: KeyPair;
  signer: KeyPair;
  user: KeyPair;
  userJwt: string;
}

async function world(
  extraA: Partial<Account> = {},
  extraB: (a: KeyPair) => Partial<Account> = () => ({}),
): Promise<World> {
  const operator = createOperator();
  const accountA = createAccount();
  const accountB = createAccount();
  const signer = createAccount();
  const user = createUser();
  const operatorJwt = await encodeOperator('OP', operator);
  const aJwt = await encodeAccount(
    'A',
    accountA,
    { signing_keys: [signer.getPublicKey()], ...extraA },
    { signer: operator },
  );
  const bJwt = await encodeAccount('B', accountB, extraB(accountA), { signer: operator });
  const userJwt = await encodeUser('u', user, accountA, { pub: { allow: ['a.>', '_INBOX.>'] } });
  const conf = `
operator: ${operatorJwt}
resolver: MEMORY
resolver_preload: {
  ${accountA.getPublicKey()}: ${aJwt}
  ${accountB.getPublicKey()}: ${bJwt}
}
`;
  return { conf, operator, accountA, accountB, signer, user, userJwt };
}

async function userOf(
  issuer: KeyPair,
  claims: Partial<User> = {},
  opts: { exp?: number } = {},
  account?: KeyPair,
) {
  const kp = createUser();
  const jwt = await encodeUser(
    'x',
    kp,
    issuer,
    { ...(account !== undefined ? { issuer_account: account.getPublicKey() } : {}), ...claims },
    opts.exp !== undefined ? { exp: opts.exp } : {},
  );
  return { kp, jwt };
}

describe('JWT (operator mode)', () => {
  it('INFO asks for auth with a nonce; a signed user JWT is accepted and its permissions apply', async () => {
    const w = await world();
    const { port } = await startWithConfig(w.conf);
    const c = await open(port);
    const info = c.infoJson();
    assert.equal(info.auth_required, true);
    assert.match(info.nonce as string, /^[A-Za-z0-9_-]{15}$/);
    assert.equal(
      await c.exchange(
        connectLine({ jwt: w.userJwt, sig: sign(w.user, c) }) + 'PUB b 1\r\nx\r\nPING\r\n',
      ),
      `-ERR 'Permissions Violation for Publish to "b"'\r\nPONG\r\n`,
    );
  });

  it('refused: no JWT, a bad signature, a tampered JWT, garbage, another seed, a plain password', async () => {
    const w = await world();
    const { port } = await startWithConfig(w.conf);
    const [h, p, s] = w.userJwt.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { nats: { pub: unknown } };
    claims.nats.pub = { allow: ['>'] };
    const tampered = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    const cases: ((c: RawClient) => Record<string, unknown>)[] = [
      () => ({}),
      () => ({ user: 'a', pass: 'b' }),
      (c) => ({ sig: sign(w.user, c) }),
      () => ({ jwt: w.userJwt }),
      () => ({ jwt: w.userJwt, sig: 'AAAA' }),
      (c) => ({ jwt: w.userJwt, sig: sign(createUser(), c) }),
      (c) => ({ jwt: tampered, sig: sign(w.user, c) }),
      (c) => ({ jwt: 'not.a.jwt', sig: sign(w.user, c) }),
      (c) => ({ jwt: 'eyJ0eXAiOiJKV1QifQ.e30.AAAA', sig: sign(w.user, c) }),
      (c) => ({ jwt: `${h}.${p}`, sig: sign(w.user, c) }),
      (c) => ({ jwt: `${h}.!!!.${s}`, sig: sign(w.user, c) }),
    ];
    for (const fields of cases) {
      const c = await open(port);
      const f = fields(c);
      assert.equal(
        await exchangeUntilClose(c, connectLine(f) + 'PING\r\n'),
        VIOLATION,
        JSON.stringify(Object.keys(f)),
      );
    }
  });

  it('an expired user JWT is refused; one that expires while connected closes with User Authentication Expired', async () => {
    const w = await world();
    const { port } = await startWithConfig(w.conf);
    const old = await userOf(w.accountA, {}, { exp: now() - 5 });
    const c1 = await open(port);
    assert.equal(
      await exchangeUntilClose(
        c1,
        connectLine({ jwt: old.jwt, sig: sign(old.kp, c1) }) + 'PING\r\n',
      ),
      VIOLATION,
    );
    // Whole seconds, expired once exp <= now: +2 leaves at least one second to connect.
    const soon = await userOf(w.accountA, {}, { exp: now() + 2 });
    const c2 = await open(port);
    assert.equal(
      await c2.exchange(connectLine({ jwt: soon.jwt, sig: sign(soon.kp, c2) }) + 'PING\r\n'),
      'PONG\r\n',
    );
    assert.ok(await c2.waitClosed(4000));
    assert.equal(c2.take(), "-ERR 'User Authentication Expired'\r\n");
  });

  it('signing keys, issuer_account, revocations, untrusted accounts, bearer tokens', async () => {
    const revokedUser = createUser();
    const w = await world({ revocations: { [revokedUser.getPublicKey()]: now() + 60 } });
    const { port } = await startWithConfig(w.conf);
    // Signed by the account's signing key, naming the account.
    const signed = await userOf(w.signer, {}, {}, w.accountA);
    const c = await open(port);
    assert.equal(
      await c.exchange(connectLine({ jwt: signed.jwt, sig: sign(signed.kp, c) }) + 'PING\r\n'),
      'PONG\r\n',
    );
    // Signed by a key the account does not list.
    const stranger = await userOf(createAccount(), {}, {}, w.accountA);
    const c2 = await open(port);
    assert.equal(
      await exchangeUntilClose(
        c2,
        connectLine({ jwt: stranger.jwt, sig: sign(stranger.kp, c2) }) + 'PING\r\n',
      ),
      VIOLATION,
    );
    // An account the resolver does not know.
    const unknown = await userOf(createAccount());
    const c3 = await open(port);
    assert.equal(
      await exchangeUntilClose(
        c3,
        connectLine({ jwt: unknown.jwt, sig: sign(unknown.kp, c3) }) + 'PING\r\n',
      ),
      VIOLATION,
    );
    // Revoked.
    const revokedJwt = await encodeUser('r', revokedUser, w.accountA);
    const c4 = await open(port);
    assert.equal(
      await exchangeUntilClose(
        c4,
        connectLine({ jwt: revokedJwt, sig: sign(revokedUser, c4) }) + 'PING\r\n',
      ),
      VIOLATION,
    );
    // A bearer token needs no signature.
    const bearer = await userOf(w.accountA, { bearer_token: true });
    const c5 = await open(port);
    assert.equal(await c5.exchange(connectLine({ jwt: bearer.jwt }) + 'PING\r\n'), 'PONG\r\n');
  });

  it('an account JWT that expires closes its users with Account Authentication Expired', async () => {
    const op = createOperator();
    const acc = createAccount();
    const u = createUser();
    const conf = `operator: ${await encodeOperator('O', op)}
resolver: MEMORY
resolver_preload: { ${acc.getPublicKey()}: ${await encodeAccount('A', acc, {}, { signer: op, exp: now() + 2 })} }`;
    const { port } = await startWithConfig(conf);
    const jwt = await encodeUser('u', u, acc);
    const c = await open(port);
    assert.equal(await c.exchange(connectLine({ jwt, sig: sign(u, c) }) + 'PING\r\n'), 'PONG\r\n');
    assert.ok(await c.waitClosed(4000));
    assert.equal(c.take(), "-ERR 'Account Authentication Expired'\r\n");
  });

  it('src limits where a user may connect from; a scoped signing key imposes its template', async () => {
    const w = await world();
    const scoped = createAccount();
    const aJwt = await encodeAccount(
      'A',
      w.accountA,
      {
        signing_keys: [
          {
            kind: 'user_scope',
            key: scoped.getPublicKey(),
            role: 'r',
            template: { pub: { allow: ['only.this'] } },
          },
        ],
      },
      { signer: w.operator },
    );
    const lines = w.conf.split('\n');
    const aLine = lines.findIndex((l) => l.trim().startsWith(w.accountA.getPublicKey()));
    lines[aLine] = `  ${w.accountA.getPublicKey()}: ${aJwt}`;
    const { port } = await startWithConfig(lines.join('\n'));
    const far = await userOf(w.accountA, { src: ['10.0.0.0/8'] });
    const c1 = await open(port);
    assert.equal(
      await exchangeUntilClose(
        c1,
        connectLine({ jwt: far.jwt, sig: sign(far.kp, c1) }) + 'PING\r\n',
      ),
      VIOLATION,
    );
    const near = await userOf(w.accountA, { src: ['127.0.0.0/8'] });
    const c2 = await open(port);
    assert.equal(
      await c2.exchange(connectLine({ jwt: near.jwt, sig: sign(near.kp, c2) }) + 'PING\r\n'),
      'PONG\r\n',
    );
    const templated = await userOf(scoped, { pub: { allow: ['>'] } }, {}, w.accountA);
    const c3 = await open(port);
    assert.equal(
      await c3.exchange(
        connectLine({ jwt: templated.jwt, sig: sign(templated.kp, c3) }) +
          'PUB other 1\r\nx\r\nPUB only.this 1\r\ny\r\nPING\r\n',
      ),
      `-ERR 'Permissions Violation for Publish to "other"'\r\nPONG\r\n`,
    );
  });

  it('an account JWT signed by another operator is not trusted', async () => {
    const w = await world();
    const rogueOp = createOperator();
    const rogue = createAccount();
    const rogueJwt = await encodeAccount('R', rogue, {}, { signer: rogueOp });
    const conf = w.conf.replace(
      'resolver_preload: {',
      `resolver_preload: {\n  ${rogue.getPublicKey()}: ${rogueJwt}`,
    );
    const { port } = await startWithConfig(conf);
    const u = await userOf(rogue);
    const c = await open(port);
    assert.equal(
      await exchangeUntilClose(c, connectLine({ jwt: u.jwt, sig: sign(u.kp, c) }) + 'PING\r\n'),
      VIOLATION,
    );
  });

  it('accounts of JWT users are separate subject spaces; JWT exports and imports link them', async () => {
    const w = await world({ exports: [{ name: 'e', subject: 'feed.>', type: 'stream' }] }, (a) => ({
      imports: [{ name: 'i', subject: 'feed.>', account: a.getPublicKey(), type: 'stream' }],
    }));
    const { port } = await startWithConfig(w.conf);
    const ua = await userOf(w.accountA);
    const ub = await userOf(w.accountB);
    const a = await open(port);
    const b = await open(port);
    assert.equal(
      await a.exchange(connectLine({ jwt: ua.jwt, sig: sign(ua.kp, a) }) + 'PING\r\n'),
      'PONG\r\n',
    );
    assert.equal(
      await b.exchange(connectLine({ jwt: ub.jwt, sig: sign(ub.kp, b) }) + 'SUB > 1\r\nPING\r\n'),
      'PONG\r\n',
    );
    await a.exchange('PUB private 1\r\nx\r\nPUB feed.1 1\r\ny\r\nPING\r\n');
    assert.ok(await b.waitFor((t) => t.includes('MSG feed.1 1 1\r\ny\r\n')));
    assert.ok(!b.take().includes('private'));
  });

  for (const k of clients) {
    it(`${k.name}: jwtAuthenticator connects; an expired or foreign JWT is refused`, async () => {
      const w = await world();
      const { port } = await startWithConfig(w.conf);
      const nc = await k.connect(port, { jwt: w.userJwt, jwtSeed: dec.decode(w.user.getSeed()) });
      const sub = nc.subscribe('a.x');
      nc.publish('a.x', 'hi');
      for await (const m of sub) {
        assert.equal(m.string(), 'hi');
        break;
      }
      await nc.close();
      const old = await userOf(w.accountA, {}, { exp: now() - 5 });
      assert.match(
        await connectError(
          k.connect(port, { jwt: old.jwt, jwtSeed: dec.decode(old.kp.getSeed()) }),
        ),
        /authorization violation/i,
      );
      const foreign = await userOf(createAccount());
      assert.match(
        await connectError(
          k.connect(port, { jwt: foreign.jwt, jwtSeed: dec.decode(foreign.kp.getSeed()) }),
        ),
        /authorization violation/i,
      );
    });
  }

  it('the operator and preload keys are checked when the file is read', async () => {
    await assert.rejects(startWithConfig('operator: "eyJnot.a.jwt"'), /error parsing operator JWT/);
    await assert.rejects(startWithConfig('resolver: URL("http://x")'), /only the MEMORY resolver/);
    await assert.rejects(
      startWithConfig('resolver_preload: { NOTAKEY: "x" }'),
      /not an account public key/,
    );
  });
});
