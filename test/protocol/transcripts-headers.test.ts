// §11 rows 59-66: HPUB and HMSG, header sizes, subscribers without headers support,
// and the no-responders reply. Every expectation was checked against nats-server
// 2.9.10; rows the contract table changes say "description".

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RawClient } from '../helpers/raw.js';
import { withServer } from '../helpers/server.js';
import { C0, CH, checkClosed, checkOpen, readReply } from './transcript.js';

// description: malformed arguments get 'Parser Error' (the reference closes silently).
const PARSER_ERROR = "-ERR 'Parser Error'\r\n";
const CNR = 'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n';
const NO_RESPONDERS = (sid: string): string =>
  `HMSG _INBOX.x ${sid} 16 16\r\nNATS/1.0 503\r\n\r\n\r\n`;

describe('transcripts: HPUB', () => {
  test('row 59: HPUB without headers:true closes the connection silently', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, C0 + 'HPUB foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\n', '');
    }));

  test('HPUB before any CONNECT closes the connection silently', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, 'HPUB foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\n', '');
    }));

  test('row 60: HPUB is delivered as HMSG to a subscriber with headers', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CH + 'SUB foo 1\r\nHPUB foo 18 20\r\nNATS/1.0\r\nA: B\r\n\r\nhi\r\nPING\r\n',
        'HMSG foo 1 18 20\r\nNATS/1.0\r\nA: B\r\n\r\nhi\r\nPONG\r\n',
      );
    }));

  test('row 61: HPUB with a reply subject', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CH + 'SUB foo 1\r\nHPUB foo rep 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n',
        'HMSG foo 1 rep 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPONG\r\n',
      );
    }));

  test('row 62: a header size of 0 is delivered as a plain MSG', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CH + 'SUB foo 1\r\nHPUB foo 0 2\r\nhi\r\nPING\r\n',
        'MSG foo 1 2\r\nhi\r\nPONG\r\n',
      );
    }));

  test('the header block is not validated', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CH + 'SUB foo 1\r\nHPUB foo 4 6\r\nabcdhi\r\nPING\r\n',
        'HMSG foo 1 4 6\r\nabcdhi\r\nPONG\r\n',
      );
    }));

  test('headers only: total equals the header size', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CH + 'SUB foo 1\r\nHPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\nPING\r\n',
        'HMSG foo 1 12 12\r\nNATS/1.0\r\n\r\n\r\nPONG\r\n',
      );
    }));

  test('both HPUB sizes are echoed as the publisher wrote them', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CH + 'SUB foo 1\r\nHPUB foo 012 0014\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n',
        'HMSG foo 1 012 0014\r\nNATS/1.0\r\n\r\nhi\r\nPONG\r\n',
      );
    }));

  test('row 63 (description): a header size above the total gets Parser Error', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, CH + 'HPUB foo 14 12\r\n', PARSER_ERROR);
    }));

  test('HPUB with a bad header size or a wrong count (description): Parser Error', () =>
    withServer({}, async (s) => {
      await checkClosed(s.port, CH + 'HPUB foo x 14\r\n', PARSER_ERROR);
      await checkClosed(s.port, CH + 'HPUB foo 14\r\n', PARSER_ERROR);
      await checkClosed(s.port, CH + 'HPUB foo a b 1 2\r\n', PARSER_ERROR);
    }));

  test('HPUB: the total size is held to max_payload', () =>
    withServer({}, async (s) => {
      const violation = "-ERR 'Maximum Payload Violation'\r\n";
      await checkClosed(s.port, CH + 'HPUB foo 12 1048577\r\n', violation);
      await checkClosed(s.port, CH + 'HPUB foo 1048577 1048577\r\n', violation);
    }));

  test('row 64: a subscriber without headers gets the payload alone as MSG', () =>
    withServer({}, async (s) => {
      const sub = await RawClient.open(s.port);
      const pub = await RawClient.open(s.port);
      try {
        assert.equal(await sub.exchange(C0 + 'SUB foo 1\r\nPING\r\n'), 'PONG\r\n');
        pub.send(CH + 'HPUB foo r 18 20\r\nNATS/1.0\r\nA: B\r\n\r\nhi\r\nPING\r\n');
        assert.equal(await readReply(pub, 'PONG\r\n'), 'PONG\r\n');
        assert.equal(await readReply(sub, 'MSG foo 1 r 2\r\nhi\r\n'), 'MSG foo 1 r 2\r\nhi\r\n');
        assert.equal(await sub.exchange('PING\r\n'), 'PONG\r\n');
      } finally {
        sub.close();
        pub.close();
      }
    }));
});

describe('transcripts: no responders', () => {
  test('row 65: no receivers and a matching plain sub on the publisher: HMSG 503', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CNR + 'SUB _INBOX.x 1\r\nPUB nobody _INBOX.x 2\r\nhi\r\nPING\r\n',
        NO_RESPONDERS('1') + 'PONG\r\n',
      );
    }));

  test('row 66: no subscription on the reply subject: nothing', () =>
    withServer({}, async (s) => {
      await checkOpen(s.port, CNR + 'PUB nobody _INBOX.x 2\r\nhi\r\nPING\r\n', 'PONG\r\n');
    }));

  test('a wildcard inbox subscription gets the 503 under its own sid', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CNR + 'SUB _INBOX.* 7\r\nPUB nobody _INBOX.x 2\r\nhi\r\nPING\r\n',
        NO_RESPONDERS('7') + 'PONG\r\n',
      );
    }));

  test('HPUB with a reply and no receivers gets the 503 too', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CNR + 'SUB _INBOX.x 1\r\nHPUB nobody _INBOX.x 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n',
        NO_RESPONDERS('1') + 'PONG\r\n',
      );
    }));

  test('no 503 for a queue subscription on the reply, nor without a reply', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        CNR + 'SUB _INBOX.x q 1\r\nPUB nobody _INBOX.x 2\r\nhi\r\nPING\r\n',
        'PONG\r\n',
      );
      await checkOpen(s.port, CNR + 'SUB _INBOX.x 1\r\nPUB nobody 2\r\nhi\r\nPING\r\n', 'PONG\r\n');
    }));

  test('verbose: +OK for the PUB comes before the 503; echo false still gets it', () =>
    withServer({}, async (s) => {
      await checkOpen(
        s.port,
        'CONNECT {"verbose":true,"pedantic":false,"headers":true,"no_responders":true}\r\n' +
          'SUB _INBOX.x 1\r\nPUB nobody _INBOX.x 2\r\nhi\r\nPING\r\n',
        '+OK\r\n+OK\r\n+OK\r\n' + NO_RESPONDERS('1') + 'PONG\r\n',
      );
      await checkOpen(
        s.port,
        'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true,' +
          '"echo":false}\r\nSUB _INBOX.x 1\r\nPUB nobody _INBOX.x 2\r\nhi\r\nPING\r\n',
        NO_RESPONDERS('1') + 'PONG\r\n',
      );
    }));
});
