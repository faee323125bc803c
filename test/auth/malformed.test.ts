// Malformed credentials over raw sockets: garbage JSON, wrong types, a 1 MB jwt, bad
// signatures, expired JWTs, random CONNECT objects. Each gets its exact answer and a
// close, and the server keeps serving good clients.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeAccount, encodeOperator, encodeUser } from '@nats-io/jwt';
import { createAccount, createOperator, createUser } from '@nats-io/nkeys';
import { connectLine, exchangeUntilClose, open, startWithConfig, VIOLATION } from './helpers.js';

const PARSER_ERROR = "-ERR 'Parser Error'\r\n";

async function operatorWorld() {
  const op = createOperator();
  const acc = createAccount();
  const user = createUser();
  const conf = `operator: ${await encodeOperator('O', op)}
resolver: MEMORY
resolver_preload: { ${acc.getPublicKey()}: ${await encodeAccount('A', acc, {}, { signer: op })} }
authorization { timeout: 5 }`;
  return { conf, acc, user };
}

describe('malformed credentials', () => {
  it('description: garbage CONNECT JSON gets Parser Error and a close', async () => {
    const { port } = await startWithConfig('authorization { users: [ { user: a, password: b } ] }');
    for (const bad of ['{', '{"user":"a",}', 'nope', '{"user":"a","pass":"b"', '\u0000\u0001']) {
      const c = await open(port);
      assert.equal(await exchangeUntilClose(c, `CONNECT ${bad}\r\nPING\r\n`), PARSER_ERROR, bad);
    }
  });

  it('description: credentials of the wrong type get Parser Error and a close', async () => {
    const { port } = await startWithConfig('authorization { users: [ { user: a, password: b } ] }');
    for (const fields of [
      { user: 5, pass: 'b' },
      { user: 'a', pass: { x: 1 } },
      { auth_token: ['t'] },
      { jwt: 1 },
      { sig: true },
      { nkey: 12 },
    ]) {
      const c = await open(port);
      assert.equal(
        await exchangeUntilClose(c, connectLine(fields) + 'PING\r\n'),
        PARSER_ERROR,
        JSON.stringify(fields),
      );
    }
  });

  it('null credentials count as absent; a non-object CONNECT is refused', async () => {
    const { port } = await startWithConfig('authorization { users: [ { user: a, password: b } ] }');
    const c = await open(port);
    assert.equal(
      await exchangeUntilClose(c, connectLine({ user: null, pass: null }) + 'PING\r\n'),
      VIOLATION,
    );
    const d = await open(port);
    assert.equal(await exchangeUntilClose(d, 'CONNECT ["a","b"]\r\nPING\r\n'), PARSER_ERROR);
  });

  it('a 1 MB jwt field exceeds the control line and closes the connection', async () => {
    const { conf } = await operatorWorld();
    const { port, server } = await startWithConfig(conf);
    const c = await open(port);
    const jwt = 'eyJ' + 'A'.repeat(1024 * 1024);
    assert.equal(
      await exchangeUntilClose(c, connectLine({ jwt, sig: 'x' }) + 'PING\r\n', 3000),
      "-ERR 'Maximum Control Line Exceeded'\r\n",
    );
    // A 3 KB one fits the line and is simply refused.
    const d = await open(port);
    assert.equal(
      await exchangeUntilClose(
        d,
        connectLine({ jwt: 'eyJ' + 'A'.repeat(3000), sig: 'x' }) + 'PING\r\n',
      ),
      VIOLATION,
    );
    assert.ok(server.clients.size <= 1);
  });

  it('bad signatures, a JWT for another nonce, an expired JWT', async () => {
    const { conf, acc, user } = await operatorWorld();
    const { port } = await startWithConfig(conf);
    const jwt = await encodeUser('u', user, acc);
    const expired = await encodeUser(
      'u',
      user,
      acc,
      {},
      { exp: Math.floor(Date.now() / 1000) - 1 },
    );
    const first = await open(port);
    const stale = Buffer.from(user.sign(Buffer.from(first.infoJson().nonce as string))).toString(
      'base64url',
    );
    first.close();
    for (const sig of [stale, '', '=', 'A'.repeat(86), 'A'.repeat(2000), '\u00ff\u00fe']) {
      const c = await open(port);
      assert.equal(await exchangeUntilClose(c, connectLine({ jwt, sig }) + 'PING\r\n'), VIOLATION);
    }
    const c = await open(port);
    const sig = Buffer.from(user.sign(Buffer.from(c.infoJson().nonce as string))).toString(
      'base64url',
    );
    assert.equal(
      await exchangeUntilClose(c, connectLine({ jwt: expired, sig }) + 'PING\r\n'),
      VIOLATION,
    );
    const ok = await open(port);
    const okSig = Buffer.from(user.sign(Buffer.from(ok.infoJson().nonce as string))).toString(
      'base64url',
    );
    assert.equal(await ok.exchange(connectLine({ jwt, sig: okSig }) + 'PING\r\n'), 'PONG\r\n');
  });

  it('random CONNECT credentials never crash the server and never get in', async () => {
    const { port } = await startWithConfig(`authorization {
      users: [ { user: a, password: "$2a$04$Q.CgCP2Sl9pkcTXEZHazaeMwPaAkSHk7AI51HkyMt5iJQQyUA4qxq" },
               { nkey: ${createUser().getPublicKey()} } ]
    }`);
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 4 }), fc.string(), { maxKeys: 2 }),
    );
    const fields = fc.record(
      { user: value, pass: value, auth_token: value, nkey: value, sig: value, jwt: value },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fields, async (f) => {
        const c = await open(port);
        const reply = await exchangeUntilClose(c, connectLine(f) + 'PING\r\n', 2000);
        c.close();
        return reply === VIOLATION || reply === PARSER_ERROR;
      }),
      { numRuns: 40 },
    );
    const good = await open(port);
    assert.equal(
      await exchangeUntilClose(good, connectLine({ user: 'a' }) + 'PING\r\n'),
      VIOLATION,
    );
  });
});
