// Transcripts over a raw WebSocket: the HTTP answers to bad handshakes, the protocol
// inside frames, bad frames, and a WebSocket client as a client like any other
// (/connz, /varz, the ports file, max_connections, lame duck). Expected bytes were
// recorded from nats-server 2.9.10 with the same websocket block and requests.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startServer, type RunningServer, type StartOptions } from '../../src/index.js';
import { RawClient } from '../helpers/raw.js';
import { clientFrame, handshakeRequest, RawWs } from './raw-ws.js';

const running: RunningServer[] = [];
after(async () => {
  await Promise.all(running.map((s) => s.close()));
});

async function start(options: StartOptions = {}): Promise<RunningServer & { wsPort: number }> {
  const s = await startServer({
    host: '127.0.0.1',
    port: 0,
    httpPort: -1,
    httpHost: '127.0.0.1',
    ...options,
    websocket: { host: '127.0.0.1', port: 0, noTls: true, ...options.websocket },
  });
  running.push(s);
  return Object.assign(s, { wsPort: s.websocket!.port });
}

async function json(s: RunningServer, path: string): Promise<Record<string, unknown>> {
  const r = await fetch(`http://127.0.0.1:${s.httpPort}${path}`);
  return (await r.json()) as Record<string, unknown>;
}

/** The reference's error response, Date left out (its value is the time of the answer). */
function refusal(status: string, body: string): string {
  return (
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nSec-Websocket-Version: 13\r\n` +
    `X-Content-Type-Options: nosniff\r\nDate: X\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  );
}

const withoutDate = (text: string): string => text.replace(/Date: [^\r]*\r\n/, 'Date: X\r\n');

describe('WebSocket handshake', () => {
  const K = 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
  const cases: Array<[string, (port: number) => string, string]> = [
    [
      'a plain GET',
      () => 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n',
      refusal('400 Bad Request', 'Bad Request\n'),
    ],
    [
      'POST',
      () =>
        `POST / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n${K}Sec-WebSocket-Version: 13\r\nContent-Length: 0\r\n\r\n`,
      refusal('405 Method Not Allowed', 'Method Not Allowed\n'),
    ],
    [
      'no Connection: Upgrade',
      () =>
        `GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n${K}Sec-WebSocket-Version: 13\r\n\r\n`,
      refusal('400 Bad Request', 'Bad Request\n'),
    ],
    [
      'no key',
      () =>
        'GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n',
      refusal('400 Bad Request', 'Bad Request\n'),
    ],
    [
      'version 12',
      () =>
        `GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n${K}Sec-WebSocket-Version: 12\r\n\r\n`,
      refusal('400 Bad Request', 'Bad Request\n'),
    ],
    [
      'an Origin that is not the same',
      (port) =>
        `GET / HTTP/1.1\r\nHost: localhost:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n${K}Sec-WebSocket-Version: 13\r\nOrigin: http://evil.example\r\n\r\n`,
      refusal('403 Forbidden', 'Forbidden\n'),
    ],
  ];
  for (const [name, request, expected] of cases) {
    it(`refuses ${name} with the reference's answer`, async () => {
      const s = await start({ websocket: { sameOrigin: true } });
      const ws = await RawWs.open(s.wsPort, request(s.wsPort));
      assert.equal(withoutDate(ws.response), expected);
      await ws.waitClosed();
      assert.ok(ws.closed, 'the refused connection is closed');
      // Nothing else is affected: the next handshake goes through.
      const ok = await RawWs.open(s.wsPort);
      assert.equal(ok.status, 101);
      ok.close();
    });
  }

  it('accepts the same origin and negotiates compression and no-masking as the reference', async () => {
    const s = await start({ websocket: { sameOrigin: true, compression: true } });
    const ws = await RawWs.open(
      s.wsPort,
      `GET / HTTP/1.1\r\nHost: localhost:${s.wsPort}\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n${K}Sec-WebSocket-Version: 13\r\nOrigin: http://localhost:${s.wsPort}\r\nSec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\nNats-No-Masking: true\r\n\r\n`,
    );
    assert.equal(
      ws.response,
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\nNats-No-Masking: true\r\n\r\n',
    );
    // INFO is over 64 bytes: it comes compressed, as from the reference.
    const info = await ws.waitText('\r\n');
    assert.match(info, /^INFO \{.*"port":\d+.*\} \r\n$/);
    // No masking was agreed: unmasked frames are fine.
    ws.send(clientFrame(2, 'PING\r\n', { masked: false }));
    assert.equal(await ws.waitText('PONG\r\n'), 'PONG\r\n');
    ws.close();
  });

  it('drops a connection that does not finish its handshake within handshake_timeout', async () => {
    const s = await start({ websocket: { handshakeTimeoutMs: 300 } });
    const silent = await RawWs.open(s.wsPort, 'GET / HTTP/1.1\r\nHost: x\r\n');
    await silent.waitClosed(5000);
    assert.ok(silent.closed, 'closed by the server');
    // A complete handshake is not affected, however long the connection lives after it.
    const ok = await RawWs.open(s.wsPort);
    await ok.waitText('\r\n');
    await new Promise((r) => setTimeout(r, 600));
    ok.sendText('PING\r\n');
    assert.equal(await ok.waitText('PONG\r\n'), 'PONG\r\n');
    ok.close();
  });

  it('checks allowed_origins by scheme, host and port', async () => {
    const s = await start({
      websocket: { allowedOrigins: ['http://good.example', 'https://tls.example:8443'] },
    });
    const origin = async (o: string): Promise<number> => {
      const ws = await RawWs.open(s.wsPort, handshakeRequest(s.wsPort, { Origin: o }));
      ws.close();
      return ws.status;
    };
    assert.equal(await origin('http://good.example'), 101);
    assert.equal(await origin('http://GOOD.example:80'), 101);
    assert.equal(await origin('https://good.example'), 403);
    assert.equal(await origin('http://good.example:8080'), 403);
    assert.equal(await origin('https://tls.example:8443'), 101);
    assert.equal(await origin('https://tls.example'), 403);
    assert.equal(await origin('http://evil.example'), 403);
    // No Origin at all: not a browser, allowed (RFC 6455 §1.6, as the reference).
    assert.equal(await origin(''), 101);
  });
});

