// The parser on its own: every op, every chunk boundary, every failure. A recording
// handler turns each callback into a plain value, so a stream fed whole, one byte at
// a time, or split anywhere must give the same list of events.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Parser, ParseFailure, type ParserHandler, parseSize } from '../../src/protocol/parser.js';

type Event =
  | { op: 'CONNECT' | 'INFO' | '-ERR'; arg: string }
  | { op: 'PING' | 'PONG' }
  | { op: 'SUB' | 'UNSUB'; fields: string[] }
  | {
      op: 'MSG';
      subject: string;
      reply: string | null;
      /** -1 for PUB (and for HPUB with a zero header size). */
      hdr: number;
      size: number;
      /** The size bytes as sent, echoed in MSG. */
      sizeRaw: string;
      payload: string;
    }
  | { op: 'FAIL'; kind: ParseFailure };

const FAILURE_NAMES = Object.fromEntries(
  Object.entries(ParseFailure).map(([name, kind]) => [kind, name]),
) as Record<ParseFailure, string>;

/** Copies everything out of the callbacks: argument bytes are only valid during them. */
class Recorder implements ParserHandler {
  readonly events: Event[] = [];

  onConnect(buf: Buffer, start: number, end: number): void {
    this.events.push({ op: 'CONNECT', arg: buf.toString('latin1', start, end) });
  }
  onInfo(buf: Buffer, start: number, end: number): void {
    this.events.push({ op: 'INFO', arg: buf.toString('latin1', start, end) });
  }
  onErr(buf: Buffer, start: number, end: number): void {
    this.events.push({ op: '-ERR', arg: buf.toString('latin1', start, end) });
  }
  onPing(): void {
    this.events.push({ op: 'PING' });
  }
  onPong(): void {
    this.events.push({ op: 'PONG' });
  }
  onSub(p: Parser): void {
    this.events.push({ op: 'SUB', fields: fields(p) });
  }
  onUnsub(p: Parser): void {
    this.events.push({ op: 'UNSUB', fields: fields(p) });
  }
  onMsg(p: Parser): void {
    const b = p.argBuf;
    this.events.push({
      op: 'MSG',
      subject: b.toString('latin1', p.subjectStart, p.subjectEnd),
      reply: p.replyStart < 0 ? null : b.toString('latin1', p.replyStart, p.replyEnd),
      hdr: p.hdr,
      size: p.size,
      sizeRaw: b.toString('latin1', p.sizeStart, p.sizeEnd),
      payload: p.payload.toString('latin1', p.payloadStart, p.payloadEnd),
    });
  }
  onFailure(kind: ParseFailure): void {
    this.events.push({ op: 'FAIL', kind });
  }
}

function fields(p: Parser): string[] {
  const out: string[] = [];
  for (let i = 0; i < p.fieldCount; i++) {
    out.push(p.argBuf.toString('latin1', p.fieldStart[i], p.fieldEnd[i]));
  }
  return out;
}

interface Setup {
  maxControlLine?: number;
  maxPayload?: number;
  /** Whether CONNECT announced headers (HPUB is refused otherwise). Default true. */
  headers?: boolean;
}

function newParser(setup: Setup = {}): { parser: Parser; rec: Recorder } {
  const rec = new Recorder();
  const parser = new Parser(rec, {
    maxControlLine: setup.maxControlLine ?? 1024,
    maxPayload: setup.maxPayload ?? 1024 * 1024,
  });
  parser.headers = setup.headers ?? true;
  return { parser, rec };
}

/** Feeds each chunk as a fresh Buffer, as a socket would hand them over. */
function feed(chunks: readonly Buffer[], setup: Setup = {}): Event[] {
  const { parser, rec } = newParser(setup);
  for (const c of chunks) parser.parse(Buffer.from(c));
  return rec.events;
}

const bytes = (s: string | Buffer): Buffer =>
  typeof s === 'string' ? Buffer.from(s, 'latin1') : s;

/**
 * Asserts the events of `input` fed whole, one byte at a time, and split into two
 * chunks at every index (0 and length included) are all `expected`.
 */
