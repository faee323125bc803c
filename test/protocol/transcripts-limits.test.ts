// §11 rows 32-34, 40-41 and 81-84, and the slow-consumer and stale-connection cut-offs:
// control line, payload, subscription and connection limits, keep-alive. Every
// expectation was checked against nats-server 2.9.10 (with the same limits in its
// config file); rows the contract table changes say "description".

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { RawClient } from '../helpers/raw.js';
import { withServer } from '../helpers/server.js';
import { C0, CV, checkClosed, checkOpen, frames, sleep } from './transcript.js';

// description: capitalised (the reference sends 'maximum control line exceeded').
const MAX_CONTROL_LINE = "-ERR 'Maximum Control Line Exceeded'\r\n";
const MAX_PAYLOAD = "-ERR 'Maximum Payload Violation'\r\n";
const MAX_SUBS = "-ERR 'maximum subscriptions exceeded'\r\n";

/** `PUB <subject> 0` with an empty payload, whose argument part is exactly `argLen` bytes. */
function pubWithArg(argLen: number): string {
  return C0 + 'PUB ' + 'a'.repeat(argLen - 2) + ' 0\r\n\r\nPING\r\n';
}

/** A CONNECT line whose JSON is exactly `len` bytes. */
function connectOfLength(len: number): string {
  const head = '{"verbose":true,"name":"';
  const tail = '"}';
  return 'CONNECT ' + head + 'x'.repeat(len - head.length - tail.length) + tail + '\r\nPING\r\n';
}

describe('transcripts: control line limit', () => {
  test('description: the default limit is 1024 argument bytes (1024 passes)', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, pubWithArg(1024), 'PONG\r\n');
    }));

  test('description: the default limit is 1024 argument bytes (1025 fails)', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, pubWithArg(1025), MAX_CONTROL_LINE);
    }));

  test('row 32: with max_control_line 4096, a 4096-byte argument passes', () =>
    withServer({ maxControlLine: 4096 }, async (s) => {
      await checkOpen(s.port, pubWithArg(4096), 'PONG\r\n');
    }));

  test('row 33 (description): with max_control_line 4096, a 4097-byte argument fails', () =>
    withServer({ maxControlLine: 4096 }, async (s) => {
      await checkClosed(s.port, pubWithArg(4097), MAX_CONTROL_LINE);
    }));

  test('row 34 (description): a CONNECT over 4096 bytes fails', () =>
    withServer({}, async (s) => {
      await checkClosed(
        s.port,
        'CONNECT {"verbose":false,"name":"' + 'x'.repeat(4100) + '"}\r\n',
        MAX_CONTROL_LINE,
      );
    }));

  test('description: CONNECT JSON may take 4096 bytes, not 4097', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, connectOfLength(4096), '+OK\r\nPONG\r\n');
      await checkClosed(s.port, connectOfLength(4097), MAX_CONTROL_LINE);
    }));

  test('description: CONNECT gets max(max_control_line, 4096) bytes', () =>
    withServer({ maxControlLine: 64 }, async (s) => {
      // The reference measures CONNECT against max_control_line itself and rejects this.
      await checkOpen(s.port, connectOfLength(4096), '+OK\r\nPONG\r\n');
    }));

  test('a CONNECT as long as a larger max_control_line passes', () =>
    withServer({ maxControlLine: 5000 }, async (s) => {
      await checkOpen(s.port, connectOfLength(5000), '+OK\r\nPONG\r\n');
      await checkClosed(s.port, connectOfLength(5001), MAX_CONTROL_LINE);
    }));

  test('row 84 (description): the limit is checked before the newline arrives', () =>
    withServer({ maxControlLine: 64 }, async (s) => {
      await checkClosed(s.port, C0 + 'SUB ' + 'a'.repeat(100), MAX_CONTROL_LINE);
    }));

  test('row 84, split (description): a partial line over the limit across two reads', () =>
    withServer({ maxControlLine: 64 }, async (s) => {
      await checkClosed(s.port, [C0 + 'SUB ' + 'a'.repeat(40), 'a'.repeat(40)], MAX_CONTROL_LINE);
    }));

  test('max_control_line 64: 64 argument bytes pass, also split across reads', () =>
    withServer({ maxControlLine: 64 }, async (s) => {
      await checkOpen(s.port, C0 + 'SUB ' + 'a'.repeat(62) + ' 1\r\nPING\r\n', 'PONG\r\n');
      await checkOpen(
        s.port,
        [C0 + 'SUB ' + 'a'.repeat(40), 'a'.repeat(22) + ' 1\r\nPING\r\n'],
        'PONG\r\n',
      );
    }));

  test('max_control_line 64 (description): 65 argument bytes of SUB or UNSUB fail', () =>
    withServer({ maxControlLine: 64 }, async (s) => {
      await checkClosed(s.port, C0 + 'SUB ' + 'a'.repeat(63) + ' 1\r\nPING\r\n', MAX_CONTROL_LINE);
      await checkClosed(s.port, C0 + 'UNSUB ' + '1'.repeat(65) + '\r\nPING\r\n', MAX_CONTROL_LINE);
    }));

  test('max_control_line 64: spaces after the op name do not count, nor does PING', () =>
    withServer({ maxControlLine: 64 }, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'PUB' + ' '.repeat(100) + 'a'.repeat(62) + ' 0\r\n\r\nPING\r\n',
        'PONG\r\n',
      );
      await checkOpen(s.port, C0 + 'PING' + 'x'.repeat(200) + '\r\n', 'PONG\r\n');
    }));
});

