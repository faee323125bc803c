// WebSocket against TCP throughput, on wirebus and on nats-server when installed, in
// one run: `node dist/bench/websocket-throughput.js`. A publisher writes ready-made
// PUBs (over TCP, or inside masked binary frames of ~64 KiB as a browser client
// batches them) and a subscriber (TCP, or WebSocket) counts until every message is in.
// MSGS and SIZE set the load (default 500,000 of 128 bytes). Figures, not assertions.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MSGS = Number(process.env.MSGS ?? '500000');
const SIZE = Number(process.env.SIZE ?? '128');
const ROOT = new URL('../..', import.meta.url).pathname;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const a = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return typeof a === 'object' && a !== null ? a.port : 0;
}

interface Target {
  name: string;
  tcp: number;
  ws: number;
  child: ChildProcess;
}

async function startTarget(
  name: string,
  cmd: string,
  args: (conf: string) => string[],
  tcp: number,
  ws: number,
): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'wb-ws-bench-'));
  const conf = join(dir, 'ws.conf');
  writeFileSync(
    conf,
    `host: 127.0.0.1\nport: ${tcp}\nwebsocket { host: 127.0.0.1, port: ${ws}, no_tls: true }\n`,
  );
  const child = spawn(cmd, args(conf), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('Server is ready')) resolve();
    });
    child.once('exit', () => reject(new Error(`${name} exited: ${err}`)));
  });
  child.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return { name, tcp, ws, child };
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1' }, () => resolve(s));
    s.once('error', reject);
  });
}

/** A WebSocket opened by hand: handshake, then raw frames both ways. */
async function openWs(port: number): Promise<Socket> {
  const s = await open(port);
  s.write(
    `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  await new Promise<void>((resolve) => {
    let head = '';
    const onData = (d: Buffer): void => {
      head += d.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        s.off('data', onData);
        resolve();
      }
    };
    s.on('data', onData);
  });
  return s;
}

function maskedFrame(payload: Buffer): Buffer {
  const key = randomBytes(4);
  const len = payload.length;
  const header =
    len < 65536 ? Buffer.from([0x82, 0x80 | 126, len >> 8, len & 0xff]) : Buffer.alloc(10);
  if (len >= 65536) {
    header[0] = 0x82;
    header[1] = 0x80 | 127;
    header.writeUInt32BE(0, 2);
    header.writeUInt32BE(len, 6);
  }
  const body = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) body[i] = payload[i]! ^ key[i & 3]!;
  return Buffer.concat([header, key, body]);
}

/** Counts MSG payloads in a byte stream (TCP, or the payloads of server frames). */
function counter(expect: number, done: () => void): (chunk: Buffer) => void {
  const line = Buffer.from(`MSG bench 1 ${SIZE}\r\n`).length;
  const per = line + SIZE + 2;
  let bytes = 0;
  return (chunk) => {
    bytes += chunk.length;
    if (bytes >= expect * per) done();
  };
}

async function run(t: Target, pubWs: boolean, subWs: boolean): Promise<number> {
  const sub = subWs ? await openWs(t.ws) : await open(t.tcp);
  const connectLine = 'CONNECT {"verbose":false,"pedantic":false}\r\n';
  const setup = `${connectLine}SUB bench 1\r\nPING\r\n`;
  sub.write(subWs ? maskedFrame(Buffer.from(setup)) : setup);
  await new Promise<void>((resolve) => {
    const onData = (d: Buffer): void => {
      if (d.includes('PONG')) {
        sub.off('data', onData);
        resolve();
      }
    };
    sub.on('data', onData);
  });
  // Frame headers of server frames are a few bytes per ~64 KiB: the count allows them.
  let finished!: () => void;
  const allIn = new Promise<void>((r) => (finished = r));
  const count = counter(MSGS, () => finished());
  sub.on('data', count);
  const pub = pubWs ? await openWs(t.ws) : await open(t.tcp);
  const one = Buffer.concat([
    Buffer.from(`PUB bench ${SIZE}\r\n`),
    Buffer.alloc(SIZE, 'x'),
    Buffer.from('\r\n'),
  ]);
  const perBatch = Math.max(1, Math.floor(60_000 / one.length));
  const batch = Buffer.concat(Array.from({ length: perBatch }, () => one));
  const chunk = pubWs ? maskedFrame(batch) : batch;
  pub.write(pubWs ? maskedFrame(Buffer.from(connectLine)) : connectLine);
  const start = performance.now();
  let sent = 0;
  while (sent < MSGS) {
    if (!pub.write(chunk)) await new Promise<void>((r) => pub.once('drain', r));
    sent += perBatch;
  }
  await allIn;
  const secs = (performance.now() - start) / 1000;
  pub.destroy();
  sub.destroy();
  return MSGS / secs;
}

const targets: Target[] = [];
const wbTcp = await freePort();
const wbWs = await freePort();
targets.push(
  await startTarget('wirebus', process.execPath, (c) => ['bin/wirebus', '-c', c], wbTcp, wbWs),
);
if (spawnSync('nats-server', ['--version']).status === 0) {
  targets.push(
    await startTarget(
      'nats-server 2.9.10',
      'nats-server',
      (c) => ['-c', c],
      await freePort(),
      await freePort(),
    ),
  );
}
console.log(
  `${MSGS} messages of ${SIZE} B, publisher → subscriber, msgs/s (load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)})`,
);
console.log('| server | TCP → TCP | WS → TCP | TCP → WS | WS → WS |');
console.log('|---|---|---|---|---|');
for (const t of targets) {
  const cells = [];
  for (const [p, s] of [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const) {
    cells.push(Math.round(await run(t, p, s)).toLocaleString('en-US'));
  }
  console.log(`| ${t.name} | ${cells.join(' | ')} |`);
}
for (const t of targets) t.child.kill('SIGTERM');
