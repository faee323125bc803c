// The config language, rule by rule. Expectations follow nats-server 2.9.10's conf
// package (lex_test.go, parse_test.go) and, where those are silent, what the
// nats-server 2.9.10 binary does with the same text (`nats-server -t -c file`).

import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  ConfigError,
  findKey,
  keyMatches,
  parseConfigText,
  toPlain,
  type ConfMap,
  type ConfValue,
  type PlainMap,
} from '../../src/config/conf.js';

const parse = (text: string, env: NodeJS.ProcessEnv = {}): ConfMap =>
  parseConfigText(text, 'test.conf', env);
const plain = (text: string, env: NodeJS.ProcessEnv = {}): PlainMap => toPlain(parse(text, env));

/** The value of a top-level key. */
function valueOf(map: ConfMap, key: string): ConfValue {
  const entry = map.value.get(key);
  assert.ok(entry, `no key ${key}`);
  return entry.value;
}

/** Parses `text`, expecting a ConfigError, and returns it. */
function failure(text: string, env: NodeJS.ProcessEnv = {}): ConfigError {
  try {
    parse(text, env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `not a ConfigError: ${String(err)}`);
    return err;
  }
  assert.fail(`parsed without error: ${JSON.stringify(text)}`);
}

test('key and value separated by colon, equals or blanks', () => {
  for (const text of ['foo: 123', 'foo : 123', 'foo:123', 'foo = 123', 'foo=123', 'foo 123']) {
    assert.deepEqual(plain(text), { foo: 123 }, text);
  }
  assert.deepEqual(plain('foo\t\t123\r\n'), { foo: 123 });
  // The reference's TestSimpleTopLevel.
  assert.deepEqual(plain("foo='1'; bar=2.2; baz=true; boo=22"), {
    foo: '1',
    bar: 2.2,
    baz: true,
    boo: 22,
  });
});

test('values end at a new line, a semicolon or a comma', () => {
  assert.deepEqual(plain('a = 1\nb = two\nc = "three"'), { a: 1, b: 'two', c: 'three' });
  assert.deepEqual(plain('a = 1; b = two; c = 3,d = 4'), { a: 1, b: 'two', c: 3, d: 4 });
  assert.deepEqual(plain('a = 1;\nb = 2;\n'), { a: 1, b: 2 });
  // A key's value may sit on the next line.
  assert.deepEqual(plain('a\n  = 1'), { a: 1 });
  assert.deepEqual(plain('a\n\n1'), { a: 1 });
});

test('maps: nested, with or without a separator, on one line or many', () => {
  const nested = `
foo  {
  host {
    ip   = '127.0.0.1'
    port = 4242
  }
  servers = [ "a.com", "b.com", "c.com"]
}
`;
  assert.deepEqual(plain(nested), {
    foo: { host: { ip: '127.0.0.1', port: 4242 }, servers: ['a.com', 'b.com', 'c.com'] },
  });
  assert.deepEqual(plain("foo = {ip='127.0.0.1', port = 4242}"), {
    foo: { ip: '127.0.0.1', port: 4242 },
  });
  assert.deepEqual(plain('foo: { a: 1; b: 2 }'), { foo: { a: 1, b: 2 } });
  assert.deepEqual(plain('foo {}\nbar { }'), { foo: {}, bar: {} });
  assert.deepEqual(plain('a { b { c { d: deep } } }'), { a: { b: { c: { d: 'deep' } } } });
  // Quoted keys keep what is inside the quotes, blanks and dots included.
  assert.deepEqual(plain(`foo = {'bar-1.2.3' = { port:4242 }, " sp" = 1}`), {
    foo: { 'bar-1.2.3': { port: 4242 }, ' sp': 1 },
  });
  assert.deepEqual(plain(`'foo' : 1\n" bar": 2`), { foo: 1, ' bar': 2 });
});