function expectEvents(input: string | Buffer, expected: Event[], setup: Setup = {}): void {
  const b = bytes(input);
  assert.deepEqual(feed([b], setup), expected, 'fed as one chunk');
  const single: Buffer[] = [];
  for (let i = 0; i < b.length; i++) single.push(b.subarray(i, i + 1));
  assert.deepEqual(feed(single, setup), expected, 'fed one byte at a time');
  for (let k = 0; k <= b.length; k++) {
    assert.deepEqual(
      feed([b.subarray(0, k), b.subarray(k)], setup),
      expected,
      `split at ${k}: ${JSON.stringify(b.subarray(0, k).toString('latin1'))}`,
    );
  }
}

const msg = (
  subject: string,
  payload: string,
  extra: { reply?: string; hdr?: number; sizeRaw?: string } = {},
): Event => ({
  op: 'MSG',
  subject,
  reply: extra.reply ?? null,
  hdr: extra.hdr ?? -1,
  size: payload.length,
  sizeRaw: extra.sizeRaw ?? String(payload.length),
  payload,
});
const fail = (kind: ParseFailure): Event => ({ op: 'FAIL', kind });
const PING: Event = { op: 'PING' };
const PONG: Event = { op: 'PONG' };

describe('parser: every op, whole, byte by byte and split at every index', () => {
  test('CONNECT, with and without a space before the JSON', () => {
    expectEvents('CONNECT {"verbose":false}\r\n', [{ op: 'CONNECT', arg: '{"verbose":false}' }]);
    expectEvents('CONNECT{"verbose":true}\r\n', [{ op: 'CONNECT', arg: '{"verbose":true}' }]);
    expectEvents('CONNECT \t {}\n', [{ op: 'CONNECT', arg: '{}' }]);
  });

  test('INFO from a client is handed over as its JSON text', () => {
    expectEvents('INFO {"server_id":"x"}\r\n', [{ op: 'INFO', arg: '{"server_id":"x"}' }]);
  });

  test('PUB without and with a reply subject', () => {
    expectEvents('PUB foo 5\r\nhello\r\n', [msg('foo', 'hello')]);
    expectEvents('PUB foo.bar _INBOX.1 2\r\nhi\r\n', [msg('foo.bar', 'hi', { reply: '_INBOX.1' })]);
  });

  test('HPUB without and with a reply subject', () => {
    const hdrs = 'NATS/1.0\r\nA: B\r\n\r\n';
    expectEvents(`HPUB foo 18 20\r\n${hdrs}hi\r\n`, [msg('foo', hdrs + 'hi', { hdr: 18 })]);
    expectEvents(`HPUB foo rep 18 20\r\n${hdrs}hi\r\n`, [
      msg('foo', hdrs + 'hi', { reply: 'rep', hdr: 18 }),
    ]);
  });

  test('HPUB with a zero header size is a plain message', () => {
    expectEvents('HPUB foo 0 2\r\nhi\r\n', [msg('foo', 'hi')]);
  });

  test('SUB without and with a queue group', () => {
    expectEvents('SUB foo 1\r\n', [{ op: 'SUB', fields: ['foo', '1'] }]);
    expectEvents('SUB foo.* workers 22\r\n', [{ op: 'SUB', fields: ['foo.*', 'workers', '22'] }]);
  });

  test('UNSUB without and with a max', () => {
    expectEvents('UNSUB 1\r\n', [{ op: 'UNSUB', fields: ['1'] }]);
    expectEvents('UNSUB 1 10\r\n', [{ op: 'UNSUB', fields: ['1', '10'] }]);
  });

  test('PING and PONG', () => {
    expectEvents('PING\r\n', [PING]);
    expectEvents('PONG\r\n', [PONG]);
  });

  test('+OK from a client is swallowed', () => {
    expectEvents('+OK\r\nPING\r\n', [PING]);
  });

  test('-ERR from a client is handed over', () => {
    expectEvents("-ERR 'Slow Consumer'\r\n", [{ op: '-ERR', arg: "'Slow Consumer'" }]);
  });

  test('HMSG from a client is parsed and swallowed, as the reference does', () => {
    expectEvents('HMSG foo 1 2 2\r\n\r\nPING\r\n', [PING]);
  });

  test('op names are case-insensitive letter by letter', () => {
    expectEvents(
      'cOnNeCt {}\r\nsUb foo 1\r\npUb foo 2\r\nhi\r\nhPuB foo 2 2\r\nhi\r\nUnSuB 1\r\n' +
        'PiNg\r\npOnG\r\n+ok\r\n-eRr x\r\n',
      [
        { op: 'CONNECT', arg: '{}' },
        { op: 'SUB', fields: ['foo', '1'] },
        msg('foo', 'hi'),
        msg('foo', 'hi', { hdr: 2 }),
        { op: 'UNSUB', fields: ['1'] },
        PING,
        PONG,
        { op: '-ERR', arg: 'x' },
      ],
    );
    expectEvents('info {}\r\nhmsg foo 1 0 0\r\n\r\nping\r\n', [{ op: 'INFO', arg: '{}' }, PING]);
  });

  test('runs of spaces and tabs separate arguments; leading and trailing ones are ignored', () => {
    expectEvents('SUB\t foo  \t 1\r\nPUB \t foo\t\t 5 \r\nhello\r\n', [
      { op: 'SUB', fields: ['foo', '1'] },
      msg('foo', 'hello'),
    ]);
    expectEvents('PUB  foo \t r\t 2  \r\nhi\r\nSUB foo\t\tq  7 \t\r\nUNSUB \t 7 \t 3 \r\n', [
      msg('foo', 'hi', { reply: 'r' }),
      { op: 'SUB', fields: ['foo', 'q', '7'] },
      { op: 'UNSUB', fields: ['7', '3'] },
    ]);
    expectEvents('HPUB\tfoo\t\tr   2\t4\r\nabcd\r\n', [msg('foo', 'abcd', { reply: 'r', hdr: 2 })]);
  });

  test('a bare LF ends a control line', () => {
    expectEvents('SUB foo 1\nPUB foo 2\nhi\r\nPING\nPONG\nUNSUB 1\nCONNECT {}\n', [
      { op: 'SUB', fields: ['foo', '1'] },
      msg('foo', 'hi'),
      PING,
      PONG,
      { op: 'UNSUB', fields: ['1'] },
      { op: 'CONNECT', arg: '{}' },
    ]);
  });

  test('SUB and UNSUB also split on CR, as the reference splitArg does', () => {
    expectEvents('SUB foo\r1\n', [{ op: 'SUB', fields: ['foo', '1'] }]);
  });

  test('payloads may hold CRLF and NUL bytes', () => {
    const payload = 'a\r\nb\0\0\r\n\r\nPING\r\n';
    expectEvents(`PUB foo ${payload.length}\r\n${payload}\r\nPING\r\n`, [
      msg('foo', payload),
      PING,
    ]);
    const all = Buffer.alloc(256);
    for (let i = 0; i < 256; i++) all[i] = i;
    expectEvents(Buffer.concat([bytes('PUB bin 256\r\n'), all, bytes('\r\n')]), [
      msg('bin', all.toString('latin1')),
    ]);
  });

  test('zero-size payloads', () => {
    expectEvents('PUB foo 0\r\n\r\nPUB foo r 0\r\n\r\nHPUB foo 0 0\r\n\r\nPING\r\n', [
      msg('foo', ''),
      msg('foo', '', { reply: 'r' }),
      msg('foo', ''),
      PING,
    ]);
  });

  test('the raw size bytes are kept (001 is echoed as 001)', () => {
    expectEvents('PUB foo 001\r\na\r\n', [msg('foo', 'a', { sizeRaw: '001' })]);
    expectEvents('HPUB foo r 002 0004\r\nabcd\r\n', [
      msg('foo', 'abcd', { reply: 'r', hdr: 2, sizeRaw: '0004' }),
    ]);
  });

  test('PING, PONG and +OK ignore everything up to the newline', () => {
    expectEvents('PINGxyz\r\nPONG junk\r\n+OK whatever\r\n', [PING, PONG]);
    expectEvents('PING\rPING\r\n', [PING]);
    expectEvents(`PING${'x'.repeat(5000)}\r\nPING\r\n`, [PING, PING]);
  });

  test('a whole session of ops in one stream', () => {
    expectEvents(
      'CONNECT {"verbose":false,"headers":true}\r\nSUB foo 1\r\nSUB foo q 2\r\n' +
        'PUB foo 5\r\nhello\r\nHPUB foo r 12 14\r\nNATS/1.0\r\n\r\nhi\r\n' +
        'UNSUB 1\r\nUNSUB 2 5\r\nPING\r\nPONG\r\n',
      [
        { op: 'CONNECT', arg: '{"verbose":false,"headers":true}' },
        { op: 'SUB', fields: ['foo', '1'] },
        { op: 'SUB', fields: ['foo', 'q', '2'] },
        msg('foo', 'hello'),
        msg('foo', 'NATS/1.0\r\n\r\nhi', { reply: 'r', hdr: 12 }),
        { op: 'UNSUB', fields: ['1'] },
        { op: 'UNSUB', fields: ['2', '5'] },
        PING,
        PONG,
      ],
    );
  });

  test('a payload inside one chunk is handed over without a copy', () => {
    const rec = new Recorder();
    const seen: Buffer[] = [];
    rec.onMsg = (p: Parser) => {
      seen.push(p.payload);
    };
    const parser = new Parser(rec, { maxControlLine: 1024, maxPayload: 1024 });
    const chunk = bytes('PUB foo 5\r\nhello\r\n');
    parser.parse(chunk);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.buffer, chunk.buffer);
    assert.ok(parser.idle);
  });
});

