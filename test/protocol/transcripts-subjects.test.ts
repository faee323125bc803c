// §11 rows 42-58 and 70-72: subject rules for SUB and PUB, wildcards, queue groups,
// UNSUB with and without a max, sids, reserved prefixes. Every expectation was
// checked against nats-server 2.9.10; rows the contract table changes say
// "description". Where several subscriptions match, delivery order is unspecified, so
// those rows compare multisets.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RawClient } from '../helpers/raw.js';
import { withServer } from '../helpers/server.js';
import { C0, CP, checkOpen, frames, readReply, sortedFrames } from './transcript.js';

const INVALID_SUBJECT = "-ERR 'Invalid Subject'\r\n";
const INVALID_PUBLISH = "-ERR 'Invalid Publish Subject'\r\n";

/** Sends bytes ending in PING and returns everything up to and including the PONG. */
async function untilPong(port: number, bytes: string): Promise<string> {
  const c = await RawClient.open(port);
  try {
    c.send(bytes);
    await c.waitFor((t) => t.endsWith('PONG\r\n'));
    const reply = c.take();
    c.send('PING\r\n');
    assert.equal(await readReply(c, 'PONG\r\n'), 'PONG\r\n');
    return reply;
  } finally {
    c.close();
  }
}

describe('transcripts: SUB subjects', () => {
  for (const subject of ['foo..bar', '.foo', 'foo.', 'foo.>.bar', '>.foo']) {
    test(`row 42: SUB ${subject} gets Invalid Subject and the connection stays open`, () =>
      withServer({}, async (s) => {
        await checkOpen(s.port, C0 + `SUB ${subject} 1\r\nPING\r\n`, INVALID_SUBJECT + 'PONG\r\n');
      }));
  }

  test('row 43: partial wildcards, *, >, foo.*.> and UTF-8 are valid SUB subjects', () =>
    withServer({}, async (s) => {
      const utf8 = Buffer.from('f\u00fc\u00df', 'utf8').toString('latin1');
      await checkOpen(
        s.port,
        C0 +
          `SUB foo* 1\r\nSUB foo.*bar 2\r\nSUB * 3\r\nSUB > 4\r\nSUB foo.*.> 5\r\nSUB ${utf8} 6\r\nPING\r\n`,
        'PONG\r\n',
      );
    }));

  test('foo* is a literal token, not a wildcard', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo* 1\r\nPUB foox 1\r\na\r\nPUB foo* 1\r\nb\r\nPING\r\n',
        'MSG foo* 1 1\r\nb\r\nPONG\r\n',
      );
    }));

  test('a NUL byte in a subject is carried as is', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB a\0b 1\r\nPUB a\0b 1\r\na\r\nPING\r\n',
        'MSG a\0b 1 1\r\na\r\nPONG\r\n',
      );
    }));

  test('sids are opaque strings and queue names are not validated', () =>
    withServer({}, async (s) => {
      const reply = await untilPong(
        s.port,
        C0 + 'SUB foo abc\r\nSUB foo q..x 1\r\nPUB foo 1\r\na\r\nPING\r\n',
      );
      assert.deepEqual(
        sortedFrames(reply),
        ['MSG foo 1 1\r\na\r\n', 'MSG foo abc 1\r\na\r\n', 'PONG\r\n'].sort(),
      );
    }));
});

