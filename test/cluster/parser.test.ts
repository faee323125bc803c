// The route parser on its own: every op, every split point, the queue forms of RMSG
// and HMSG, and the failures that close a route.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  RouteParseFailure,
  RouteParser,
  type RouteParserHandler,
} from '../../src/cluster/parser.js';

/** Records what the parser reports, as text. */
class Recorder implements RouteParserHandler {
  readonly events: string[] = [];

  onInfo(buf: Buffer, start: number, end: number): void {
    this.events.push(`INFO ${buf.toString('latin1', start, end)}`);
  }
  onConnect(buf: Buffer, start: number, end: number): void {
    this.events.push(`CONNECT ${buf.toString('latin1', start, end)}`);
  }
  onPing(): void {
    this.events.push('PING');
  }
  onPong(): void {
    this.events.push('PONG');
  }
  onErr(buf: Buffer, start: number, end: number): void {
    this.events.push(`ERR ${buf.toString('latin1', start, end)}`);
  }
  onSub(p: RouteParser): void {
    const b = p.argBuf;
    const q = p.queueStart >= 0 ? ` q=${b.toString('latin1', p.queueStart, p.queueEnd)}` : '';
    this.events.push(
      `RS+ ${b.toString('latin1', p.accountStart, p.accountEnd)} ${b.toString('latin1', p.subjectStart, p.subjectEnd)}${q}${p.weight > 0 ? ` w=${p.weight}` : ''}`,
    );
  }
  onUnsub(p: RouteParser): void {
    const b = p.argBuf;
    const q = p.queueStart >= 0 ? ` q=${b.toString('latin1', p.queueStart, p.queueEnd)}` : '';
    this.events.push(
      `RS- ${b.toString('latin1', p.accountStart, p.accountEnd)} ${b.toString('latin1', p.subjectStart, p.subjectEnd)}${q}`,
    );
  }
  onMsg(p: RouteParser): void {
    const b = p.argBuf;
    const parts = [
      p.hdr >= 0 ? 'HMSG' : 'RMSG',
      b.toString('latin1', p.accountStart, p.accountEnd),
      b.toString('latin1', p.subjectStart, p.subjectEnd),
    ];
    if (p.replyStart >= 0) parts.push(`reply=${b.toString('latin1', p.replyStart, p.replyEnd)}`);
    for (let i = 0; i < p.queueCount; i++) {
      const f = p.queueFirst + i;
      parts.push(`q=${b.toString('latin1', p.fieldStart[f], p.fieldEnd[f])}`);
    }
    if (p.hdr >= 0) parts.push(`hdr=${p.hdr}`);
    parts.push(`size=${b.toString('latin1', p.sizeStart, p.sizeEnd)}`);
    parts.push(JSON.stringify(p.payload.toString('latin1', p.payloadStart, p.payloadEnd)));
    this.events.push(parts.join(' '));
  }
  onFailure(kind: RouteParseFailure, detail: string): void {
    this.events.push(`FAIL ${kind} ${detail}`);
  }
}

function parseAll(text: string, chunk = 0): string[] {
  const r = new Recorder();
  const p = new RouteParser(r);
  const bytes = Buffer.from(text, 'latin1');
  if (chunk === 0) {
    p.parse(bytes);
  } else {
    for (let i = 0; i < bytes.length; i += chunk) p.parse(bytes.subarray(i, i + chunk));
  }
  return r.events;
}

const STREAM =
  'INFO {"server_id":"N1"}\r\n' +
  'CONNECT {"name":"N1"}\r\n' +
  'PING\r\npong\r\n+OK\r\n' +
  'RS+ $G foo\r\nRS+ $G bar q 3\r\nRS- $G foo\r\nRS- $G bar q\r\n' +
  'RMSG $G foo 5\r\nhello\r\n' +
  'RMSG $G foo reply 2\r\nhi\r\n' +
  'RMSG $G foo + reply q1 q2 2\r\nhi\r\n' +
  'RMSG $G foo | q1 0\r\n\r\n' +
  'HMSG $G foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\n' +
  'HMSG $G foo r 0 2\r\nhi\r\n' +
  'HMSG $G foo | q1 12 14\r\nNATS/1.0\r\n\r\nhi\r\n' +
  'rmsg acc x.y 1\nz\r\n' +
  "-ERR 'oops'\r\n";