test('arrays: commas or new lines, nested, arrays of maps', () => {
  assert.deepEqual(plain("foo = [1, 2, 3, 'bar']"), { foo: [1, 2, 3, 'bar'] });
  assert.deepEqual(plain('foo = [\n 1\n 2,\n "x"\n]'), { foo: [1, 2, 'x'] });
  assert.deepEqual(plain('foo = [ ]'), { foo: [] });
  assert.deepEqual(plain('foo = [ [1, 2 ], [ a ] ]'), { foo: [[1, 2], ['a']] });
  assert.deepEqual(plain('foo = [1, 2, ]'), { foo: [1, 2] });
  const users = `
authorization {
    users = [
      {user: alice, password: foo}
      {user: bob,   password: bar}
    ]
    timeout: 0.5
}`;
  assert.deepEqual(plain(users), {
    authorization: {
      users: [
        { user: 'alice', password: 'foo' },
        { user: 'bob', password: 'bar' },
      ],
      timeout: 0.5,
    },
  });
  assert.deepEqual(plain('listen = [localhost:4222, localhost:4333]'), {
    listen: ['localhost:4222', 'localhost:4333'],
  });
});

test('reference quirks of arrays: a number right before "]" is not a number', () => {
  // The reference ends an integer at blanks, ',' ';' '}' or a new line, not at ']':
  // "2]" becomes a bare string that swallows the bracket, and the array never ends.
  // nats-server 2.9.10 rejects `listen: [1,2]` in the same words.
  assert.equal(
    failure('foo = [1,2]').reason,
    `Expected an array value terminator "," or an array terminator "]", but got '\u0000' instead.`,
  );
  // A string or a negative number before ']' is fine.
  assert.deepEqual(plain('foo = [a,b]'), { foo: ['a', 'b'] });
  assert.deepEqual(plain('foo = [1,-2]'), { foo: [1, -2] });
  assert.equal(failure('foo = [ , ]').reason, "Unexpected array value terminator ','.");
});

test('comments with # and // anywhere a line may end', () => {
  const text = `# top
// other style
port: 4222 # after a value
debug = true // after a value
cluster { # after a brace
  name: c1 // in a map
  routes: [ # after a bracket
    nats://a:6222 # after an element
    // on its own line in an array
    nats://b:6222
  ] # after the array
} # after the map
name: n1#not-a-comment
# last line without a new line`;
  assert.deepEqual(plain(text), {
    port: 4222,
    debug: true,
    cluster: { name: 'c1', routes: ['nats://a:6222', 'nats://b:6222'] },
    name: 'n1#not-a-comment',
  });
  assert.deepEqual(plain('# only a comment'), {});
  assert.deepEqual(plain(''), {});
  assert.deepEqual(plain('\n\n  \t\n'), {});
});

test('comments cannot sit between a key and its value', () => {
  // lexValue does not look for comments: the '#' starts a bare string.
  assert.match(failure('cluster # no\n{ a: 1 }').reason, /^Expected a top-level value to end/);
  // '//' glued to a bare value is part of the value, and the rest of the line is junk.
  assert.match(failure('debug = true// no').reason, /but got 'n' instead\.$/);
});

test('double-quoted strings and their escapes', () => {
  assert.deepEqual(plain(String.raw`s = "a\tb\nc\rd\"e\\f"`), { s: 'a\tb\nc\rd"e\\f' });
  assert.deepEqual(plain(String.raw`s = "\x41\x42C"`), { s: 'ABC' });
  // Escaped bytes are UTF-8, like any other text.
  assert.deepEqual(plain(String.raw`s = "caf\xc3\xa9"`), { s: 'café' });
  assert.deepEqual(plain('s = ""'), { s: '' });
  assert.deepEqual(plain('s = "a # b // c; d, e } f ] g"'), { s: 'a # b // c; d, e } f ] g' });
  assert.deepEqual(plain('s = "true"\nn = "12"'), { s: 'true', n: '12' });
  assert.equal(
    failure(String.raw`s = "\y"`).reason,
    String.raw`Invalid escape character 'y'. Only the following escape characters are allowed: \xXX, \t, \n, \r, \", \\.`,
  );
  assert.equal(
    failure(String.raw`s = "[\xe]"`).reason,
    String.raw`Expected two hexadecimal digits after '\x', but got 'e]'`,
  );
  assert.equal(
    failure('s = xyz\\x\n').reason,
    String.raw`Expected two hexadecimal digits after '\x', but hit end of line`,
  );
});