describe('transcripts: max payload', () => {
  test('row 40: a declared size above max_payload fails before the payload', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'PUB foo 1048577\r\n', MAX_PAYLOAD);
    }));

  test('row 41: exactly max_payload passes', () =>
    withServer({}, async (s) => {
      const bytes = Buffer.concat([
        Buffer.from(C0 + 'PUB foo 1048576\r\n'),
        Buffer.alloc(1048576, 0x61),
        Buffer.from('\r\nPING\r\n'),
      ]);
      await checkOpen(s.port, bytes, 'PONG\r\n');
    }));

  test('a lower max_payload is advertised in INFO and enforced', () =>
    withServer({ maxPayload: 100 }, async (s) => {
      const c = await RawClient.open(s.port);
      assert.equal(c.infoJson().max_payload, 100);
      c.close();
      await checkOpen(
        s.port,
        C0 + 'PUB foo 100\r\n' + 'x'.repeat(100) + '\r\nPING\r\n',
        'PONG\r\n',
      );
      await checkClosed(s.port, C0 + 'PUB foo 101\r\n', MAX_PAYLOAD);
    }));
});

describe('transcripts: max subscriptions', () => {
  test('row 81: the third SUB gets an error, the connection stays open', () =>
    withServer({ maxSubscriptions: 2 }, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB bar.a 1\r\nSUB bar.b 2\r\nSUB bar.c 3\r\nPING\r\n',
        MAX_SUBS + 'PONG\r\n',
      );
    }));

  test('max subscriptions: the refused SUB is not registered, the others work', () =>
    withServer({ maxSubscriptions: 2 }, async (s) => {
      await checkOpen(
        s.port,
        C0 +
          'SUB bar.a 1\r\nSUB bar.b 2\r\nSUB bar.c 3\r\nPUB bar.a 1\r\nx\r\nPUB bar.c 1\r\ny\r\nPING\r\n',
        MAX_SUBS + 'MSG bar.a 1 1\r\nx\r\nPONG\r\n',
      );
    }));

  test('max subscriptions: after an UNSUB there is room again', () =>
    withServer({ maxSubscriptions: 2 }, async (s) => {
      await checkOpen(
        s.port,
        C0 +
          'SUB bar.a 1\r\nSUB bar.b 2\r\nSUB bar.c 3\r\nUNSUB 1\r\nSUB bar.c 3\r\nPUB bar.c 1\r\nx\r\nPING\r\n',
        MAX_SUBS + 'MSG bar.c 3 1\r\nx\r\nPONG\r\n',
      );
    }));

  test('max subscriptions, verbose: -ERR and no +OK for the refused SUB', () =>
    withServer({ maxSubscriptions: 2 }, async (s) => {
      await checkOpen(
        s.port,
        CV + 'SUB bar.a 1\r\nSUB bar.b 2\r\nSUB bar.c 3\r\nPING\r\n',
        '+OK\r\n+OK\r\n+OK\r\n' + MAX_SUBS + 'PONG\r\n',
      );
    }));

  test('at the limit, the limit is checked before a duplicate sid or a bad subject', () =>
    withServer({ maxSubscriptions: 2 }, async (s) => {
      await checkOpen(
        s.port,
        CV + 'SUB bar.a 1\r\nSUB bar.b 2\r\nSUB bar.x 2\r\nSUB bar..x 3\r\nPING\r\n',
        '+OK\r\n+OK\r\n+OK\r\n' + MAX_SUBS + MAX_SUBS + 'PONG\r\n',
      );
    }));
});

