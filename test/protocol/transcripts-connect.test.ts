// §11 rows 6-9 and 36-39, and what the reference does around them: CONNECT defaults
// (verbose, pedantic and echo on), a second CONNECT, ops before CONNECT, bad CONNECT
// JSON, and where +OK falls among -ERR replies in verbose mode. Every expectation was
// checked against nats-server 2.9.10; rows the contract table changes say
// "description".

import { describe, test } from 'node:test';
import { withServer } from '../helpers/server.js';
import { C0, CV, checkClosed, checkOpen } from './transcript.js';

// description: malformed CONNECT JSON gets 'Parser Error' (the reference closes silently).
const PARSER_ERROR = "-ERR 'Parser Error'\r\n";
const OK = '+OK\r\n';

describe('transcripts: CONNECT', () => {
  test('row 6: CONNECT needs no space before its JSON, verbose acks it', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, 'CONNECT{"verbose":true}\r\nPING\r\n', '+OK\r\nPONG\r\n');
    }));

  test('connect in lower case, and a TAB before the JSON', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, 'connect {"verbose":true}\r\nPING\r\n', '+OK\r\nPONG\r\n');
      await checkOpen(s.port, 'CONNECT\t{"verbose":true}\r\nPING\r\n', '+OK\r\nPONG\r\n');
    }));

  test('row 7: CONNECT {} turns verbose and pedantic on', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        'CONNECT {}\r\nSUB foo 1\r\nPUB foo..x 1\r\nx\r\nPING\r\n',
        "+OK\r\n+OK\r\n-ERR 'Invalid Publish Subject'\r\n+OK\r\nPONG\r\n",
      );
    }));

  test('CONNECT {"pedantic":false} is still verbose', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        'CONNECT {"pedantic":false}\r\nSUB foo 1\r\nPING\r\n',
        '+OK\r\n+OK\r\nPONG\r\n',
      );
    }));

  test('CONNECT null is CONNECT {} (Go leaves the defaults alone)', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, 'CONNECT null\r\nPING\r\n', '+OK\r\nPONG\r\n');
    }));

  test('row 8: without CONNECT the defaults apply (verbose acks SUB and PUB)', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        'SUB foo 1\r\nPUB foo 2\r\nhi\r\nPING\r\n',
        '+OK\r\n+OK\r\nMSG foo 1 2\r\nhi\r\nPONG\r\n',
      );
    }));

  test('PING and PONG before CONNECT', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, 'PING\r\n', 'PONG\r\n');
      await checkOpen(s.port, 'PONG\r\nPING\r\n', 'PONG\r\n');
    }));

  test('a second CONNECT is processed again: verbose on', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, C0 + 'CONNECT {"verbose":true}\r\nPING\r\n', '+OK\r\nPONG\r\n');
    }));

  test('a second CONNECT is processed again: verbose off', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, CV + C0 + 'SUB foo 1\r\nPING\r\n', '+OK\r\nPONG\r\n');
    }));

  test('unknown CONNECT fields are ignored; user and pass without auth are accepted', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, 'CONNECT {"verbose":true,"zzz":1}\r\nPING\r\n', '+OK\r\nPONG\r\n');
      await checkOpen(
        s.port,
        'CONNECT {"verbose":true,"user":"a","pass":"b"}\r\nPING\r\n',
        '+OK\r\nPONG\r\n',
      );
    }));

  test('row 49: echo false keeps a connection from receiving its own messages', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        'CONNECT {"verbose":false,"echo":false}\r\nSUB foo 1\r\nPUB foo 2\r\nhi\r\nPING\r\n',
        'PONG\r\n',
      );
    }));

  test('row 36 (description): bad CONNECT JSON gets Parser Error', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, 'CONNECT {bad}\r\nPING\r\n', PARSER_ERROR);
      await checkClosed(s.port, 'CONNECT\r\nPING\r\n', PARSER_ERROR);
    }));

  test('CONNECT JSON that is not an object, has a wrong type or trailing bytes (description)', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, 'CONNECT []\r\nPING\r\n', PARSER_ERROR);
      await checkClosed(s.port, 'CONNECT "x"\r\nPING\r\n', PARSER_ERROR);
      await checkClosed(s.port, 'CONNECT {"verbose":"yes"}\r\nPING\r\n', PARSER_ERROR);
      await checkClosed(s.port, 'CONNECT {"verbose":true} x\r\nPING\r\n', PARSER_ERROR);
    }));

  test('row 37 (description): protocol 2 gets Invalid Client Protocol', () =>
    withServer({}, async (s) => {
      await checkClosed(
        s.port,
        'CONNECT {"protocol":2}\r\nPING\r\n',
        "-ERR 'Invalid Client Protocol'\r\n",
      );
    }));

  test('protocol -1 (description): Invalid Client Protocol; protocol 1 is fine', () =>
    withServer({}, async (s) => {
      await checkClosed(
        s.port,
        'CONNECT {"verbose":true,"protocol":-1}\r\nPING\r\n',
        "-ERR 'Invalid Client Protocol'\r\n",
      );
      await checkOpen(
        s.port,
        'CONNECT {"verbose":true,"protocol":1}\r\nPING\r\n',
        '+OK\r\nPONG\r\n',
      );
    }));

  test('row 38: no_responders without headers', () =>
    withServer({}, async (s) => {
      await checkClosed(
        s.port,
        'CONNECT {"no_responders":true}\r\nPING\r\n',
        "-ERR 'no responders requires headers support'\r\n",
      );
    }));

  test('row 39: account or new_account in CONNECT is an Authorization Violation', () =>
    withServer({}, async (s) => {
      await checkClosed(
        s.port,
        'CONNECT {"verbose":false,"account":"x"}\r\nPING\r\n',
        "-ERR 'Authorization Violation'\r\n",
      );
      await checkClosed(
        s.port,
        'CONNECT {"verbose":false,"new_account":true}\r\nPING\r\n',
        "-ERR 'Authorization Violation'\r\n",
      );
    }));
});