test('single-quoted strings take everything literally, new lines too', () => {
  assert.deepEqual(plain(String.raw`s = 'a\tb'`), { s: String.raw`a\tb` });
  assert.deepEqual(plain(`expr = '(true == "false")'`), { expr: '(true == "false")' });
  assert.deepEqual(plain("text = 'two\nlines'"), { text: 'two\nlines' });
  assert.deepEqual(plain("s = ''"), { s: '' });
});

test('bare strings', () => {
  assert.deepEqual(plain('a = bar\nb = nats://user:pw@host:4222/x?y=1'), {
    a: 'bar',
    b: 'nats://user:pw@host:4222/x?y=1',
  });
  // Addresses and number-like words.
  assert.deepEqual(plain('a = 127.0.0.1:4222\nb = 127.0.0.1\nc = 1.2.3\nd = :80\ne = 3xyz'), {
    a: '127.0.0.1:4222',
    b: '127.0.0.1',
    c: '1.2.3',
    d: ':80',
    e: '3xyz',
  });
  assert.deepEqual(plain('a = 1Ghz\nb = 2Pie\nc = 3Mbs'), { a: '1Ghz', b: '2Pie', c: '3Mbs' });
  // Escapes work in bare strings; a quote ends one.
  assert.deepEqual(plain(String.raw`a = start\x7Cend`), { a: 'start|end' });
  assert.deepEqual(plain(String.raw`a = \\true`), { a: '\\true' });
  assert.deepEqual(plain("a = bar' "), { a: 'bar' });
  assert.deepEqual(plain('subjects = [foo.*, bar.>, "baz"]'), {
    subjects: ['foo.*', 'bar.>', 'baz'],
  });
});

test('block strings run from "(" to a ")" alone on its line', () => {
  assert.deepEqual(plain('numbers (\n1234567890\n)\n'), { numbers: '\n1234567890\n' });
  assert.deepEqual(plain('numbers (\n  12(34)56\n  (\n    7890\n  )\n)\nnext: 1\n'), {
    numbers: '\n  12(34)56\n  (\n    7890\n  )\n',
    next: 1,
  });
  // reference: at the very end of the input, the ')' stays in the value.
  assert.deepEqual(plain('numbers (\n1234567890\n)'), { numbers: '\n1234567890\n)' });
  const err = failure('listen = 4222\n\nquote = (\n\n  foo = bar\n\n');
  assert.equal(err.reason, 'Unexpected EOF processing block.');
  assert.equal(err.line, 7);
});

test('booleans: true/false, yes/no, on/off in any case', () => {
  for (const word of ['true', 'TRUE', 'True', 'yes', 'on', 'YES', 'On']) {
    assert.deepEqual(plain(`b = ${word}`), { b: true }, word);
  }
  for (const word of ['false', 'FALSE', 'no', 'off', 'No', 'OFF']) {
    assert.deepEqual(plain(`b = ${word}`), { b: false }, word);
  }
  assert.deepEqual(plain('b = "yes"\nc = truest'), { b: 'yes', c: 'truest' });
  assert.equal(valueOf(parse('b: on'), 'b').kind, 'bool');
});

test('integers and floats', () => {
  assert.deepEqual(plain('a = 123\nb = -123\nc = 0\nd = 007'), { a: 123, b: -123, c: 0, d: 7 });
  assert.deepEqual(plain('a = 22.2\nb = -1.5\nc = 0.5'), { a: 22.2, b: -1.5, c: 0.5 });
  assert.equal(valueOf(parse('a = 1.0'), 'a').kind, 'float');
  assert.equal(valueOf(parse('a = 1'), 'a').kind, 'int');
  assert.equal(failure('a = .2').reason, 'Floats must start with a digit');
  assert.equal(
    failure('a = 1.x').reason,
    "Floats must have a digit after the '.', but got 'x' instead.",
  );
  assert.equal(failure('a = -x').reason, "Expected a digit but got 'x'.");
  assert.equal(failure('a = 10-20').reason, 'All ISO8601 dates must be in full Zulu form.');
  const max = valueOf(parse('a = 9223372036854775807'), 'a');
  assert.ok(max.kind === 'int');
  assert.equal(max.big, 9223372036854775807n);
  assert.equal(
    failure('a = 9223372036854775808').reason,
    "integer '9223372036854775808' is out of the range",
  );
});