describe('transcripts: PUB subjects', () => {
  test('row 44: PUB foo..bar is dropped silently without pedantic', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + 'SUB > 1\r\nPUB foo..bar 2\r\nhi\r\nPING\r\n', 'PONG\r\n');
    }));

  test('PUB foo. and PUB .foo are dropped silently without pedantic', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB > 1\r\nPUB foo. 1\r\na\r\nPUB .foo 1\r\nb\r\nPING\r\n',
        'PONG\r\n',
      );
    }));

  test('row 45: PUB foo.* without pedantic is routed, > receives it', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB > 1\r\nPUB foo.* 2\r\nhi\r\nPING\r\n',
        'MSG foo.* 1 2\r\nhi\r\nPONG\r\n',
      );
    }));

  test('PUB foo.* reaches foo.* but not foo.bar', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo.bar 1\r\nSUB foo.* 2\r\nPUB foo.* 1\r\na\r\nPING\r\n',
        'MSG foo.* 2 1\r\na\r\nPONG\r\n',
      );
    }));

  test('PUB > reaches > and * but not foo', () =>
    withServer({}, async (s) => {
      const reply = await untilPong(
        s.port,
        C0 + 'SUB * 1\r\nSUB > 2\r\nSUB foo 3\r\nPUB > 1\r\na\r\nPING\r\n',
      );
      assert.deepEqual(sortedFrames(reply), [
        'MSG > 1 1\r\na\r\n',
        'MSG > 2 1\r\na\r\n',
        'PONG\r\n',
      ]);
    }));

  test('row 46 (description): pedantic PUB foo.> gets -ERR and is dropped', () =>
    withServer({}, async (s) => {
      // The reference delivers it as well: `MSG foo.> 1 2\r\nhi\r\n` before the PONG.
      await checkOpen(
        s.port,
        CP + 'SUB > 1\r\nPUB foo.> 2\r\nhi\r\nPING\r\n',
        INVALID_PUBLISH + 'PONG\r\n',
      );
    }));

  test('row 47: pedantic PUB foo..bar gets -ERR', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CP + 'SUB > 1\r\nPUB foo..bar 2\r\nhi\r\nPING\r\n',
        INVALID_PUBLISH + 'PONG\r\n',
      );
    }));

  test('row 48: CONNECT {"verbose":false} is still pedantic', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        'CONNECT {"verbose":false}\r\nSUB foo.bar 1\r\nPUB foo.* 1\r\na\r\nPING\r\n',
        INVALID_PUBLISH + 'PONG\r\n',
      );
    }));

  test('row 56: > receives subjects starting with $', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB > 1\r\nPUB $foo.bar 1\r\na\r\nPING\r\n',
        'MSG $foo.bar 1 1\r\na\r\nPONG\r\n',
      );
    }));

  test('row 71: reply subjects are not validated', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nPUB foo a.* 1\r\na\r\nPUB foo a.> 1\r\nb\r\nPING\r\n',
        'MSG foo 1 a.* 1\r\na\r\nMSG foo 1 a.> 1\r\nb\r\nPONG\r\n',
      );
    }));

  test('row 72: subjects are case-sensitive', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB Foo 1\r\nPUB foo 1\r\na\r\nPUB Foo 1\r\nb\r\nPING\r\n',
        'MSG Foo 1 1\r\nb\r\nPONG\r\n',
      );
    }));
});

describe('transcripts: reserved prefixes', () => {
  test('row 70: a reply subject starting with _R_. is a permissions violation', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'PUB foo _R_.x 1\r\na\r\nPING\r\n',
        `-ERR 'Permissions Violation for Publish with Reply of "_R_.x"'\r\nPONG\r\n`,
      );
    }));

  test('_R_ alone and $JS.ACK. with nothing after it are ordinary replies', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nPUB foo _R_ 1\r\na\r\nPUB foo $JS.ACK. 1\r\nb\r\nPING\r\n',
        'MSG foo 1 _R_ 1\r\na\r\nMSG foo 1 $JS.ACK. 1\r\nb\r\nPONG\r\n',
      );
    }));

  // nats-server 2.9.10's answer to the same bytes.
  test('a reply starting with $JS.ACK. and more is a permissions violation; $JS.ACKx. is not', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nPUB foo $JS.ACK.x 1\r\na\r\nPUB foo $JS.ACKx.y 1\r\nb\r\nPING\r\n',
        `-ERR 'Permissions Violation for Publish with Reply of "$JS.ACK.x"'\r\n` +
          'MSG foo 1 $JS.ACKx.y 1\r\nb\r\nPONG\r\n',
      );
    }));

  test('publishing to _GR_.x, or with reply _GR_.x, is a permissions violation', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB > 1\r\nPUB _GR_.x 1\r\na\r\nPUB foo _GR_.x 1\r\nb\r\nPING\r\n',
        `-ERR 'Permissions Violation for Publish to "_GR_.x"'\r\n` +
          `-ERR 'Permissions Violation for Publish with Reply of "_GR_.x"'\r\n` +
          'PONG\r\n',
      );
    }));

  test('$GNR. is not reserved, nor is a bare _GR_. reply', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB > 1\r\nPUB $GNR.a.b.c 1\r\na\r\nPUB foo _GR_. 1\r\nb\r\nPING\r\n',
        'MSG $GNR.a.b.c 1 1\r\na\r\nMSG foo 1 _GR_. 1\r\nb\r\nPONG\r\n',
      );
    }));
});

