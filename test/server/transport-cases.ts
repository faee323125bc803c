// What a plain client connection's transport must do, whichever drives it: Node's
// TCP handle (src/server/tcp-transport.ts, the default) or net.Socket (the fallback,
// WIREBUS_NET_SOCKETS=1). tcp-transport.test.ts and net-socket-fallback.test.ts run
// these cases, each in its own process, since the choice is made once per process.

import assert from 'node:assert/strict';
import { connect, Socket } from 'node:net';
import { describe, it } from 'node:test';
import type { Client } from '../../src/server/client.js';
import type { Server } from '../../src/server/server.js';
import { TcpTransport } from '../../src/server/tcp-transport.js';
import { withServer } from '../helpers/server.js';
import { C0, RawClient } from '../helpers/raw.js';

/** Waits for a condition, failing the test if it does not come within ms. */
async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The server's Client for the connection whose local port is `port`. */
function clientAt(server: Server, port: number): Client {
  for (const c of server.clients.values()) if (c.port === port) return c;
  return assert.fail(`no client from port ${port}`);
}

/** A plain socket that has done CONNECT and PING, reading nothing more on its own. */
async function handshaken(port: number, subscribe = ''): Promise<{ s: Socket; got: Buffer[] }> {
  const s = connect({ port, host: '127.0.0.1' });
  const got: Buffer[] = [];
  s.on('data', (chunk: Buffer) => got.push(chunk));
  s.on('error', () => {});
  s.write(`${C0}${subscribe}PING\r\n`);
  await until(() => Buffer.concat(got).toString('latin1').includes('PONG\r\n'));
  got.length = 0;
  return { s, got };
}

export function transportCases(driven: 'handle' | 'socket'): void {
  describe(`plain client connections at the ${driven === 'handle' ? 'TCP handle' : 'net.Socket'}`, () => {
    it('are driven by the expected transport and know their peer', async () => {
      await withServer({}, async (server) => {
        const c = await RawClient.open(server.port);
        try {
          assert.equal(await c.exchange(`${C0}PING\r\n`), 'PONG\r\n');
          const local = (c as unknown as { socket: Socket }).socket.localPort!;
          const client = clientAt(server.server, local);
          assert.equal(client.socket instanceof TcpTransport, driven === 'handle');
          assert.equal(client.socket instanceof Socket, driven === 'socket');
          assert.equal(client.ip, '127.0.0.1');
          assert.equal(c.infoJson().client_ip, '127.0.0.1');
        } finally {
          c.close();
        }
      });
    });

    it('hold what a subscriber does not read, in order, and drain it when it reads again', async () => {
      await withServer({}, async (server) => {
        const { s: sub, got } = await handshaken(server.port, 'SUB big 1\r\n');
        const { s: pub } = await handshaken(server.port);
        const subscriber = clientAt(server.server, sub.localPort!);
        sub.pause();
        const payload = 'x'.repeat(1000);
        const count = 8000;
        let batch = '';
        for (let i = 0; i < count; i++) batch += `PUB big ${payload.length}\r\n${payload}\r\n`;
        pub.write(batch);
        // The kernel's buffers fill; the rest waits with the transport.
        await until(() => subscriber.socket!.writableLength > 0);
        sub.resume();
        const line = `MSG big 1 ${payload.length}\r\n${payload}\r\n`;
        await until(() => got.reduce((n, b) => n + b.length, 0) >= count * line.length, 10_000);
        const text = Buffer.concat(got).toString('latin1');
        assert.equal(text, line.repeat(count));
        await until(() => subscriber.socket!.writableLength === 0);
        assert.equal(subscriber.closed, false);
        sub.destroy();
        pub.destroy();
      });
    });

    it('close at a reset with output pending, and the server serves the next client', async () => {
      await withServer({}, async (server) => {
        const { s: sub } = await handshaken(server.port, 'SUB big 1\r\n');
        const { s: pub } = await handshaken(server.port);
        const subscriber = clientAt(server.server, sub.localPort!);
        sub.pause();
        const payload = 'y'.repeat(4000);
        let batch = '';
        for (let i = 0; i < 2000; i++) batch += `PUB big ${payload.length}\r\n${payload}\r\n`;
        pub.write(batch);
        await until(() => subscriber.socket!.writableLength > 0);
        sub.resetAndDestroy();
        await until(() => subscriber.closed);
        // The reset surfaced as an error of the socket, not as an orderly close.
        assert.match(subscriber.closeReason, /^(Read|Write) Error$/);
        await until(() => !server.server.clients.has(subscriber.cid));
        const next = await RawClient.open(server.port);
        assert.equal(await next.exchange(`${C0}PING\r\n`), 'PONG\r\n');
        next.close();
        pub.destroy();
      });
    });

    it('write an -ERR in full before the server closes the connection', async () => {
      await withServer({}, async (server) => {
        const c = await RawClient.open(server.port);
        assert.equal(await c.exchange(`${C0}PING\r\n`), 'PONG\r\n');
        c.send('BOGUS\r\n');
        assert.equal(await c.waitClosed(), true);
        assert.equal(c.take(), "-ERR 'Unknown Protocol Operation'\r\n");
        await until(() => server.server.clients.size === 0);
      });
    });

    it('close when the client closes first, its half-open side included', async () => {
      await withServer({}, async (server) => {
        const { s } = await handshaken(server.port);
        const client = clientAt(server.server, s.localPort!);
        let ended = false;
        s.on('end', () => (ended = true));
        s.end();
        await until(() => client.closed && ended);
        await until(() => server.server.clients.size === 0);
      });
    });
  });
}