test('size suffixes: k m g t p e are powers of 1000, with b/i/ib powers of 1024', () => {
  const text = `
k = 8k
kb = 4kb
ki = 3ki
kib = 4KiB
m = 1m
mb = 2MB
mi = 2Mi
mib = 64MiB
g = 2g
gb = 22GB
t = 1T
tb = 1TB
p = 1p
pib = 1PiB
neg = -1m
upper = 1K`;
  assert.deepEqual(plain(text), {
    k: 8000,
    kb: 4096,
    ki: 3072,
    kib: 4096,
    m: 1_000_000,
    mb: 2 * 1024 ** 2,
    mi: 2 * 1024 ** 2,
    mib: 64 * 1024 ** 2,
    g: 2e9,
    gb: 22 * 1024 ** 3,
    t: 1e12,
    tb: 1024 ** 4,
    p: 1e15,
    pib: 1024 ** 5,
    neg: -1_000_000,
    upper: 1000,
  });
  const e = valueOf(parse('e = 1e\neb = 1EB'), 'e');
  assert.ok(e.kind === 'int');
  assert.equal(e.big, 10n ** 18n);
  assert.equal(e.raw, '1e');
  // int64 arithmetic wraps as in the reference: 8EB is 2^63, which is negative there.
  const wrapped = valueOf(parse('x = 8EB'), 'x');
  assert.ok(wrapped.kind === 'int');
  assert.equal(wrapped.big, -(2n ** 63n));
});

test('reference quirk: an unknown size suffix sets nothing', () => {
  // "1kbb" lexes as an integer whose suffix the parser does not know; nats-server
  // 2.9.10 accepts `listen: 1kbb` and ignores it.
  assert.deepEqual(plain('a = 1kbb\nb = 2'), { b: 2 });
});

test('datetimes in ISO 8601 Zulu form', () => {
  const m = parse('now = 2016-05-04T18:53:41Z\ngmt = false');
  const now = valueOf(m, 'now');
  assert.ok(now.kind === 'datetime');
  assert.equal(now.value.toISOString(), '2016-05-04T18:53:41.000Z');
  assert.equal(
    failure('d = 2016-05-04').reason,
    "Expected 'T' in ISO8601 datetime, but found '\u0000' instead.",
  );
  assert.equal(
    failure('d = 2016-02-30T00:00:00Z').reason,
    "expected Zulu formatted DateTime, but got '2016-02-30T00:00:00Z'",
  );
});

test('JSON is a valid config', () => {
  const json =
    '{"http_port": 8227,"port": 4227,"write_deadline": "1h","cluster": {"port": 6222,"routes": ["nats://127.0.0.1:4222","nats://127.0.0.1:4223"]}}';
  assert.deepEqual(plain(json), {
    http_port: 8227,
    port: 4227,
    write_deadline: '1h',
    cluster: { port: 6222, routes: ['nats://127.0.0.1:4222', 'nats://127.0.0.1:4223'] },
  });
  assert.deepEqual(plain('{\n  "a": 1,\n  "b": [true, "x"]\n}\n'), { a: 1, b: [true, 'x'] });
});

test('keys are case-sensitive in the tree; findKey matches like the reference', () => {
  const m = parse('Port: 1\nHTTP_port: 2\nport: 3');
  assert.deepEqual(toPlain(m), { Port: 1, HTTP_port: 2, port: 3 });
  // When keys differ only in case, the last one in the file wins.
  assert.equal(findKey(m, 'PORT')?.value.value, 3);
  assert.equal(findKey(m, 'http_port')?.key, 'HTTP_port');
  assert.equal(findKey(m, 'nope'), undefined);
  assert.ok(keyMatches('Max_Payload', 'max_payload'));
  // Go lower-cases U+0130 to a plain 'i'.
  assert.ok(keyMatches('P\u0130NG_INTERVAL', 'ping_interval'));
});

test('a key defined twice keeps the last value', () => {
  const m = parse('a = 1\nb = 2\na = 3');
  assert.deepEqual(toPlain(m), { b: 2, a: 3 });
  assert.deepEqual([...m.value.keys()], ['b', 'a']);
  assert.equal(m.value.get('a')?.line, 3);
});

