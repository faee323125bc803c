// TLS on the client port: INFO in clear, then a TLS handshake on the same socket;
// a client that does not start one gets -ERR 'Secure Connection - TLS Required' in
// clear (description) and is closed. Certificates are made at run time.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { describe, it } from 'node:test';
import { freePort, startWirebus } from '../helpers/process.js';
import { clients, connectError } from './clients.js';
import { C0, makeCerts, open, startWithConfig, type Certs } from './helpers.js';

const TLS_REQUIRED = "-ERR 'Secure Connection - TLS Required'\r\n";

function tlsConf(certs: Certs, extra = ''): string {
  return `tls {\n  cert_file: "${certs.serverCert}"\n  key_file: "${certs.serverKey}"\n  ca_file: "${certs.ca}"\n  ${extra}\n}`;
}

/** Reads INFO in clear, upgrades the same socket to TLS and runs one exchange. */
async function tlsExchange(
  port: number,
  send: string,
  opts: { cert?: string; key?: string; ca: string },
): Promise<{ info: Record<string, unknown>; reply: string }> {
  const raw = await open(port);
  const info = raw.infoJson();
  const socket = (raw as unknown as { socket: import('node:net').Socket }).socket;
  const secure: TLSSocket = tlsConnect({
    socket,
    ca: readFileSync(opts.ca),
    servername: 'localhost',
    ...(opts.cert !== undefined
      ? { cert: readFileSync(opts.cert), key: readFileSync(opts.key!) }
      : {}),
  });
  let reply = '';
  await new Promise<void>((resolve) => {
    secure.on('secureConnect', () => secure.write(send));
    secure.on('data', (d: Buffer) => {
      reply += d.toString('latin1');
      if (reply.endsWith('PONG\r\n')) resolve();
    });
    secure.on('error', () => resolve());
    secure.on('close', () => resolve());
    setTimeout(resolve, 2000);
  });
  secure.destroy();
  return { info, reply };
}

