// Malformed and hostile input against an embedded server over raw sockets: random
// bytes, oversized declarations, lines that never end, bad CONNECT JSON. The server
// must answer with valid ops only, close where the spec says so, keep its memory
// bounded and go on serving everyone else.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import type { RunningServer } from '../../src/index.js';
import { ErrText } from '../../src/protocol/errors.js';
import type { Client } from '../../src/server/client.js';
import { C0, RawClient } from '../helpers/raw.js';
import { withServer } from '../helpers/server.js';

const ERR_TEXTS = new Set<string>(Object.values(ErrText));

/**
 * Checks that `text` is a run of whole server ops: +OK, -ERR with a known text, PING,
 * PONG, INFO, MSG or HMSG with their payloads. Returns the -ERR texts seen.
 */
function serverOps(text: string): string[] {
  const errs: string[] = [];
  let rest = text;
  while (rest.length > 0) {
    const fixed = ['+OK\r\n', 'PING\r\n', 'PONG\r\n'].find((op) => rest.startsWith(op));
    if (fixed !== undefined) {
      rest = rest.slice(fixed.length);
      continue;
    }
    let m = /^-ERR '([^'\r\n]*)'\r\n/.exec(rest);
    if (m !== null) {
      const t = m[1]!;
      assert.ok(ERR_TEXTS.has(t) || t.startsWith('Permissions Violation'), `unknown -ERR ${t}`);
      errs.push(t);
      rest = rest.slice(m[0].length);
      continue;
    }
    m = /^INFO (\{[^\r\n]*\}) \r\n/.exec(rest);
    if (m !== null) {
      JSON.parse(m[1]!);
      rest = rest.slice(m[0].length);
      continue;
    }
    // Subjects may hold a CR (only the line's last one is dropped), never LF or blanks.
    const tok = '([^ \\t\\n]+)';
    m = new RegExp(`^MSG ${tok} ${tok}(?: ${tok})? (\\d+)\\r\\n`).exec(rest);
    let size = -1;
    if (m !== null) {
      size = Number(m[4]);
    } else {
      m = new RegExp(`^HMSG ${tok} ${tok}(?: ${tok})? (\\d+) (\\d+)\\r\\n`).exec(rest);
      if (m !== null) {
        size = Number(m[5]);
        assert.ok(Number(m[4]) <= size, 'HMSG header size above total');
      }
    }
    assert.ok(m !== null, `not a server op: ${JSON.stringify(rest.slice(0, 80))}`);
    const end = m[0].length + size;
    assert.equal(rest.slice(end, end + 2), '\r\n', 'MSG payload not followed by CRLF');
    rest = rest.slice(end + 2);
  }
  return errs;
}

/** A fresh connection still gets PONG: the server is alive and serving. */
async function assertServing(s: RunningServer): Promise<void> {
  const c = await RawClient.open(s.port);
  try {
    assert.equal(await c.exchange(C0 + 'PING\r\n'), 'PONG\r\n');
  } finally {
    c.close();
  }
}

/** The server's side of the newest connection. */
function serverSide(s: RunningServer): Client {
  const clients = [...s.server.clients.values()].filter((c) => c.kind === 'client');
  const c = clients[clients.length - 1];
  assert.ok(c !== undefined, 'no client connection on the server');
  return c;
}

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(5);
  }
}

const MB = 1024 * 1024;

/** Buffers grew by less than 8 MB and RSS by less than 32 MB since `before`. */
function assertBoundedSince(before: NodeJS.MemoryUsage): void {
  const after = process.memoryUsage();
  assert.ok(
    after.arrayBuffers - before.arrayBuffers < 8 * MB,
    `buffers grew by ${after.arrayBuffers - before.arrayBuffers}`,
  );
  assert.ok(after.rss - before.rss < 32 * MB, `rss grew by ${after.rss - before.rss}`);
}

