// Operator mode over WebSocket: the user JWT may come from the cookie named by
// jwt_cookie when CONNECT carries none (the browser sets it; the page signs the nonce).

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { encodeAccount, encodeOperator, encodeUser } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, type KeyPair } from '@nats-io/nkeys';
import { attachSecurityFromSettings } from '../../src/auth/config.js';
import { loadConfig } from '../../src/config/load.js';
import { Server } from '../../src/server/server.js';
import { attachWebsocket } from '../../src/websocket/attach.js';
import { websocketFromConfig } from '../../src/websocket/config.js';
import { tempDir } from '../auth/helpers.js';
import { handshakeRequest, RawWs } from './raw-ws.js';

const servers: Server[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

function signNonce(kp: KeyPair, info: string): string {
  const nonce = (JSON.parse(/^INFO (.*) \r\n/.exec(info)![1]!) as { nonce: string }).nonce;
  return Buffer.from(kp.sign(Buffer.from(nonce, 'latin1'))).toString('base64url');
}

describe('jwt_cookie', () => {
  it('takes the user JWT from the cookie when CONNECT has none', async () => {
    const operator = createOperator();
    const account = createAccount();
    const user = createUser();
    const opJwt = await encodeOperator('OP', operator);
    const accJwt = await encodeAccount('A', account, {}, { signer: operator });
    const userJwt = await encodeUser('browser-user', user, account);
    const file = join(tempDir(), 'op.conf');
    writeFileSync(
      file,
      `operator: ${opJwt}\nresolver: MEMORY\nresolver_preload: { ${account.getPublicKey()}: ${accJwt} }\n` +
        'websocket { host: 127.0.0.1, port: 0, no_tls: true, jwt_cookie: natsjwt }\n',
    );
    const config = loadConfig(file);
    const server = new Server({ host: '127.0.0.1', port: 0, quiet: true });
    attachSecurityFromSettings(server, config, new Map());
    const ws = attachWebsocket(server, websocketFromConfig(config)!);
    await server.start();
    servers.push(server);

    const withCookie = await RawWs.open(
      ws.port,
      handshakeRequest(ws.port, { Cookie: `other=1; natsjwt=${userJwt}` }),
    );
    const info = await withCookie.waitText('\r\n');
    assert.match(info, /"auth_required":true/);
    withCookie.sendText(
      `CONNECT ${JSON.stringify({ verbose: false, sig: signNonce(user, info) })}\r\nPING\r\n`,
    );
    assert.equal(await withCookie.waitText('PONG\r\n'), 'PONG\r\n');
    const client = [...server.clients.values()][0]!;
    assert.equal(client.account.name, account.getPublicKey());

    const without = await RawWs.open(ws.port);
    const info2 = await without.waitText('\r\n');
    without.sendText(
      `CONNECT ${JSON.stringify({ verbose: false, sig: signNonce(user, info2) })}\r\nPING\r\n`,
    );
    assert.match(
      await without.waitText("'Authorization Violation'"),
      /-ERR 'Authorization Violation'\r\n/,
    );
    withCookie.close();
  });
});