describe('TLS', () => {
  const certs = makeCerts();

  it('INFO says tls_required in clear; a plain CONNECT gets the description error and a close', async () => {
    const { port } = await startWithConfig(tlsConf(certs));
    const c = await open(port);
    assert.equal(c.infoJson().tls_required, true);
    assert.equal(c.infoJson().tls_verify, undefined);
    c.send(C0 + 'PING\r\n');
    assert.ok(await c.waitClosed(2000));
    assert.equal(c.take(), TLS_REQUIRED);
  });

  it('a client that sends nothing is told the same when the TLS timeout passes', async () => {
    const { port } = await startWithConfig(tlsConf(certs, 'timeout: 0.3'));
    const c = await open(port);
    const t = Date.now();
    assert.ok(await c.waitClosed(2000));
    assert.equal(c.take(), TLS_REQUIRED);
    assert.ok(Date.now() - t < 1500);
  });

  it('a broken handshake (0x16, then garbage) gets a TLS alert and a close', async () => {
    const { port } = await startWithConfig(tlsConf(certs));
    const c = await open(port);
    c.send(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05]), Buffer.from('junk!junk')]));
    assert.ok(await c.waitClosed(2500));
    const reply = c.take();
    assert.ok(reply === '' || reply.charCodeAt(0) === 0x15, JSON.stringify(reply));
  });

  it('a handshake on the same socket after INFO, then the protocol over TLS', async () => {
    const { port } = await startWithConfig(tlsConf(certs));
    const { reply } = await tlsExchange(port, C0 + 'SUB a 1\r\nPUB a 2\r\nhi\r\nPING\r\n', {
      ca: certs.ca,
    });
    assert.equal(reply, 'MSG a 1 2\r\nhi\r\nPONG\r\n');
  });

  it('verify: true refuses clients without a certificate or with one from another CA', async () => {
    const { port } = await startWithConfig(tlsConf(certs, 'verify: true'));
    const c = await open(port);
    assert.equal(c.infoJson().tls_verify, true);
    c.close();
    const good = await tlsExchange(port, C0 + 'PING\r\n', {
      ca: certs.ca,
      cert: certs.clientCert,
      key: certs.clientKey,
    });
    assert.equal(good.reply, 'PONG\r\n');
    const none = await tlsExchange(port, C0 + 'PING\r\n', { ca: certs.ca });
    assert.equal(none.reply, '');
    const rogue = await tlsExchange(port, C0 + 'PING\r\n', {
      ca: certs.ca,
      cert: certs.rogueCert,
      key: certs.rogueKey,
    });
    assert.equal(rogue.reply, '');
  });

  it('allow_non_tls: INFO says tls_available, and plain and TLS clients both work', async () => {
    const { port, server } = await startWithConfig(tlsConf(certs) + '\nallow_non_tls: true');
    const c = await open(port);
    assert.equal(c.infoJson().tls_available, true);
    assert.equal(c.infoJson().tls_required, undefined);
    assert.equal(await c.exchange(C0 + 'PING\r\n'), 'PONG\r\n');
    // With TLS configured, reads go through stream events, not the shared buffer.
    const plain = [...server.clients.values()].filter((x) => x.kind === 'client');
    assert.deepEqual(
      plain.map((x) => x.sharedReads),
      [false],
    );
    const { reply } = await tlsExchange(port, C0 + 'PING\r\n', { ca: certs.ca });
    assert.equal(reply, 'PONG\r\n');
  });

  it('TLS and authentication together', async () => {
    const { port } = await startWithConfig(tlsConf(certs) + '\nauthorization { token: s3cret }');
    const ok = await tlsExchange(
      port,
      'CONNECT {"auth_token":"s3cret","verbose":false}\r\nPING\r\n',
      {
        ca: certs.ca,
      },
    );
    assert.equal(ok.info.auth_required, true);
    assert.equal(ok.reply, 'PONG\r\n');
  });

  it('bad TLS settings are config errors', async () => {
    await assert.rejects(startWithConfig('tls { cert_file: "x.pem" }'), /missing 'key_file'/);
    await assert.rejects(
      startWithConfig('tls { cert_file: "/nonexistent.pem", key_file: "/nonexistent.pem" }'),
      /error loading certificate/,
    );
    await assert.rejects(
      startWithConfig('tls { bogus: 1, cert_file: a, key_file: b }'),
      /unknown field "bogus"/,
    );
  });

  for (const k of clients) {
    it(`${k.name}: connects over TLS; with verify, only with a client certificate`, async () => {
      const plain = await startWithConfig(tlsConf(certs));
      const nc = await k.connect(plain.port, { tls: { caFile: certs.ca } });
      const sub = nc.subscribe('t');
      nc.publish('t', 'secure');
      for await (const m of sub) {
        assert.equal(m.string(), 'secure');
        break;
      }
      await nc.close();
      const verify = await startWithConfig(tlsConf(certs, 'verify: true'));
      const withCert = await k.connect(verify.port, {
        tls: { caFile: certs.ca, certFile: certs.clientCert, keyFile: certs.clientKey },
      });
      await withCert.flush();
      await withCert.close();
      assert.notEqual(
        await connectError(k.connect(verify.port, { tls: { caFile: certs.ca } })),
        'connected',
      );
    });
  }

  it('bin/wirebus --tls --tlscert --tlskey, and --tlsverify --tlscacert', async () => {
    const port = await freePort();
    const server = await startWirebus(port, [
      '--tls',
      '--tlscert',
      certs.serverCert,
      '--tlskey',
      certs.serverKey,
    ]);
    try {
      const c = await open(port);
      assert.equal(c.infoJson().tls_required, true);
      c.close();
      const nc = await clients[0]!.connect(port, { tls: { caFile: certs.ca } });
      await nc.flush();
      await nc.close();
    } finally {
      await server.stop();
    }
    const port2 = await freePort();
    const verifying = await startWirebus(port2, [
      '--tlsverify',
      '--tlscert',
      certs.serverCert,
      '--tlskey',
      certs.serverKey,
      '--tlscacert',
      certs.ca,
    ]);
    try {
      const c = await open(port2);
      assert.equal(c.infoJson().tls_verify, true);
      c.close();
      const { reply } = await tlsExchange(port2, C0 + 'PING\r\n', {
        ca: certs.ca,
        cert: certs.clientCert,
        key: certs.clientKey,
      });
      assert.equal(reply, 'PONG\r\n');
    } finally {
      await verifying.stop();
    }
  });
});
