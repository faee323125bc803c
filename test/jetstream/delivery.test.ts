// A consumer's deliveries as bytes: the MSG line's ack reply written in place
// (DeliveryMessage, putNanos), and delivery in bursts that wait while the receiver is
// behind, so a stream larger than max_pending reaches a slow reader whole instead of
// cutting it off as a slow consumer; a short first burst after a pause.

import assert from 'node:assert/strict';
import { connect as connectSocket, type Socket } from 'node:net';
import { test } from 'node:test';
import { AckPolicy, connect } from 'nats';
import { DeliveryMessage, putNanos } from '../../src/jetstream/delivery-message.js';
import { putBytes, putInt } from '../../src/server/outbound.js';
import { nowNs } from '../../src/jetstream/time.js';
import { withServer } from '../helpers/server.js';

const text = (b: Buffer, start: number, end: number): string => b.toString('latin1', start, end);

/** A raw connection subscribed to `subject` as sid 1, once the server answered a PING. */
async function subscribedSocket(port: number, subject: string): Promise<Socket> {
  const socket = connectSocket(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', () => r()));
  let input = '';
  const pong = new Promise<void>((resolve) => {
    const onData = (chunk: Buffer): void => {
      input += chunk.toString('latin1');
      if (input.includes('PONG\r\n')) {
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
  });
  socket.write(`CONNECT {"verbose":false,"protocol":1}\r\nSUB ${subject} 1\r\nPING\r\n`);
  await pong;
  return socket;
}

test('putNanos writes the exact value of a time in nanoseconds', () => {
  const b = Buffer.alloc(32);
  const samples = [0, 7, 10, 999_999_999, 1_000_000_000, Number.MAX_SAFE_INTEGER, nowNs()];
  // Times a double holds only to 256 ns, from now to the year 2262 (int64's end).
  for (let i = 0; i < 200; i++) samples.push(nowNs() + Math.floor(Math.random() * 2 ** 40) * 256);
  samples.push(2 ** 62, 2 ** 63 - 1024);
  for (const ns of samples) {
    const s = text(b, 0, putNanos(b, 0, ns));
    assert.match(s, /^\d+$/);
    assert.equal(Number(s), ns, `${s} reads back as ${ns}`);
    if (Number.isSafeInteger(ns)) assert.equal(s, String(ns));
  }
  // The digits of the double itself, not String()'s shortest form padded with zeros.
  assert.equal(text(b, 0, putNanos(b, 0, 1763984000123456768)), '1763984000123456768');
});

test('putInt writes decimal digits', () => {
  const b = Buffer.alloc(32);
  const samples = [
    0,
    1,
    9,
    10,
    99,
    100,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 32 + 5,
    Number.MAX_SAFE_INTEGER,
  ];
  for (let i = 0; i < 300; i++) samples.push(Math.floor(Math.random() * 10 ** (i % 16)));
  for (const v of samples) assert.equal(text(b, 3, putInt(b, 3, v)), String(v));
});

test('putBytes copies a whole buffer, a range of one, and short ones', () => {
  const src = Buffer.from(Array.from({ length: 300 }, (_, i) => i & 0xff));
  // A view into a larger buffer, as a store's block or a read buffer is.
  const view = src.subarray(50, 250);
  const cases: [Buffer, number, number][] = [
    [view, 0, view.length],
    [view, 10, 190],
    [view, 0, 100],
    [view, 100, view.length],
    [view, 3, 40],
    [src, 0, src.length],
    [src, 7, 7],
  ];
  for (const [b, start, end] of cases) {
    const dst = Buffer.alloc(400, 0xee);
    assert.equal(putBytes(dst, 5, b, start, end), 5 + end - start);
    assert.deepEqual(dst.subarray(5, 5 + end - start), b.subarray(start, end));
    assert.equal(dst[4], 0xee);
    assert.equal(dst[5 + end - start], 0xee);
  }
});

test('a DeliveryMessage lays out subject, ack reply and sizes as the core reads them', () => {
  const d = new DeliveryMessage('$JS.ACK.ORDERS.c1.');
  const hdr = Buffer.from('NATS/1.0\r\nA: b\r\n\r\n');
  // As a store holds it: a header block and its data side by side, amid other bytes.
  const stored = Buffer.from(`~~${hdr.toString()}hello~~`);
  const dataStart = 2 + hdr.length;
  let m = d.set(
    'orders.new',
    1,
    42,
    7,
    1763984000123456768,
    3,
    stored,
    2,
    dataStart,
    dataStart + 5,
  );
  assert.equal(text(m.argBuf, m.subjectStart, m.subjectEnd), 'orders.new');
  assert.equal(
    text(m.argBuf, m.replyStart, m.replyEnd),
    '$JS.ACK.ORDERS.c1.1.42.7.1763984000123456768.3',
  );
  assert.equal(text(m.argBuf, m.hdrStart, m.hdrEnd), String(hdr.length));
  assert.equal(text(m.argBuf, m.sizeStart, m.sizeEnd), String(hdr.length + 5));
  assert.equal(m.hdr, hdr.length);
  assert.equal(text(m.payload, m.payloadStart, m.payloadEnd), hdr.toString() + 'hello');
  // The next delivery: a longer subject than the buffer had room for, no headers.
  const long = 'x.'.repeat(200) + 'end';
  m = d.set(long, 2, 1_000_000, 8, 5, 0, Buffer.from('z'), 0, 0, 1);
  assert.equal(text(m.argBuf, m.subjectStart, m.subjectEnd), long);
  assert.equal(text(m.argBuf, m.replyStart, m.replyEnd), '$JS.ACK.ORDERS.c1.2.1000000.8.5.0');
  assert.equal(m.hdr, -1);
  assert.equal(text(m.argBuf, m.sizeStart, m.sizeEnd), '1');
  assert.equal(text(m.payload, m.payloadStart, m.payloadEnd), 'z');
  // The same subject again is not rewritten, and still read right.
  m = d.set(long, 1, 3, 9, 5, 0, Buffer.from('-zz'), 1, 1, 3);
  assert.equal(text(m.argBuf, m.subjectStart, m.subjectEnd), long);
  assert.equal(text(m.payload, m.payloadStart, m.payloadEnd), 'zz');
});

test('a push consumer delivers a stream larger than max_pending to a reader that starts late', async () => {
  const COUNT = 3000;
  const SIZE = 1024;
  // 3 MB of messages for a reader allowed 512 KB of pending output.
  const limits = { maxPending: 512 * 1024, maxPayload: 64 * 1024 };
  await withServer({ jetstream: true, ...limits }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'BIG', subjects: ['big'], storage: 'memory' as never });
      const js = nc.jetstream();
      const data = new Uint8Array(SIZE);
      await Promise.all(Array.from({ length: COUNT }, () => js.publish('big', data)));

      const reader = await subscribedSocket(s.port, 'deliver.big');
      let input = '';
      let closed = false;
      reader.on('close', () => (closed = true));
      // The reader takes nothing for a while: the consumer must wait for it.
      reader.pause();
      await jsm.consumers.add('BIG', {
        durable_name: 'slowpoke',
        // A push consumer is what this is about (nats v2 marks it legacy, the server does not).
        // eslint-disable-next-line @typescript-eslint/no-deprecated
        deliver_subject: 'deliver.big',
        ack_policy: AckPolicy.None,
      });
      await new Promise((r) => setTimeout(r, 500));
      const seqs: number[] = [];
      await new Promise<void>((resolve, reject) => {
        const line = /^MSG big 1 \$JS\.ACK\.BIG\.slowpoke\.1\.(\d+)\.\d+\.\d+\.\d+ 1024\r\n/;
        reader.on('data', (chunk: Buffer) => {
          input += chunk.toString('latin1');
          for (;;) {
            const m = line.exec(input);
            if (m === null || input.length < m[0].length + SIZE + 2) break;
            seqs.push(Number(m[1]));
            input = input.substring(m[0].length + SIZE + 2);
          }
          if (input.startsWith('-ERR')) reject(new Error(input));
          if (seqs.length === COUNT) resolve();
        });
        reader.on('close', () => reject(new Error(`closed after ${seqs.length} messages`)));
        reader.resume();
      });
      assert.deepEqual(
        seqs,
        Array.from({ length: COUNT }, (_, i) => i + 1),
      );
      assert.equal(closed, false);
      reader.destroy();
    } finally {
      await nc.close();
    }
  });
});