describe('malformed input over raw sockets', () => {
  test('random bytes: valid replies only, and the server keeps serving', async () => {
    await withServer({ maxPayload: 4096, maxControlLine: 256 }, async (s) => {
      const subsAtStart = s.server.globalAccount.sublist.size;
      const b = (t: string) => Buffer.from(t, 'latin1');
      const opWord = fc.constantFrom(
        ...['PUB ', 'HPUB ', 'SUB ', 'UNSUB ', 'PING', 'PONG', '+OK', '-ERR ', 'CONNECT ', 'INFO '],
        ...['MSG ', 'HMSG ', 'pub\t', 'sub  ', 'P', 'HP', 'CONN', 'U'],
      );
      const argWord = fc.constantFrom(
        ...['foo', 'foo.bar', 'foo.*', '>', 'foo..bar', 'q', 'r', '_R_.x', ' ', '\t', '0', '1'],
        ...['2', '5', '12', '001', '-1', 'hello', '{}', '{"verbose":true,"headers":true}'],
        ...['{"pedantic":true}', '{"echo":false}', '\r\n', '\r', '\0'],
      );
      const junk = fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a));
      // Op-shaped lines reach deep into the parser; raw junk hits every first byte.
      const line = fc
        .tuple(
          opWord,
          fc.array(
            fc.oneof({ weight: 4, arbitrary: argWord }, { weight: 1, arbitrary: fc.string() }),
            {
              maxLength: 6,
            },
          ),
          fc.constantFrom('\r\n', '\n', ''),
        )
        .map(([op, args, eol]) => b(op + args.join('') + eol));
      const pub = fc
        .tuple(fc.constantFrom('foo', 'foo.bar', 'x.y'), fc.uint8Array({ maxLength: 40 }))
        .map(([subj, p]) => Buffer.concat([b(`PUB ${subj} ${p.length}\r\n`), p, b('\r\n')]));
      const fragment = fc.oneof(
        { weight: 4, arbitrary: line },
        { weight: 2, arbitrary: pub },
        { weight: 1, arbitrary: junk },
      );
      await fc.assert(
        fc.asyncProperty(fc.array(fragment, { maxLength: 12 }), async (parts) => {
          const c = await RawClient.open(s.port);
          try {
            c.send(C0 + 'SUB > 1\r\nSUB foo q 2\r\n');
            c.send(Buffer.concat(parts));
            // Either the server closes, or it has answered everything well within this.
            await c.waitClosed(40);
            serverOps(c.take());
          } finally {
            c.close();
          }
          await assertServing(s);
        }),
        { numRuns: 100 },
      );
      // Every connection is gone, and so are its subscriptions.
      await until(() => s.server.clients.size === 0);
      assert.equal(s.server.globalAccount.sublist.size, subsAtStart);
    });
  });

  test('a 100 MB payload declaration is refused before any of it is read or allocated', async () => {
    await withServer({}, async (s) => {
      const c = await RawClient.open(s.port);
      const before = process.memoryUsage();
      c.send(C0 + 'PUB foo 104857600\r\n');
      assert.ok(await c.waitClosed());
      assert.equal(c.take(), "-ERR 'Maximum Payload Violation'\r\n");
      assertBoundedSince(before);
      await assertServing(s);
    });
  });

  test('a control line that never ends: Maximum Control Line Exceeded (description), close, bounded memory', async () => {
    await withServer({}, async (s) => {
      const c = await RawClient.open(s.port);
      c.send(C0);
      const before = process.memoryUsage();
      const chunk = Buffer.alloc(16 * 1024, 'a');
      c.send('SUB ');
      for (let sent = 0; sent < MB && !c.closed; sent += chunk.length) {
        c.send(chunk);
        await sleep(0);
      }
      assert.ok(await c.waitClosed());
      assert.equal(c.take(), "-ERR 'Maximum Control Line Exceeded'\r\n");
      assertBoundedSince(before);
      await assertServing(s);
    });
  });

  test('a PING line that never ends is skipped, not buffered', async () => {
    await withServer({}, async (s) => {
      const c = await RawClient.open(s.port);
      c.send(C0 + 'PING');
      const conn = serverSide(s);
      const socket = conn.socket!;
      const chunk = Buffer.alloc(16 * 1024, 'j');
      const before = process.memoryUsage();
      let sent = 0;
      while (sent < MB) {
        c.send(chunk);
        sent += chunk.length;
        if (sent % (256 * 1024) === 0) {
          const target = sent;
          await until(() => socket.bytesRead >= target);
          assert.equal(conn.parser.bufferedBytes, 0, `parser holds junk after ${target} bytes`);
        }
      }
      await until(() => socket.bytesRead >= sent + C0.length + 4);
      assert.equal(conn.parser.bufferedBytes, 0);
      assert.ok(!conn.closed);
      assert.equal(c.take(), '');
      const after = process.memoryUsage();
      assert.ok(after.rss - before.rss < 32 * MB, `rss grew by ${after.rss - before.rss}`);
      // The junk ends with the line: one PONG for it, then the next op as usual.
      assert.equal(await c.exchange('\r\nPING\r\n', 'PONG\r\nPONG\r\n'), 'PONG\r\nPONG\r\n');
      c.close();
    });
  });

  test('CONNECT with a 1 MB name is refused (Maximum Control Line Exceeded, description)', async () => {
    await withServer({}, async (s) => {
      const c = await RawClient.open(s.port);
      c.send('CONNECT {"verbose":false,"name":"');
      const chunk = Buffer.alloc(64 * 1024, 'x');
      for (let sent = 0; sent < MB && !c.closed; sent += chunk.length) {
        c.send(chunk);
        await sleep(0);
      }
      c.send('"}\r\nPING\r\n');
      assert.ok(await c.waitClosed());
      assert.equal(c.take(), "-ERR 'Maximum Control Line Exceeded'\r\n");
      await assertServing(s);
    });
  });

  test('garbage JSON and wrong JSON types in CONNECT: Parser Error (description), close', async () => {
    await withServer({}, async (s) => {
      for (const json of [
        '{bad}',
        '',
        '{"verbose":false',
        // (`null` is accepted: Go's json.Unmarshal leaves the defaults, as the reference.)
        '[]',
        '"connect"',
        '42',
        '{"verbose":"yes"}',
        '{"pedantic":1}',
        '{"echo":"false"}',
        '{"headers":{}}',
        '{"name":5}',
        '{"user":["a"]}',
        '{"auth_token":true}',
        '{"protocol":"1"}',
        '{"protocol":1.5}',
        '{"verbose":false}{"verbose":true}',
      ]) {
        const c = await RawClient.open(s.port);
        c.send(`CONNECT ${json}\r\nPING\r\n`);
        assert.ok(await c.waitClosed(), json);
        assert.equal(c.take(), "-ERR 'Parser Error'\r\n", json);
      }
      await assertServing(s);
    });
  });

  test('a subject with an empty token reaches nobody, even after a > subscription', async () => {
    await withServer({}, async (s) => {
      const c = await RawClient.open(s.port);
      // The first publish caches an empty result; the `>` subscription used to be
      // patched into it, so the second one was delivered.
      const reply = await c.exchange(
        C0 +
          'PUB foo..bar 2\r\nhi\r\nSUB > 1\r\nPUB foo..bar 2\r\nhi\r\nPUB foo. 2\r\nhi\r\nPING\r\n',
      );
      assert.equal(reply, 'PONG\r\n');
      c.close();
    });
  });

  test('malformed arguments over the wire: Parser Error (description), close', async () => {
    await withServer({}, async (s) => {
      for (const bad of [
        'PUB foo\r\n',
        'PUB foo bar baz 2\r\n',
        'PUB foo abc\r\n',
        'PUB foo -1\r\n',
        'PUB foo 1000000000\r\n',
        'SUB foo\r\n',
        'SUB foo q 1 2\r\n',
        'UNSUB 1 2 3\r\n',
      ]) {
        const c = await RawClient.open(s.port);
        c.send(C0 + bad + 'PING\r\n');
        assert.ok(await c.waitClosed(), bad);
        assert.equal(c.take(), "-ERR 'Parser Error'\r\n", bad);
      }
      await assertServing(s);
    });
  });
});