test('variables: defined at any level, looked up through the enclosing maps', () => {
  assert.deepEqual(plain('index = 22\nfoo = $index'), { index: 22, foo: 22 });
  const nested = `
  index = 22
  nest {
    index = 11
    foo = $index
  }
  bar = $index
`;
  assert.deepEqual(plain(nested), { index: 22, nest: { index: 11, foo: 11 }, bar: 22 });
  // Maps inside arrays are scopes too; arrays are not.
  assert.deepEqual(plain('A = 1\nl = [ { B = 2, c = $B, d = $A } ]'), {
    A: 1,
    l: [{ B: 2, c: 2, d: 1 }],
  });
  // Any value can be a variable, maps and arrays included.
  assert.deepEqual(plain('P = { allow: [a, b] }\nuser { permissions = $P }'), {
    P: { allow: ['a', 'b'] },
    user: { permissions: { allow: ['a', 'b'] } },
  });
  // Names are case-sensitive, and a variable can only be used after its definition.
  assert.match(failure('X = 1\ny = $x').reason, /^variable reference for 'x' can not be found$/);
  assert.match(failure('y = $X\nX = 1').reason, /can not be found$/);
});

test('variables: a reference takes the position of its use and marks the definition', () => {
  const m = parse('PASS = secret\nuser {\n  password: $PASS\n}');
  const definition = m.value.get('PASS')!;
  assert.equal(definition.usedAsVariable, true);
  const user = valueOf(m, 'user');
  assert.ok(user.kind === 'map');
  const password = user.value.get('password')!;
  assert.equal(password.usedAsVariable, false);
  assert.deepEqual(
    [password.value.line, password.value.col, password.value.value],
    [3, 13, 'secret'],
  );
  assert.equal(parse('a = 1').value.get('a')!.usedAsVariable, false);
});

test('variables: environment variables, parsed like config values', () => {
  assert.deepEqual(plain('foo = $__N', { __N: '22' }), { foo: 22 });
  assert.deepEqual(plain('foo = $__S', { __S: 'xyz' }), { foo: 'xyz' });
  assert.deepEqual(plain('foo = $__S', { __S: '3Gyz' }), { foo: '3Gyz' });
  assert.deepEqual(plain('foo = $__S', { __S: "'quoted'" }), { foo: 'quoted' });
  assert.deepEqual(plain('foo = $__S', { __S: '64MB' }), { foo: 64 * 1024 * 1024 });
  assert.deepEqual(plain('foo = $__S', { __S: '[a, b]' }), { foo: ['a', 'b'] });
  // Enclosing maps come first.
  assert.deepEqual(plain('__N = 1\nfoo = $__N', { __N: '22' }), { __N: 1, foo: 1 });
  // An environment value may refer to other environment variables.
  assert.deepEqual(plain('foo = $__A', { __A: '$__B', __B: 'end' }), { foo: 'end' });
  const spaces = failure('foo = $__S', { __S: 'a b' });
  assert.equal(
    spaces.reason,
    "variable reference for '__S' could not be parsed: Expected a top-level value to end with a new line, comment or EOF, but got 'b' instead.",
  );
  assert.equal(
    spaces.reference,
    "variable reference for '__S' on line 1 could not be parsed: Parse error on line 1: 'Expected a top-level value to end with a new line, comment or EOF, but got 'b' instead.'",
  );
  // deviation: nats-server 2.9.10 overflows its stack on a reference cycle.
  assert.match(failure('foo = $__A', { __A: '$__B', __B: '$__A' }).reason, /reference cycle/);
});

test('variables: an undefined one is an error at its position', () => {
  const err = failure('a = 1\n\nlist = [ x, $nope ]');
  assert.equal(err.reason, "variable reference for 'nope' can not be found");
  assert.equal(err.reference, "variable reference for 'nope' on line 3 can not be found");
  assert.deepEqual([err.file, err.line, err.col], ['test.conf', 3, 13]);
  assert.equal(err.message, "test.conf:3:13: variable reference for 'nope' can not be found");
});