describe('transcripts: matching and queue groups', () => {
  test('row 53: a duplicate sid is ignored, the first subscription stays', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nSUB bar 1\r\nPUB foo 1\r\na\r\nPUB bar 1\r\nb\r\nPING\r\n',
        'MSG foo 1 1\r\na\r\nPONG\r\n',
      );
    }));

  test('row 54: foo.*, foo.> and > all receive foo.bar (any order)', () =>
    withServer({}, async (s) => {
      const reply = await untilPong(
        s.port,
        C0 + 'SUB foo.* 1\r\nSUB foo.> 2\r\nSUB > 3\r\nPUB foo.bar 1\r\na\r\nPING\r\n',
      );
      const f = frames(reply);
      assert.equal(f.at(-1), 'PONG\r\n');
      assert.deepEqual(f.slice(0, -1).sort(), [
        'MSG foo.bar 1 1\r\na\r\n',
        'MSG foo.bar 2 1\r\na\r\n',
        'MSG foo.bar 3 1\r\na\r\n',
      ]);
    }));

  test('row 55: foo.> does not match foo, matches foo.a.b', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo.> 1\r\nPUB foo 1\r\na\r\nPUB foo.a.b 1\r\nb\r\nPING\r\n',
        'MSG foo.a.b 1 1\r\nb\r\nPONG\r\n',
      );
    }));

  test('row 57: one member of a queue group plus every plain subscription', () =>
    withServer({}, async (s) => {
      const reply = await untilPong(
        s.port,
        C0 + 'SUB foo q 1\r\nSUB foo q 2\r\nSUB foo 3\r\nPUB foo 1\r\na\r\nPING\r\n',
      );
      const f = frames(reply);
      assert.equal(f.at(-1), 'PONG\r\n');
      const msgs = f.slice(0, -1).sort();
      assert.equal(msgs.length, 2);
      assert.ok(msgs.includes('MSG foo 3 1\r\na\r\n'), reply);
      assert.ok(
        msgs.includes('MSG foo 1 1\r\na\r\n') !== msgs.includes('MSG foo 2 1\r\na\r\n'),
        `exactly one queue member: ${reply}`,
      );
    }));

  test('row 58: one member of each queue group', () =>
    withServer({}, async (s) => {
      const reply = await untilPong(
        s.port,
        C0 + 'SUB foo g1 1\r\nSUB foo g2 2\r\nSUB foo 3\r\nPUB foo 1\r\na\r\nPING\r\n',
      );
      const f = frames(reply);
      assert.equal(f.at(-1), 'PONG\r\n');
      assert.deepEqual(f.slice(0, -1).sort(), [
        'MSG foo 1 1\r\na\r\n',
        'MSG foo 2 1\r\na\r\n',
        'MSG foo 3 1\r\na\r\n',
      ]);
    }));
});

describe('transcripts: UNSUB', () => {
  test('row 50: UNSUB 1 2 before publishing three: two MSGs', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nUNSUB 1 2\r\n' + 'PUB foo 1\r\nx\r\n'.repeat(3) + 'PING\r\n',
        'MSG foo 1 1\r\nx\r\n'.repeat(2) + 'PONG\r\n',
      );
    }));

  test('row 51: UNSUB 1 1 after two messages removes it at once', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 +
          'SUB foo 1\r\nPUB foo 1\r\na\r\nPUB foo 1\r\nb\r\nUNSUB 1 1\r\nPUB foo 1\r\nc\r\nPING\r\n',
        'MSG foo 1 1\r\na\r\nMSG foo 1 1\r\nb\r\nPONG\r\n',
      );
    }));

  for (const max of ['0', '-1', 'abc', '00', '1000000000']) {
    test(`row 52: UNSUB 1 ${max} removes the subscription at once`, () =>
      withServer({}, async (s) => {
        await checkOpen(
          s.port,
          C0 + `SUB foo 1\r\nUNSUB 1 ${max}\r\nPUB foo 1\r\na\r\nPING\r\n`,
          'PONG\r\n',
        );
      }));
  }

  test('a sid can be used again after UNSUB', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nUNSUB 1\r\nSUB bar 1\r\nPUB bar 1\r\na\r\nPUB foo 1\r\nb\r\nPING\r\n',
        'MSG bar 1 1\r\na\r\nPONG\r\n',
      );
    }));

  test('a sid can be used again once its max was reached', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nUNSUB 1 1\r\nPUB foo 1\r\na\r\nSUB foo 1\r\nPUB foo 1\r\nb\r\nPING\r\n',
        'MSG foo 1 1\r\na\r\nMSG foo 1 1\r\nb\r\nPONG\r\n',
      );
    }));
});