describe('parser: reads in one reused buffer', () => {
  // The server reads every connection into one shared buffer that the next read
  // overwrites: what a message still needs of a read must be copied before it returns.
  test('PUBs and HPUBs whose payload or CRLF goes on in the next read', () => {
    const stream = bytes(
      'PUB a 10\r\n0123456789\r\nPUB b r 3\r\nxyz\r\nHPUB c 12 16\r\nNATS/1.0\r\n\r\nhey!\r\n' +
        'PUB d 0\r\n\r\nPUB e 4\r\nlast\r\n',
    );
    const expected = [
      msg('a', '0123456789'),
      msg('b', 'xyz', { reply: 'r' }),
      msg('c', 'NATS/1.0\r\n\r\nhey!', { hdr: 12 }),
      msg('d', ''),
      msg('e', 'last'),
    ];
    const shared = Buffer.alloc(stream.length);
    for (let k = 1; k < stream.length; k++) {
      for (let j = k; j <= stream.length; j++) {
        const { parser, rec } = newParser();
        for (const [from, to] of [
          [0, k],
          [k, j],
          [j, stream.length],
        ] as const) {
          if (from === to) continue;
          stream.copy(shared, 0, from, to);
          parser.parse(shared.subarray(0, to - from));
          shared.fill(0x58); // what another connection's read would leave there
        }
        assert.deepEqual(rec.events, expected, `cut at ${k} and ${j}`);
        assert.ok(parser.idle, `idle after the cuts at ${k} and ${j}`);
      }
    }
  });
});