const EXPECTED = [
  'INFO {"server_id":"N1"}',
  'CONNECT {"name":"N1"}',
  'PING',
  'PONG',
  'RS+ $G foo',
  'RS+ $G bar q=q w=3',
  'RS- $G foo',
  'RS- $G bar q=q',
  'RMSG $G foo size=5 "hello"',
  'RMSG $G foo reply=reply size=2 "hi"',
  'RMSG $G foo reply=reply q=q1 q=q2 size=2 "hi"',
  'RMSG $G foo q=q1 size=0 ""',
  'HMSG $G foo hdr=12 size=14 "NATS/1.0\\r\\n\\r\\nhi"',
  'RMSG $G foo reply=r size=2 "hi"',
  'HMSG $G foo q=q1 hdr=12 size=14 "NATS/1.0\\r\\n\\r\\nhi"',
  'RMSG acc x.y size=1 "z"',
  "ERR 'oops'",
];

describe('route parser', () => {
  it('reads every op in one chunk', () => {
    assert.deepEqual(parseAll(STREAM), EXPECTED);
  });

  it('reads every op split at every byte', () => {
    for (const chunk of [1, 2, 3, 7, 13]) assert.deepEqual(parseAll(STREAM, chunk), EXPECTED);
  });

  it('reads a large payload split across reads', () => {
    const body = 'x'.repeat(100_000);
    const events = parseAll(`RMSG $G big ${body.length}\r\n${body}\r\nPING\r\n`, 4096);
    assert.equal(events.length, 2);
    assert.ok(events[0]!.startsWith('RMSG $G big size=100000'));
    assert.equal(events[1], 'PING');
  });

  it('takes RS+ and RMSG with many queue groups', () => {
    const names = Array.from({ length: 40 }, (_, i) => `g${i}`);
    const events = parseAll(`RMSG $G s | ${names.join(' ')} 1\r\nx\r\n`);
    assert.equal(events[0], `RMSG $G s ${names.map((n) => `q=${n}`).join(' ')} size=1 "x"`);
  });

  const failures: [string, string, RouteParseFailure][] = [
    ['client PUB', 'PUB foo 1\r\nx\r\n', RouteParseFailure.clientProtocol],
    ['client SUB', 'SUB foo 1\r\n', RouteParseFailure.clientProtocol],
    ['client UNSUB', 'UNSUB 1\r\n', RouteParseFailure.clientProtocol],
    ['client HPUB', 'HPUB foo 0 1\r\nx\r\n', RouteParseFailure.clientProtocol],
    ['MSG', 'MSG foo 1 1\r\nx\r\n', RouteParseFailure.clientProtocol],
    ['unknown op', 'FOO bar\r\n', RouteParseFailure.unknownOp],
    ['leaf op (LS+ is not spoken here)', 'LS+ $G foo\r\n', RouteParseFailure.unknownOp],
    ['RS+ without a subject', 'RS+ $G\r\n', RouteParseFailure.badArguments],
    ['RS+ queue without weight', 'RS+ $G foo q\r\n', RouteParseFailure.badArguments],
    ['RS+ bad weight', 'RS+ $G foo q x\r\n', RouteParseFailure.badArguments],
    ['RS+ zero weight', 'RS+ $G foo q 0\r\n', RouteParseFailure.badArguments],
    ['RS+ too many fields', 'RS+ $G foo q 1 2\r\n', RouteParseFailure.badArguments],
    ['RS- too many fields', 'RS- $G foo q 1\r\n', RouteParseFailure.badArguments],
    ['RMSG without a size', 'RMSG $G foo\r\n', RouteParseFailure.badArguments],
    ['RMSG bad size', 'RMSG $G foo -1\r\n', RouteParseFailure.badArguments],
    ['RMSG bad reply indicator', 'RMSG $G foo * r q 1\r\nx\r\n', RouteParseFailure.badArguments],
    ['HMSG header above total', 'HMSG $G foo 5 2\r\nhi\r\n', RouteParseFailure.badArguments],
    ['payload without CRLF', 'RMSG $G foo 2\r\nhiXY', RouteParseFailure.badFraming],
  ];
  for (const [name, text, kind] of failures) {
    it(`fails on ${name}`, () => {
      const events = parseAll(text);
      assert.equal(events.length, 1, events.join('|'));
      assert.ok(events[0]!.startsWith(`FAIL ${kind} `), events[0]);
    });
  }

  it('stops for good after a failure', () => {
    const events = parseAll('FOO\r\nPING\r\n');
    assert.equal(events.length, 1);
  });

  it('holds ops behind a suspended CONNECT until resumed', () => {
    const r = new Recorder();
    const p = new RouteParser(r);
    const onConnect = r.onConnect.bind(r);
    r.onConnect = (b, s, e) => {
      onConnect(b, s, e);
      p.suspend();
    };
    p.parse(Buffer.from('CONNECT {}\r\nPING\r\n'));
    p.parse(Buffer.from('RS+ $G x\r\n'));
    assert.deepEqual(r.events, ['CONNECT {}']);
    p.resume();
    assert.deepEqual(r.events, ['CONNECT {}', 'PING', 'RS+ $G x']);
  });
});