describe('WebSocket frames', () => {
  it('carries the protocol both ways with a TCP client', async () => {
    const s = await start();
    const ws = await RawWs.open(s.wsPort);
    const info = JSON.parse(/^INFO (.*) \r\n$/.exec(await ws.waitText('\r\n'))![1]!) as Record<
      string,
      unknown
    >;
    assert.equal(info.headers, true);
    assert.equal(info.port, s.port);
    ws.sendText(
      'CONNECT {"verbose":true,"pedantic":false,"headers":true}\r\nSUB from.tcp 1\r\nPING\r\n',
    );
    assert.equal(await ws.waitText('PONG\r\n'), '+OK\r\n+OK\r\nPONG\r\n');
    const tcp = await RawClient.open(s.port);
    tcp.send('CONNECT {"verbose":false,"headers":true}\r\nSUB from.ws 9\r\nPING\r\n');
    await tcp.waitFor((d) => d.includes('PONG'), 2000);
    tcp.take();
    tcp.send('PUB from.tcp 5\r\nhello\r\nHPUB from.tcp 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n');
    assert.equal(
      await ws.waitText('hi\r\n'),
      'MSG from.tcp 1 5\r\nhello\r\nHMSG from.tcp 1 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n',
    );
    // One op split over three frames of two messages: the stream is what counts.
    ws.send(clientFrame(2, 'PUB from.w'));
    ws.send(clientFrame(2, 's 3\r\nab'));
    ws.send(clientFrame(2, 'c\r\n'));
    await tcp.waitFor((d) => d.includes('abc'), 2000);
    assert.equal(tcp.take(), 'MSG from.ws 9 3\r\nabc\r\n');
    ws.close();
  });

  it('answers a ping with a pong carrying its payload', async () => {
    const s = await start();
    const ws = await RawWs.open(s.wsPort);
    await ws.waitText('\r\n');
    ws.send(clientFrame(9, 'hello'));
    ws.sendText('PING\r\n');
    await ws.waitText('PONG\r\n');
    const pong = ws.control.find((f) => f.opcode === 10);
    assert.equal(pong?.payload.toString(), 'hello');
    ws.close();
  });

  it('echoes a close and records Client Closed', async () => {
    const s = await start();
    const ws = await RawWs.open(s.wsPort);
    await ws.waitText('\r\n');
    ws.send(clientFrame(8, Buffer.from([0x03, 0xe8, 0x62, 0x79, 0x65])));
    assert.deepEqual(await ws.waitClose(), { status: 1000, reason: 'bye' });
    await ws.waitClosed();
    const closed = (await json(s, '/connz?state=closed')).connections as Array<{ reason: string }>;
    assert.deepEqual(
      closed.map((c) => c.reason),
      ['Client Closed'],
    );
  });

  const garbage: Array<[string, Buffer, string]> = [
    ['an unmasked frame', clientFrame(2, 'PING\r\n', { masked: false }), 'mask bit missing'],
    ['opcode 3', clientFrame(3, 'x'), 'unknown opcode 3'],
    [
      'a 126-byte ping',
      clientFrame(9, 'x'.repeat(126)),
      'control frame length bigger than maximum allowed of 125 bytes',
    ],
    [
      'a fragmented ping',
      clientFrame(9, 'x', { final: false }),
      'control frame does not have final bit set',
    ],
    ['a stray continuation', clientFrame(0, 'x'), 'invalid continuation frame'],
    [
      'a compressed frame without compression',
      clientFrame(2, 'xxxx', { rsv1: true }),
      'compression not negotiated',
    ],
  ];
  for (const [name, bytes, reason] of garbage) {
    it(`closes on ${name} with a protocol error, and only that connection`, async () => {
      const s = await start();
      const bystander = await RawWs.open(s.wsPort);
      await bystander.waitText('\r\n');
      bystander.sendText('CONNECT {"verbose":false}\r\nSUB x 1\r\nPING\r\n');
      await bystander.waitText('PONG\r\n');
      const ws = await RawWs.open(s.wsPort);
      await ws.waitText('\r\n');
      ws.send(bytes);
      assert.deepEqual(await ws.waitClose(), { status: 1002, reason });
      await ws.waitClosed();
      const closed = (await json(s, '/connz?state=closed')).connections as Array<{
        reason: string;
      }>;
      assert.deepEqual(
        closed.map((c) => c.reason),
        ['Read Error'],
      );
      const tcp = await RawClient.open(s.port);
      tcp.send('CONNECT {"verbose":false}\r\nPUB x 2\r\nok\r\n');
      assert.equal(await bystander.waitText('ok\r\n'), 'MSG x 1 2\r\nok\r\n');
      bystander.close();
    });
  }

  it('sends -ERR, then a close naming the reason, for a protocol violation', async () => {
    const s = await start();
    const ws = await RawWs.open(s.wsPort);
    await ws.waitText('\r\n');
    ws.sendText('FOO BAR\r\n');
    assert.equal(
      await ws.waitText("-ERR 'Unknown Protocol Operation'\r\n"),
      "-ERR 'Unknown Protocol Operation'\r\n",
    );
    const close = await ws.waitClose();
    await ws.waitClosed();
    const closed = (await json(s, '/connz?state=closed')).connections as Array<{ reason: string }>;
    assert.ok(close !== null);
    assert.equal(close.status, 1002);
    assert.equal(close.reason, closed[0]?.reason);
  });

  it('cuts off a WebSocket slow consumer past max_pending, not its publisher', async () => {
    const s = await start({ maxPending: 256 * 1024, maxPayload: 64 * 1024, writeDeadline: 2000 });
    const slow = await RawWs.open(s.wsPort);
    await slow.waitText('\r\n');
    slow.sendText('CONNECT {"verbose":false}\r\nSUB big 1\r\nPING\r\n');
    await slow.waitText('PONG\r\n');
    // Stop reading: the kernel buffers fill, then the server's pending bytes grow.
    slow.pauseReading();
    const tcp = await RawClient.open(s.port);
    const payload = 'p'.repeat(32 * 1024);
    tcp.send('CONNECT {"verbose":false}\r\n');
    for (let i = 0; i < 400; i++) tcp.send(`PUB big ${payload.length}\r\n${payload}\r\n`);
    tcp.send('PING\r\n');
    await tcp.waitFor((d) => d.includes('PONG'), 10_000);
    assert.ok(!tcp.closed, 'the publisher stays');
    const deadline = Date.now() + 10_000;
    let reasons: string[] = [];
    while (Date.now() < deadline) {
      const closed = (await json(s, '/connz?state=closed')).connections as Array<{
        reason: string;
      }>;
      reasons = closed.map((c) => c.reason);
      if (reasons.length > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Cut off either way the description allows: pending bytes or no write progress.
    assert.equal(reasons.length, 1);
    assert.match(reasons[0]!, /^Slow Consumer \((Pending Bytes|Write Deadline)\)$/);
    slow.close();
  });
});

describe('WebSocket clients in monitoring and limits', () => {
  it('shows them in /connz and the listener in /varz', async () => {
    const s = await start({
      websocket: { allowedOrigins: ['http://a.example'], compression: true },
    });
    const ws = await RawWs.open(s.wsPort);
    await ws.waitText('\r\n');
    ws.sendText(
      'CONNECT {"verbose":false,"name":"browser-app","lang":"nats.ws","version":"1.30.3"}\r\nSUB a 1\r\nPING\r\n',
    );
    await ws.waitText('PONG\r\n');
    const connz = (await json(s, '/connz?subs=1')).connections as Array<Record<string, unknown>>;
    assert.equal(connz.length, 1);
    assert.equal(connz[0]!.name, 'browser-app');
    assert.equal(connz[0]!.lang, 'nats.ws');
    assert.deepEqual(connz[0]!.subscriptions_list, ['a']);
    const varz = await json(s, '/varz');
    assert.deepEqual(varz.websocket, {
      host: '127.0.0.1',
      port: s.wsPort,
      no_tls: true,
      allowed_origins: ['http://a.example'],
      compression: true,
    });
    ws.close();
  });

  it('lists the listener in the ports file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wirebus-ws-ports-'));
    try {
      const { writePortsFile, portsFilePath } = await import('../../src/ops/process-files.js');
      const s = await start({ portsFileDir: dir });
      writePortsFile(s.server, { host: '127.0.0.1', port: s.httpPort });
      const ports = JSON.parse(readFileSync(portsFilePath(dir), 'utf8')) as Record<
        string,
        string[]
      >;
      assert.deepEqual(ports.websocket, [`ws://127.0.0.1:${s.wsPort}`]);
      assert.deepEqual(ports.nats, [`nats://127.0.0.1:${s.port}`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts them against max_connections, with the reference error', async () => {
    const s = await start({ maxConnections: 1 });
    const first = await RawWs.open(s.wsPort);
    await first.waitText('\r\n');
    const second = await RawWs.open(s.wsPort);
    const text = await second.waitText("'Maximum Connections Exceeded'");
    assert.match(text, /^INFO .*\r\n-ERR 'Maximum Connections Exceeded'\r\n$/s);
    await second.waitClosed();
    first.close();
  });

  it('stops accepting in lame duck mode and closes the clients', async () => {
    const s = await start({ lameDuckDuration: 1000, lameDuckGracePeriod: 0 });
    const ws = await RawWs.open(s.wsPort);
    await ws.waitText('\r\n');
    ws.sendText('CONNECT {"verbose":false,"protocol":1}\r\nPING\r\n');
    await ws.waitText('PONG\r\n');
    const done = s.server.lameDuckShutdown();
    const text = await ws.waitText('"ldm":true', 5000);
    assert.match(text, /INFO \{.*"ldm":true/);
    await assert.rejects(RawWs.open(s.wsPort));
    await done;
    await ws.waitClosed();
  });
});
