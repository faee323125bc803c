// §11 rows 1-31, 35 and 67-73: op names, whitespace, line endings, framing, argument
// counts and sizes, ops a client may not send. Every expectation was checked against
// nats-server 2.9.10; rows the contract table changes say "description".

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RawClient } from '../helpers/raw.js';
import { withServer } from '../helpers/server.js';
import { C0, CH, checkClosed, checkOpen, readReply, sleep } from './transcript.js';

const UNKNOWN = "-ERR 'Unknown Protocol Operation'\r\n";
// description: malformed arguments get 'Parser Error' (the reference closes silently).
const PARSER_ERROR = "-ERR 'Parser Error'\r\n";

describe('transcripts: PING and op names', () => {
  test('row 1: PING gets PONG and the connection stays open', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + 'PING\r\n', 'PONG\r\n');
    }));

  test('row 2: op names are case-insensitive (ping)', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + 'ping\r\n', 'PONG\r\n');
    }));

  test('row 3: PING ignores everything up to the newline (PINGxyz)', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + 'PINGxyz\r\n', 'PONG\r\n');
    }));

  test('row 4: a bare LF ends a control line (PING\\n)', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + 'PING\n', 'PONG\r\n');
    }));

  test('row 5: PING\\rPING\\r\\n is one PING', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + 'PING\rPING\r\n', 'PONG\r\n');
    }));

  test('PING followed by a TAB, and three PINGs in one write', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + 'PING\t\r\n', 'PONG\r\n');
      await checkOpen(s.port, C0 + 'PING\r\nPING\r\nPING\r\n', 'PONG\r\n'.repeat(3));
    }));

  test('row 12: every op name is case-insensitive letter by letter', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'sUb foo 1\r\npUb foo 2\r\nhi\r\nPiNg\r\n',
        'MSG foo 1 2\r\nhi\r\nPONG\r\n',
      );
    }));

  test('row 35: PING with 5000 junk bytes is not held to the control line limit', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + 'PING' + 'x'.repeat(5000) + '\r\n', 'PONG\r\n');
    }));
});

describe('transcripts: whitespace and line endings', () => {
  test('row 10: PUB with a reply subject', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nPUB foo bar 5\r\nhello\r\nPING\r\n',
        'MSG foo 1 bar 5\r\nhello\r\nPONG\r\n',
      );
    }));

  test('row 11: runs of spaces and TABs separate arguments, trailing ones are ignored', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB\t foo  \t 1\r\nPUB \t foo\t\t 5 \r\nhello\r\nPING\r\n',
        'MSG foo 1 5\r\nhello\r\nPONG\r\n',
      );
    }));

  test('a TAB right after PUB is a separator', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nPUB\tfoo 1\r\na\r\nPING\r\n',
        'MSG foo 1 1\r\na\r\nPONG\r\n',
      );
    }));

  test('row 13: LF alone ends SUB, PUB and PING lines', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\nPUB foo 2\nhi\r\nPING\n',
        'MSG foo 1 2\r\nhi\r\nPONG\r\n',
      );
    }));

  test('SUB foo 1\\r\\r\\n: an extra CR is a separator for SUB', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\r\nPUB foo 1\r\na\r\nPING\r\n',
        'MSG foo 1 1\r\na\r\nPONG\r\n',
      );
    }));

  test('row 14: a payload must end in CRLF, LF alone is an unknown op', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'SUB foo 1\r\nPUB foo 2\r\nhi\nPING\r\n', UNKNOWN);
    }));

  test('row 73: an op split across writes at any point', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        [C0 + 'SUB foo 1\r\nPU', 'B fo', 'o 5\r\nhello\r\nPI', 'NG\r\n'],
        'MSG foo 1 5\r\nhello\r\nPONG\r\n',
      );
    }));

  test('a payload split across writes, CR and LF in separate writes', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        [C0 + 'SUB foo 1\r\nPUB foo 12\r\nhel', 'lo wor', 'ld!\r', '\nPI', 'NG\r', '\n'],
        'MSG foo 1 12\r\nhello world!\r\nPONG\r\n',
      );
    }));

  test('a transcript sent one byte per write gives the same reply', () =>
    withServer({}, async (s) => {
      const bytes = CH + 'SUB foo 1\r\nHPUB foo r 18 20\r\nNATS/1.0\r\nA: B\r\n\r\nhi\r\nPING\r\n';
      const expected = 'HMSG foo 1 r 18 20\r\nNATS/1.0\r\nA: B\r\n\r\nhi\r\nPONG\r\n';
      await checkOpen(s.port, bytes.split(''), expected, 1);
    }));
});