describe('transcripts: +OK in verbose mode', () => {
  test('row 9: +OK for CONNECT, SUB, PUB (before its MSG) and UNSUB, none for PING', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CV + 'SUB foo 1\r\nPUB foo 2\r\nhi\r\nUNSUB 1\r\nPING\r\n',
        '+OK\r\n+OK\r\n+OK\r\nMSG foo 1 2\r\nhi\r\n+OK\r\nPONG\r\n',
      );
    }));

  test('+OK for a PUB nobody receives, none for PONG', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, CV + 'PUB foo 1\r\na\r\nPONG\r\nPING\r\n', OK + OK + 'PONG\r\n');
    }));

  test('a SUB with an invalid subject gets -ERR and no +OK', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CV + 'SUB foo..bar 1\r\nPING\r\n',
        OK + "-ERR 'Invalid Subject'\r\nPONG\r\n",
      );
    }));

  test('a duplicate sid gets +OK and is ignored', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CV + 'SUB foo 1\r\nSUB bar 1\r\nPUB bar 1\r\na\r\nPING\r\n',
        OK + OK + OK + OK + 'PONG\r\n',
      );
    }));

  test('a duplicate sid is ignored before its subject is checked', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CV + 'SUB bar.a 1\r\nSUB bar..x 1\r\nPING\r\n',
        OK + OK + OK + 'PONG\r\n',
      );
    }));

  test('UNSUB of an unknown sid gets +OK, with or without a max', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, CV + 'UNSUB 9\r\nUNSUB 9 5\r\nPING\r\n', OK + OK + OK + 'PONG\r\n');
    }));

  test('row 70 in verbose mode: a reserved reply subject gets -ERR and no +OK', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CV + 'PUB foo _R_.x 1\r\na\r\nPUB foo $JS.ACK.x 1\r\nb\r\nPING\r\n',
        OK +
          `-ERR 'Permissions Violation for Publish with Reply of "_R_.x"'\r\n` +
          `-ERR 'Permissions Violation for Publish with Reply of "$JS.ACK.x"'\r\n` +
          'PONG\r\n',
      );
    }));

  test('pedantic invalid publish subject (description): -ERR, then +OK, message dropped', () =>
    withServer({}, async (s) => {
      // The reference sends the same bytes plus `MSG foo.* 1 1\r\na\r\n` after the +OK.
      await checkOpen(
        s.port,
        'CONNECT {"verbose":true,"pedantic":true}\r\nSUB > 1\r\nPUB foo.* 1\r\na\r\nPING\r\n',
        OK + OK + "-ERR 'Invalid Publish Subject'\r\n" + OK + 'PONG\r\n',
      );
    }));

  test('pedantic invalid subject and reserved reply: both errors, no +OK', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        'CONNECT {"verbose":true,"pedantic":true}\r\nSUB > 1\r\nPUB foo.* _R_.x 1\r\na\r\nPING\r\n',
        OK +
          OK +
          "-ERR 'Invalid Publish Subject'\r\n" +
          `-ERR 'Permissions Violation for Publish with Reply of "_R_.x"'\r\n` +
          'PONG\r\n',
      );
    }));

  test('HPUB gets +OK before its HMSG', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        'CONNECT {"verbose":true,"pedantic":false,"headers":true}\r\nSUB foo 1\r\n' +
          'HPUB foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n',
        OK + OK + OK + 'HMSG foo 1 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPONG\r\n',
      );
    }));
});