describe('transcripts: max connections', () => {
  test('row 82 (description): INFO first, then the error, then the close', () =>
    withServer({ maxConnections: 3 }, async (s) => {
      const clients = [
        await RawClient.open(s.port),
        await RawClient.open(s.port),
        await RawClient.open(s.port),
      ];
      try {
        const fourth = await RawClient.open(s.port);
        assert.match(fourth.info, /^INFO \{.*\} \r\n$/);
        assert.equal(fourth.infoJson().max_payload, 1048576);
        assert.equal(await fourth.waitClosed(), true);
        assert.equal(fourth.take(), "-ERR 'Maximum Connections Exceeded'\r\n");
        fourth.close();
        // The connections already in are untouched.
        assert.equal(await clients[1]!.exchange(C0 + 'PING\r\n'), 'PONG\r\n');
        // Once one leaves, a new one gets in.
        clients[0]!.close();
        let admitted = false;
        for (let i = 0; i < 50 && !admitted; i++) {
          await sleep(20);
          const c = await RawClient.open(s.port);
          c.send(C0 + 'PING\r\n');
          await c.waitFor((t) => t.length > 0);
          admitted = c.take() === 'PONG\r\n';
          c.close();
        }
        assert.equal(admitted, true, 'a new client is admitted after one left');
      } finally {
        for (const c of clients) c.close();
      }
    }));
});

describe('transcripts: stale connections', () => {
  test('row 83: ping_interval 1 s, ping_max 2: PING, PING, Stale Connection, close', () =>
    withServer({ pingInterval: 1000, pingMax: 2 }, async (s) => {
      const c = await RawClient.open(s.port);
      const t0 = Date.now();
      try {
        c.send('CONNECT {"verbose":false}\r\n');
        assert.equal(await c.waitFor((t) => t === 'PING\r\n', 3000), true);
        const first = Date.now() - t0;
        assert.ok(first >= 500 && first <= 2500, `first PING after ${first} ms`);
        assert.equal(await c.waitClosed(5000), true, 'closed as stale');
        const closedAt = Date.now() - t0;
        assert.ok(closedAt >= 1500 && closedAt <= 5000, `closed after ${closedAt} ms`);
        assert.equal(c.take(), "PING\r\nPING\r\n-ERR 'Stale Connection'\r\n");
      } finally {
        c.close();
      }
    }));

  test('after CONNECT, the first PING always goes out, then activity holds PINGs off', () =>
    withServer({ pingInterval: 400, pingMax: 2 }, async (s) => {
      const c = await RawClient.open(s.port);
      try {
        c.send(C0);
        for (let i = 0; i < 40; i++) {
          c.send('PUB foo 1\r\nx\r\n');
          await sleep(25);
        }
        assert.equal(c.take(), 'PING\r\n');
        assert.equal(c.closed, false);
      } finally {
        c.close();
      }
    }));

  test('without CONNECT, a busy client that never answers PING goes stale', () =>
    withServer({ pingInterval: 200, pingMax: 2 }, async (s) => {
      const c = await RawClient.open(s.port);
      try {
        // No CONNECT means verbose: every PUB gets +OK, left out below.
        for (let i = 0; i < 80 && !c.closed; i++) {
          c.send('PUB foo 1\r\nx\r\n');
          await sleep(25);
        }
        assert.equal(c.closed, true, 'closed as stale');
        assert.deepEqual(
          frames(c.take()).filter((f) => f !== '+OK\r\n'),
          ['PING\r\n', 'PING\r\n', "-ERR 'Stale Connection'\r\n"],
        );
      } finally {
        c.close();
      }
    }));

  test('a client that answers PING with PONG stays open', () =>
    withServer({ pingInterval: 200, pingMax: 2 }, async (s) => {
      const c = await RawClient.open(s.port);
      try {
        c.send(C0);
        let pings = 0;
        const deadline = Date.now() + 1200;
        while (Date.now() < deadline) {
          if (await c.waitFor((t) => t.includes('PING\r\n'), deadline - Date.now())) {
            assert.equal(c.take(), 'PING\r\n');
            pings++;
            c.send('PONG\r\n');
          }
        }
        assert.ok(pings >= 3, `${pings} PINGs answered`);
        assert.equal(c.closed, false);
      } finally {
        c.close();
      }
    }));
});