describe('transcripts: unknown ops and framing errors', () => {
  test('row 15: an unknown op', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'FOO\r\n', UNKNOWN);
    }));

  test('row 16: a leading space', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + ' PING\r\n', UNKNOWN);
    }));

  test('row 17: an empty line', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + '\r\nPING\r\n', UNKNOWN);
    }));

  test('row 18: MSG from a client', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'MSG foo 1 2\r\nhi\r\n', UNKNOWN);
    }));

  test('row 19: route, account and leafnode ops from a client (RS+, A+, LS+)', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'RS+ $G foo\r\n', UNKNOWN);
      await checkClosed(s.port, C0 + 'A+ foo\r\n', UNKNOWN);
      await checkClosed(s.port, C0 + 'LS+ $G foo\r\n', UNKNOWN);
    }));

  test('row 20: PUB, SUB and UNSUB need a space after the op name', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'PUB\r\n', UNKNOWN);
      await checkClosed(s.port, C0 + 'SUB\r\n', UNKNOWN);
      await checkClosed(s.port, C0 + 'UNSUB\r\n', UNKNOWN);
    }));

  test('-ERR without a space and +OX are unknown ops', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + '-ERR\r\nPING\r\n', UNKNOWN);
      await checkClosed(s.port, C0 + '+OX\r\nPING\r\n', UNKNOWN);
    }));

  test('row 25: a payload longer than declared', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'PUB foo 2\r\nhello\r\n', UNKNOWN);
    }));

  test('row 25, split: the byte after the payload arrives in a later write', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, [C0 + 'PUB foo 2\r\nhi\r', 'X'], UNKNOWN);
    }));

  test('row 26: a payload shorter than declared waits for the rest', () =>
    withServer({}, async (s) => {
      const c = await RawClient.open(s.port);
      try {
        c.send(C0 + 'SUB foo 1\r\nPUB foo 5\r\nhi\r\n');
        await sleep(200);
        assert.equal(c.take(), '');
        assert.equal(c.closed, false);
        // The CRLF already sent is payload: three more bytes complete it.
        c.send('x\r\nPING\r\n');
        const expected = 'MSG foo 1 5\r\nhi\r\nx\r\nPONG\r\n';
        assert.equal(await readReply(c, expected), expected);
      } finally {
        c.close();
      }
    }));

  test('row 27: a bad byte where the payload CRLF should be', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'PUB foo 5\r\nhello\rX', UNKNOWN);
    }));

  test('HMSG with a payload is an unknown op after its (zero) payload', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, CH + 'HMSG foo 1 2 2\r\nhi\r\nPING\r\n', UNKNOWN);
    }));
});

describe('transcripts: malformed arguments', () => {
  test('row 21 (description): PUB with one argument gets Parser Error', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'PUB foo\r\n', PARSER_ERROR);
    }));

  test('row 22 (description): PUB with four arguments gets Parser Error', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'PUB foo bar baz 2\r\nhi\r\n', PARSER_ERROR);
    }));

  test('PUB with an empty subject (two spaces) counts one argument (description)', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'PUB  1\r\na\r\nPING\r\n', PARSER_ERROR);
    }));

  test('row 23 (description): non-numeric, negative or signed sizes get Parser Error', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'PUB foo abc\r\n', PARSER_ERROR);
      await checkClosed(s.port, C0 + 'PUB foo -1\r\n', PARSER_ERROR);
      await checkClosed(s.port, C0 + 'PUB foo +1\r\n', PARSER_ERROR);
    }));

  test('row 24 (description): a 10-digit size gets Parser Error', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'PUB foo 1000000000\r\n', PARSER_ERROR);
    }));

  test('a 9-digit size is a size: above max_payload', () =>
    withServer({}, async (s) => {
      await checkClosed(
        s.port,
        C0 + 'PUB foo 999999999\r\n',
        "-ERR 'Maximum Payload Violation'\r\n",
      );
    }));

  test('row 28 (description): wrong SUB and UNSUB argument counts get Parser Error', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'SUB foo\r\nPING\r\n', PARSER_ERROR);
      await checkClosed(s.port, C0 + 'SUB foo q 1 2\r\n', PARSER_ERROR);
      await checkClosed(s.port, C0 + 'UNSUB 1 2 3\r\n', PARSER_ERROR);
    }));

  test('row 29: UNSUB of an unknown sid is a no-op', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + 'UNSUB 99\r\nPING\r\n', 'PONG\r\n');
    }));

  test('row 30: a zero-size payload still needs its CRLF', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nPUB foo 0\r\n\r\nPING\r\n',
        'MSG foo 1 0\r\n\r\nPONG\r\n',
      );
    }));

  test('row 31: the size is echoed as the publisher wrote it (001)', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nPUB foo 001\r\na\r\nPING\r\n',
        'MSG foo 1 001\r\na\r\nPONG\r\n',
      );
    }));

  test('a payload may hold CRLF and NUL bytes', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        C0 + 'SUB foo 1\r\nPUB foo 4\r\n\r\n\0x\r\nPING\r\n',
        'MSG foo 1 4\r\n\r\n\0x\r\nPONG\r\n',
      );
    }));
});

describe('transcripts: ops a client may send and the server ignores', () => {
  test('row 67: -ERR from a client closes the connection without a reply', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + "-ERR 'x'\r\nPING\r\n", '');
    }));

  test('row 68: +OK, INFO {} and PONG from a client are ignored', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + '+OK\r\nPING\r\n', 'PONG\r\n');
      await checkOpen(s.port, C0 + '+OKxyz\r\nPING\r\n', 'PONG\r\n');
      await checkOpen(s.port, C0 + 'INFO {}\r\nPING\r\n', 'PONG\r\n');
      await checkOpen(s.port, C0 + 'PONG\r\nPING\r\n', 'PONG\r\n');
    }));

  test('INFO with bad JSON from a client (description): Parser Error', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'INFO {bad\r\nPING\r\n', PARSER_ERROR);
    }));

  test('row 69: HMSG from a client is parsed and swallowed', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, CH + 'HMSG foo 1 2 2\r\n\r\nPING\r\n', 'PONG\r\n');
      await checkOpen(s.port, C0 + 'HMSG foo 1 2 2\r\n\r\nPING\r\n', 'PONG\r\n');
    }));
});