test("a fresh consumer's first burst is short: its first 4 KB of messages leave at once", async () => {
  const COUNT = 512;
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'PIECES', subjects: ['pieces'], storage: 'memory' as never });
      const js = nc.jetstream();
      const data = new Uint8Array(128);
      await Promise.all(Array.from({ length: COUNT }, () => js.publish('pieces', data)));
      await jsm.consumers.add('PIECES', { durable_name: 'c', ack_policy: AckPolicy.Explicit });

      const reader = await subscribedSocket(s.port, 'in');
      let input = '';
      // The server's side of this connection: what each of its flushes hands to the socket.
      const client = [...s.server.clients.values()].find((c) => c.port === reader.localPort)!;
      const flushes: number[] = [];
      const flush = client.flush.bind(client);
      client.flush = (): void => {
        const before = client.flow.handed;
        flush();
        if (client.flow.handed > before) flushes.push(client.flow.handed - before);
      };
      const seqs: number[] = [];
      const line = /^MSG pieces 1 \$JS\.ACK\.PIECES\.c\.1\.(\d+)\.\d+\.\d+\.\d+ 128\r\n/;
      await new Promise<void>((resolve, reject) => {
        reader.on('data', (chunk: Buffer) => {
          input += chunk.toString('latin1');
          for (;;) {
            const m = line.exec(input);
            if (m === null || input.length < m[0].length + 130) break;
            seqs.push(Number(m[1]));
            input = input.substring(m[0].length + 130);
          }
          if (input.startsWith('-ERR')) reject(new Error(input));
          if (seqs.length === COUNT) resolve();
        });
        const request = `{"batch":${COUNT}}`;
        reader.write(
          `PUB $JS.API.CONSUMER.MSG.NEXT.PIECES.c in ${request.length}\r\n${request}\r\n`,
        );
      });
      assert.deepEqual(
        seqs,
        Array.from({ length: COUNT }, (_, i) => i + 1),
      );
      // 512 MSG lines of about 70 bytes and their 128 bytes of data: 4 KB of messages
      // (subject and data, 134 bytes each here: 31 of them) at once, the rest in the
      // next burst, a turn later.
      const total = flushes.reduce((x, y) => x + y, 0);
      assert.ok(total > 90 * 1024, `flushes: ${flushes.join(' ')}`);
      assert.equal(flushes.length, 2, `flushes: ${flushes.join(' ')}`);
      assert.ok(
        flushes[0]! >= 31 * 190 && flushes[0]! <= 31 * 200,
        `flushes: ${flushes.join(' ')}`,
      );
      reader.destroy();
    } finally {
      await nc.close();
    }
  });
});