describe('transcripts: slow consumer', () => {
  // The server holds a publisher once a subscriber's backlog passes half of
  // max_pending, and cuts the subscriber off past max_pending or when its socket does
  // not drain within write_deadline; a short deadline keeps this test fast.
  const options = { maxPending: 256 * 1024, maxPayload: 64 * 1024, writeDeadline: 300 };

  test('description: a subscriber that never reads is cut off, others carry on', () =>
    withServer(options, async (s) => {
      // A plain socket for the subscriber, so that it can stop reading.
      const sub = connect({ port: s.port, host: '127.0.0.1' });
      // An object, so that the checks below see what the callbacks set.
      const got = { data: '', closed: false };
      sub.on('data', (d: Buffer) => (got.data += d.toString('latin1')));
      sub.on('close', () => (got.closed = true));
      sub.on('error', () => (got.closed = true));
      const other = await RawClient.open(s.port);
      const raw = connect({ port: s.port, host: '127.0.0.1' });
      raw.on('data', () => undefined);
      raw.on('error', () => undefined);
      try {
        sub.write(C0 + 'SUB foo 1\r\nPING\r\n');
        for (let i = 0; i < 100 && !got.data.endsWith('PONG\r\n'); i++) await sleep(10);
        assert.match(got.data, /^INFO .*\r\nPONG\r\n$/);
        sub.pause();
        assert.equal(await other.exchange(C0 + 'SUB bar 1\r\nPING\r\n'), 'PONG\r\n');

        // The kernel buffers a few MB before the server's backlog grows: push until
        // the server counts a slow consumer (64 MB or 5 s at most).
        raw.write(C0);
        const burst = Buffer.from(`PUB foo 8192\r\n${'x'.repeat(8192)}\r\n`.repeat(64));
        let sent = 0;
        const deadline = Date.now() + 5000;
        while (s.server.slowConsumers === 0 && sent < 64 * 1024 * 1024 && Date.now() < deadline) {
          if (!raw.write(burst)) await Promise.race([once(raw, 'drain'), sleep(50)]);
          sent += burst.length;
        }
        assert.equal(s.server.slowConsumers, 1, `cut off after ${sent} bytes`);

        // The held publisher is let go, and everyone else carries on.
        raw.write('PING\r\n');
        const pub = await RawClient.open(s.port);
        assert.equal(await pub.exchange(C0 + 'PUB bar 2\r\nok\r\nPING\r\n'), 'PONG\r\n');
        pub.close();
        const expected = 'MSG bar 1 2\r\nok\r\n';
        await other.waitFor((t) => t.includes(expected));
        // A keep-alive PING may come first if this machine is slow.
        assert.deepEqual(
          frames(other.take()).filter((f) => f !== 'PING\r\n'),
          [expected],
        );
        await checkOpen(s.port, C0 + 'PING\r\n', 'PONG\r\n');

        // The subscriber reads what reached it, then finds the connection closed; the
        // -ERR is best effort, but when it is there it is the last thing sent.
        sub.resume();
        for (let i = 0; i < 500 && !got.closed; i++) await sleep(10);
        assert.equal(got.closed, true, 'the slow consumer is closed');
        const tail = got.data.slice(-64);
        if (tail.includes('-ERR')) assert.ok(tail.endsWith("\r\n-ERR 'Slow Consumer'\r\n"), tail);
      } finally {
        sub.destroy();
        raw.destroy();
        other.close();
      }
    }));
});