describe('parser: failures', () => {
  test('unknown ops and bad first bytes', () => {
    for (const input of [
      'FOO\r\n',
      ' PING\r\n',
      '\r\nPING\r\n',
      '\nPING\r\n',
      'MSG foo 1 2\r\nhi\r\n',
      'RS+ $G foo\r\n',
      'A+ foo\r\n',
      'LS+ $G foo\r\n',
      'PUNG\r\n',
      'CONNEXION {}\r\n',
      '+OX\r\n',
      '-ERROR\r\n',
      'HPUX foo 1 1\r\n',
      '\0',
    ]) {
      expectEvents(input, [fail(ParseFailure.unknownOp)]);
    }
  });

  test('PUB, HPUB, SUB, UNSUB, HMSG and -ERR need a space or tab after the op', () => {
    for (const input of [
      'PUB\r\n',
      'PUBfoo 1\r\nx\r\n',
      'HPUB\r\n',
      'SUB\r\n',
      'SUBfoo 1\r\n',
      'UNSUB\r\n',
      'UNSUB1\r\n',
      'HMSG\r\n',
      '-ERR\r\n',
    ]) {
      expectEvents(input, [fail(ParseFailure.unknownOp)]);
    }
  });

  test('events before a failure are kept and nothing is parsed after it', () => {
    expectEvents('PING\r\nFOO\r\nPING\r\n', [PING, fail(ParseFailure.unknownOp)]);
    const { parser, rec } = newParser();
    parser.parse(bytes('XPING\r\n'));
    parser.parse(bytes('PING\r\n'));
    assert.deepEqual(rec.events, [fail(ParseFailure.unknownOp)]);
    assert.ok(parser.stopped);
  });

  test('bad argument counts', () => {
    for (const input of [
      'PUB \r\n',
      'PUB foo\r\n',
      'PUB foo bar baz 2\r\nhi\r\n',
      'PUB a b c d e f\r\n',
      'HPUB foo 2\r\n',
      'HPUB foo r x 2 2\r\n',
      'SUB foo\r\n',
      'SUB foo q 1 2\r\n',
      'SUB \r\n',
      'UNSUB 1 2 3\r\n',
      'UNSUB \r\n',
    ]) {
      expectEvents(input, [fail(ParseFailure.badArguments)]);
    }
  });

  test('bad sizes: abc, -1, +1, empty-looking, 10 digits', () => {
    for (const size of ['abc', '-1', '+1', '1a', '0x1', '1000000000', '0000000001']) {
      expectEvents(`PUB foo ${size}\r\n`, [fail(ParseFailure.badArguments)]);
      expectEvents(`PUB foo r ${size}\r\n`, [fail(ParseFailure.badArguments)]);
      expectEvents(`HPUB foo 0 ${size}\r\n`, [fail(ParseFailure.badArguments)]);
      expectEvents(`HPUB foo ${size} 10\r\n`, [fail(ParseFailure.badArguments)]);
    }
  });

  test('nine digits is still a size (then checked against max payload)', () => {
    expectEvents('PUB foo 999999999\r\n', [fail(ParseFailure.maxPayload)]);
    expectEvents('PUB foo 000000001\r\nx\r\n', [msg('foo', 'x', { sizeRaw: '000000001' })]);
  });

  test('parseSize follows the reference: 1 to 9 ASCII digits', () => {
    const ps = (s: string) => parseSize(bytes(s), 0, s.length);
    assert.equal(ps('0'), 0);
    assert.equal(ps('001'), 1);
    assert.equal(ps('999999999'), 999999999);
    for (const bad of ['', '-1', '+1', ' 1', 'abc', '1000000000']) assert.equal(ps(bad), -1);
  });

  test('HPUB header size above the total', () => {
    expectEvents('HPUB foo 14 12\r\n', [fail(ParseFailure.badArguments)]);
    expectEvents('HPUB foo r 3 2\r\n', [fail(ParseFailure.badArguments)]);
    // Equal is fine: a message of headers only.
    expectEvents('HPUB foo 2 2\r\nab\r\n', [msg('foo', 'ab', { hdr: 2 })]);
  });

  test('HPUB from a connection that did not announce headers', () => {
    expectEvents(
      'HPUB foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\n',
      [fail(ParseFailure.headersNotSupported)],
      {
        headers: false,
      },
    );
  });

  test('max payload: exactly the max is accepted, one more is refused before reading it', () => {
    const max = 64;
    const ok = 'x'.repeat(max);
    expectEvents(`PUB foo ${max}\r\n${ok}\r\n`, [msg('foo', ok)], { maxPayload: max });
    expectEvents(`HPUB foo 4 ${max}\r\n${ok}\r\n`, [msg('foo', ok, { hdr: 4 })], {
      maxPayload: max,
    });
    expectEvents(`PUB foo ${max + 1}\r\n`, [fail(ParseFailure.maxPayload)], { maxPayload: max });
    // For HPUB the total counts, not the header size.
    expectEvents(`HPUB foo 4 ${max + 1}\r\n`, [fail(ParseFailure.maxPayload)], {
      maxPayload: max,
    });
    // The reference default (1 MB), exactly at the limit.
    const big = 'y'.repeat(1024 * 1024);
    assert.deepEqual(feed([bytes(`PUB foo 1048576\r\n${big}\r\n`)]), [msg('foo', big)]);
    assert.deepEqual(feed([bytes('PUB foo 1048577\r\n')]), [fail(ParseFailure.maxPayload)]);
  });

  test('the control line limit counts the arguments only, on complete lines', () => {
    const limit = 64;
    const setup = { maxControlLine: limit };
    // `PUB ` + subject + ` 0` is an argument of exactly `limit` bytes.
    const subject = 'a'.repeat(limit - 2);
    expectEvents(`PUB    ${subject} 0\r\n\r\n`, [msg(subject, '')], setup);
    expectEvents(`PUB ${subject}a 0\r\n\r\n`, [fail(ParseFailure.maxControlLine)], setup);
    const sub = 'b'.repeat(limit - 2);
    expectEvents(`SUB ${sub} 1\r\n`, [{ op: 'SUB', fields: [sub, '1'] }], setup);
    expectEvents(`SUB ${sub}b 1\n`, [fail(ParseFailure.maxControlLine)], setup);
    expectEvents(
      `UNSUB ${'9'.repeat(limit)}\r\n`,
      [{ op: 'UNSUB', fields: ['9'.repeat(limit)] }],
      setup,
    );
    expectEvents(`UNSUB ${'9'.repeat(limit + 1)}\r\n`, [fail(ParseFailure.maxControlLine)], setup);
    expectEvents(
      `HPUB ${'c'.repeat(limit - 4)} 0 0\r\n\r\n`,
      [msg('c'.repeat(limit - 4), '')],
      setup,
    );
    expectEvents(
      `HPUB ${'c'.repeat(limit - 3)} 0 0\r\n`,
      [fail(ParseFailure.maxControlLine)],
      setup,
    );
  });

  test('the control line limit is checked on a partial line, before its newline', () => {
    const limit = 64;
    const setup = { maxControlLine: limit };
    for (const op of ['PUB', 'HPUB', 'SUB', 'UNSUB']) {
      // Exactly the limit with no newline yet: wait for more.
      assert.deepEqual(feed([bytes(`${op} ${'a'.repeat(limit)}`)], setup), [], op);
      // One byte over with no newline: refused at once.
      assert.deepEqual(
        feed([bytes(`${op} ${'a'.repeat(limit + 1)}`)], setup),
        [fail(ParseFailure.maxControlLine)],
        op,
      );
      // Over the limit across many small reads.
      const chunks = Array.from({ length: limit }, () => bytes('aa'));
      assert.deepEqual(
        feed([bytes(`${op} `), ...chunks], setup),
        [fail(ParseFailure.maxControlLine)],
        op,
      );
    }
    // A CR at the end of a read does not count against the limit.
    const sub = 'b'.repeat(limit - 2);
    assert.deepEqual(feed([bytes(`SUB ${sub} 1\r`), bytes('\n')], setup), [
      { op: 'SUB', fields: [sub, '1'] },
    ]);
  });

  test('CONNECT is allowed max(max_control_line, 4096) bytes', () => {
    const json = (n: number) => `{"name":"${'x'.repeat(n - 11)}"}`;
    assert.equal(json(4096).length, 4096);
    // With the description's 1024 limit, CONNECT still gets 4096.
    expectEvents(`CONNECT ${json(4096)}\r\n`, [{ op: 'CONNECT', arg: json(4096) }]);
    expectEvents(`CONNECT ${json(4097)}\r\n`, [fail(ParseFailure.maxControlLine)]);
    assert.deepEqual(feed([bytes(`CONNECT ${json(4097).slice(0, 4097)}`)]), [
      fail(ParseFailure.maxControlLine),
    ]);
    assert.deepEqual(feed([bytes(`CONNECT ${json(4096)}`)]), []);
    // A larger limit applies to CONNECT too.
    const setup = { maxControlLine: 8192 };
    assert.deepEqual(feed([bytes(`CONNECT ${json(8192)}\r\n`)], setup), [
      { op: 'CONNECT', arg: json(8192) },
    ]);
    assert.deepEqual(feed([bytes(`CONNECT ${json(8193)}\r\n`)], setup), [
      fail(ParseFailure.maxControlLine),
    ]);
  });

  test('a PING line that never ends is skipped, not buffered', () => {
    const { parser, rec } = newParser({ maxControlLine: 64 });
    parser.parse(bytes('PING'));
    const junk = Buffer.alloc(64 * 1024, 'j');
    for (let i = 0; i < 16; i++) {
      parser.parse(junk);
      assert.equal(parser.bufferedBytes, 0);
    }
    assert.deepEqual(rec.events, []);
    parser.parse(bytes('\r\nPING\r\n'));
    assert.deepEqual(rec.events, [PING, PING]);
    assert.ok(parser.idle);
  });

  test('bytes after a payload must be exactly CRLF', () => {
    for (const input of [
      'PUB foo 2\r\nhello\r\n',
      'PUB foo 5\r\nhello\rX',
      'PUB foo 2\r\nhi\nPING\r\n',
      'PUB foo 2\r\nhi\n\r',
      'PUB foo 2\r\nhiPING\r\n',
      'PUB foo 0\r\nPING\r\n',
      'HPUB foo 2 2\r\nab \r\n',
      'HMSG foo 1 2 2\r\nxx\r\n',
    ]) {
      expectEvents(input, [fail(ParseFailure.unknownOp)]);
    }
  });

  test('a payload shorter than declared waits for more bytes', () => {
    const { parser, rec } = newParser();
    parser.parse(bytes('PUB foo 5\r\nhi\r\n'));
    assert.deepEqual(rec.events, []);
    assert.ok(!parser.stopped);
    assert.equal(parser.bufferedBytes, 4);
    parser.parse(bytes('!\r\n'));
    assert.deepEqual(rec.events, [msg('foo', 'hi\r\n!')]);
    assert.equal(parser.bufferedBytes, 0);
  });
});

