// NKEY users: a fresh nonce in every INFO, the Ed25519 signature of the nonce
// checked against the configured public key, base64url or standard base64.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAccount, createUser, type KeyPair } from '@nats-io/nkeys';
import { clients, connectError } from './clients.js';
import {
  connectLine,
  exchangeUntilClose,
  open,
  startWithConfig,
  VIOLATION,
  type RawClient,
} from './helpers.js';

function sign(kp: KeyPair, nonce: string, encoding: BufferEncoding = 'base64url'): string {
  return Buffer.from(kp.sign(Buffer.from(nonce, 'latin1'))).toString(encoding);
}

function nonceOf(c: RawClient): string {
  const n = c.infoJson().nonce;
  assert.equal(typeof n, 'string');
  return n as string;
}

describe('nkeys', () => {
  const user = createUser();
  const other = createUser();
  const pk = user.getPublicKey();
  const conf = `authorization { users: [ { nkey: ${pk}, permissions: { publish: "ok" } }, { user: p, password: p } ] }`;

  it('INFO carries a fresh 15-character nonce per connection', async () => {
    const { port } = await startWithConfig(conf);
    const a = await open(port);
    const b = await open(port);
    const na = nonceOf(a);
    assert.match(na, /^[A-Za-z0-9_-]{15}$/);
    assert.notEqual(na, nonceOf(b));
    assert.equal(a.infoJson().auth_required, true);
  });

  it('a signature of the nonce is accepted (base64url and standard base64), and the user gets its permissions', async () => {
    const { port } = await startWithConfig(conf);
    for (const encoding of ['base64url', 'base64'] as const) {
      const c = await open(port);
      const sig = sign(user, nonceOf(c), encoding);
      assert.equal(
        await c.exchange(connectLine({ nkey: pk, sig }) + 'PUB no 1\r\na\r\nPING\r\n'),
        `-ERR 'Permissions Violation for Publish to "no"'\r\nPONG\r\n`,
      );
      c.close();
    }
  });

  it('refused: a replayed signature, a missing one, a wrong key, an unknown key, garbage', async () => {
    const { port } = await startWithConfig(conf);
    const first = await open(port);
    const replay = sign(user, nonceOf(first));
    first.close();
    const attempts: Record<string, unknown>[] = [
      { nkey: pk, sig: replay },
      { nkey: pk },
      { nkey: pk, sig: '' },
      { nkey: pk, sig: '!!!not base64!!!' },
      { nkey: pk, sig: 'AAAA' },
      { nkey: other.getPublicKey(), sig: 'x' },
      { nkey: createAccount().getPublicKey(), sig: 'x' },
      { nkey: 'UNOTAKEY', sig: 'x' },
    ];
    for (const fields of attempts) {
      const c = await open(port);
      const f = { ...fields };
      if (f.sig === 'x') f.sig = sign(other, nonceOf(c));
      assert.equal(
        await exchangeUntilClose(c, connectLine(f) + 'PING\r\n'),
        VIOLATION,
        JSON.stringify(fields),
      );
    }
    // Signed by another key for this connection's nonce.
    const c = await open(port);
    assert.equal(
      await exchangeUntilClose(
        c,
        connectLine({ nkey: pk, sig: sign(other, nonceOf(c)) }) + 'PING\r\n',
      ),
      VIOLATION,
    );
  });

  it('an nkey entry must be a user public key', async () => {
    await assert.rejects(
      startWithConfig(`authorization { users: [ { nkey: ${createAccount().getPublicKey()} } ] }`),
      /Not a valid public nkey for a user/,
    );
  });

  for (const k of clients) {
    it(`${k.name}: nkeyAuthenticator connects; another seed is refused`, async () => {
      const { port } = await startWithConfig(conf);
      const nc = await k.connect(port, { nkeySeed: new TextDecoder().decode(user.getSeed()) });
      await nc.flush();
      await nc.close();
      assert.match(
        await connectError(
          k.connect(port, { nkeySeed: new TextDecoder().decode(other.getSeed()) }),
        ),
        /authorization violation/i,
      );
    });
  }
});