test('an unquoted bcrypt hash is a string, not a variable', () => {
  assert.deepEqual(plain('password: $2a$11$ooo'), { password: '$2a$11$ooo' });
  assert.deepEqual(plain('password: "$2a$11$ooo"'), { password: '$2a$11$ooo' });
});

test('positions: entries at their key, values where they start, 1-based', () => {
  const m = parse('a = 1\nb {\n  c: "x"\n}\nd: [ 1, two, { e: 5 } ]\n');
  const a = m.value.get('a')!;
  assert.deepEqual([a.file, a.line, a.col, a.value.line, a.value.col], ['test.conf', 1, 1, 1, 5]);
  const b = m.value.get('b')!;
  assert.deepEqual([b.line, b.col, b.value.line, b.value.col], [2, 1, 2, 3]);
  assert.ok(b.value.kind === 'map');
  const c = b.value.value.get('c')!;
  assert.deepEqual([c.line, c.col, c.value.line, c.value.col], [3, 3, 3, 6]);
  const d = valueOf(m, 'd');
  assert.ok(d.kind === 'array');
  assert.deepEqual([d.line, d.col], [5, 4]);
  assert.deepEqual(
    d.value.map((v) => [v.kind, v.line, v.col]),
    [
      ['int', 5, 6],
      ['string', 5, 9],
      ['map', 5, 14],
    ],
  );
  assert.deepEqual([m.file, m.line, m.col], ['test.conf', 1, 1]);
});

test('syntax errors carry file, line and column, in the reference words', () => {
  // The position is where the lexer stopped, as in the reference: on the offending
  // character when it was only peeked at, just past it when it was read.
  const cases: [string, string, number, number][] = [
    ['\nlisten: "localhost:4242\n\nhttp: localhost:8222\n', 'Unexpected EOF.', 5, 1],
    ["a = 1\nlisten: 'localhost:4242\n", 'Unexpected EOF.', 3, 1],
    ['listen = 4222\n\ncluster = {\n\n  foo = bar\n\n', 'Unexpected EOF processing map.', 7, 1],
    [' :foo = 22', "Unexpected key separator ':'", 1, 2],
    ['m { = 1 }', "Unexpected key separator '='.", 1, 5],
    ['m { a = , }', 'Unexpected map value terminator ",".', 1, 10],
    [
      'm { a = 1 b = 2 }',
      `Expected a map value terminator "," or a map terminator "}", but got 'b' instead.`,
      1,
      12,
    ],
    [
      'a = 1 2',
      "Expected a top-level value to end with a new line, comment or EOF, but got '2' instead.",
      1,
      8,
    ],
    ['a =\n1', 'Expected value but found new line', 2, 1],
    ['include [x]', 'Expected include value but found start of an array', 1, 10],
    ['include "x', 'Unexpected EOF in double quoted include', 1, 11],
  ];
  for (const [text, reason, line, col] of cases) {
    const err = failure(text);
    assert.equal(err.reason, reason, text);
    assert.deepEqual([err.line, err.col], [line, col], text);
    assert.equal(err.message, `test.conf:${line}:${col}: ${reason}`);
    assert.equal(err.reference, `Parse error on line ${line}: '${reason}'`);
    assert.equal(err.name, 'ConfigError');
  }
  // An unterminated array: the lexer meets the end where a value should follow.
  const array = failure('a = [\n  1\n  2\n');
  assert.equal(array.line, 4);
  assert.match(array.reason, /^Expected an array value terminator/);
});

test('reference quirk: an empty unterminated string at the very end drops what is open', () => {
  // nats-server 2.9.10 accepts `foo = "` and `m { a = "` as configs without those keys.
  assert.deepEqual(plain('a = 1\nfoo = "'), { a: 1 });
  assert.deepEqual(plain("a = 1\nm { b = 2, c = '"), { a: 1 });
  // A key with no value at the end of the input is dropped too.
  assert.deepEqual(plain('a = 1\nfoo'), { a: 1 });
});

test('toPlain: keys such as __proto__ stay plain data', () => {
  const p = plain('__proto__ = { polluted: true }\nconstructor = 1');
  assert.deepEqual(Object.keys(p), ['__proto__', 'constructor']);
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  assert.deepEqual(p['__proto__'], { polluted: true });
});