describe('parser: properties', () => {
  const token = fc.stringMatching(/^[a-zA-Z0-9_$*>-]{1,8}$/);
  const subject = fc.array(token, { minLength: 1, maxLength: 4 }).map((t) => t.join('.'));
  const ws = fc.constantFrom(' ', '\t', '  ', ' \t ');
  const eol = fc.constantFrom('\r\n', '\n');
  const payload = fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a).toString('latin1'));

  /** One valid op as text, and the event it must give. */
  const op: fc.Arbitrary<[string, Event | null]> = fc.oneof(
    fc
      .tuple(subject, fc.option(subject, { nil: null }), payload, ws, eol)
      .map(([s, r, p, w, e]): [string, Event] => [
        `PUB${w}${s}${w}${r === null ? '' : r + w}${p.length}${e}${p}\r\n`,
        msg(s, p, r === null ? {} : { reply: r }),
      ]),
    fc
      .tuple(subject, fc.option(subject, { nil: null }), payload, payload, ws, eol)
      .map(([s, r, h, p, w, e]): [string, Event] => [
        `HPUB${w}${s}${w}${r === null ? '' : r + w}${h.length}${w}${h.length + p.length}${e}${h}${p}\r\n`,
        msg(s, h + p, { hdr: h.length === 0 ? -1 : h.length, ...(r === null ? {} : { reply: r }) }),
      ]),
    fc
      .tuple(subject, fc.option(token, { nil: null }), token, ws, eol)
      .map(([s, q, sid, w, e]): [string, Event] => [
        `SUB${w}${s}${w}${q === null ? '' : q + w}${sid}${e}`,
        { op: 'SUB', fields: q === null ? [s, sid] : [s, q, sid] },
      ]),
    fc
      .tuple(token, fc.option(fc.nat(999), { nil: null }), ws, eol)
      .map(([sid, max, w, e]): [string, Event] => [
        `UNSUB${w}${sid}${max === null ? '' : w + String(max)}${e}`,
        { op: 'UNSUB', fields: max === null ? [sid] : [sid, String(max)] },
      ]),
    eol.map((e): [string, Event] => [`PING${e}`, PING]),
    eol.map((e): [string, Event] => [`PONG${e}`, PONG]),
    eol.map((e): [string, null] => [`+OK${e}`, null]),
    fc
      .tuple(fc.boolean(), eol)
      .map(([v, e]): [string, Event] => [
        `CONNECT {"verbose":${v}}${e}`,
        { op: 'CONNECT', arg: `{"verbose":${v}}` },
      ]),
  );

  test('any stream of valid ops, cut into any chunks, gives the same events', () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (ops, cuts) => {
          const stream = bytes(ops.map(([t]) => t).join(''));
          const expected = ops.flatMap(([, e]) => (e === null ? [] : [e]));
          assert.deepEqual(feed([stream]), expected);
          const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort(
            (a, b) => a - b,
          );
          const chunks: Buffer[] = [];
          let at = 0;
          for (const p of points) {
            chunks.push(stream.subarray(at, p));
            at = p;
          }
          chunks.push(stream.subarray(at));
          assert.deepEqual(feed(chunks), expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('arbitrary bytes never throw, and nothing follows a failure', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 8 }), (chunks) => {
        const { parser, rec } = newParser({ maxControlLine: 32, maxPayload: 64 });
        for (const c of chunks) parser.parse(Buffer.from(c));
        const failAt = rec.events.findIndex((e) => e.op === 'FAIL');
        if (failAt >= 0) {
          assert.equal(failAt, rec.events.length - 1, 'events after a failure');
          assert.ok(parser.stopped);
          assert.ok(FAILURE_NAMES[(rec.events[failAt] as { kind: ParseFailure }).kind]);
        }
        // Bounded memory: never more than a line within its limit (4096 for CONNECT,
        // plus a CR) or a payload within max payload.
        assert.ok(parser.bufferedBytes <= 4097);
      }),
      { numRuns: 1000 },
    );
  });
});
