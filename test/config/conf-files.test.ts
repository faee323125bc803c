// Config files on disk: the sample files in fixtures/ and `include`. Every fixture
// that parses here also passes `nats-server -t` (2.9.10), apart from the keys
// that server does not know (streaming) and the include cycle, on which it
// overflows its stack.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  ConfigError,
  findKey,
  parseConfigFile,
  parseConfigText,
  parseDuration,
  toPlain,
  type ConfMap,
  type ConfValue,
} from '../../src/config/conf.js';

// The fixtures stay in the source tree; compiled tests run from dist/.
const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here.replace(`${sep}dist${sep}test${sep}`, `${sep}test${sep}`), 'fixtures');
const fixture = (name: string): string => join(fixtures, name);

function fileFailure(path: string): ConfigError {
  try {
    parseConfigFile(path, {});
  } catch (err) {
    assert.ok(err instanceof ConfigError, `not a ConfigError: ${String(err)}`);
    return err;
  }
  assert.fail(`parsed without error: ${path}`);
}

function mapAt(map: ConfMap, ...path: string[]): ConfMap {
  let current: ConfValue = map;
  for (const key of path) {
    assert.ok(current.kind === 'map', `${key}: not in a map`);
    const entry = current.value.get(key);
    assert.ok(entry, `no key ${key}`);
    current = entry.value;
  }
  assert.ok(current.kind === 'map');
  return current;
}

test('the sample of the protocol description parses', () => {
  const m = parseConfigFile(fixture('reference-sample.conf'), {});
  const p = toPlain(m);
  assert.equal(p['listen'], '127.0.0.1:4222');
  assert.equal(p['max_payload'], 1024 * 1024);
  assert.equal(p['max_pending'], 64 * 1024 * 1024);
  assert.equal(p['ping_interval'], '2m');
  assert.equal(parseDuration(findKey(m, 'ping_interval')!.value, 'ping_interval'), 120_000);
  assert.equal(parseDuration(findKey(m, 'write_deadline')!.value, 'write_deadline'), 10_000);
  const hash = '$2a$04$Q.CgCP2Sl9pkcTXEZHazaeMwPaAkSHk7AI51HkyMt5iJQQyUA4qxq';
  assert.equal(p['PASS'], hash);
  // PASS is used through $PASS, so the options layer must not call it unknown.
  assert.equal(m.value.get('PASS')!.usedAsVariable, true);
  assert.deepEqual(p['authorization'], {
    timeout: 2,
    users: [
      {
        user: 'alice',
        password: hash,
        permissions: {
          publish: { allow: ['orders.>'] },
          subscribe: ['replies.*'],
          allow_responses: true,
        },
      },
      { nkey: 'UBBK72GR46AVUK2ZI3QBO3JGF3WUMMADTZTBD6IO22WBHLWEVRZ24H3A' },
    ],
  });
  assert.deepEqual(p['cluster'], {
    name: 'c1',
    listen: '0.0.0.0:6222',
    routes: ['nats://10.0.0.2:6222'],
  });
  const users = mapAt(m, 'authorization').value.get('users')!;
  assert.deepEqual([users.file, users.line, users.col], [fixture('reference-sample.conf'), 19, 3]);
});

test('a streaming section in the style of the NATS Streaming documentation', () => {
  const m = parseConfigFile(fixture('streaming.conf'), {});
  const streaming = toPlain(mapAt(m, 'streaming'));
  assert.equal(streaming['id'], 'test-cluster');
  assert.equal(streaming['store'], 'file');
  assert.equal(streaming['dir'], 'datastore');
  assert.equal(streaming['sd'], false);
  assert.deepEqual(streaming['store_limits'], {
    max_channels: 10,
    max_msgs: 1_000_000,
    max_bytes: 1024 ** 3,
    max_age: '24h',
    max_subs: 100,
    max_inactivity: '10m',
    channels: {
      'foo.*': { max_msgs: 10 },
      'bar.>': { max_bytes: 64 * 1024, max_age: '1h' },
    },
  });
  const channels = mapAt(m, 'streaming', 'store_limits', 'channels');
  assert.deepEqual([...channels.value.keys()], ['foo.*', 'bar.>']);
  assert.equal(channels.value.get('bar.>')!.line, 24);

  const oneLine = toPlain(parseConfigFile(fixture('streaming-oneline.conf'), {}));
  assert.deepEqual(oneLine, {
    streaming: {
      id: 'test-cluster',
      store: 'file',
      dir: 'datastore',
      store_limits: { max_channels: 10, channels: { 'foo.*': { max_msgs: 10 } } },
    },
  });
});

test('comments in odd places', () => {
  assert.deepEqual(toPlain(parseConfigFile(fixture('comments.conf'), {})), {
    port: 4222,
    debug: true,
    cluster: { name: 'c1', routes: ['nats://a:6222', 'nats://b:6222'] },
    http: 8222,
    server_name: 'n1#not-a-comment',
  });
});

test('a JSON file is a config file', () => {
  assert.deepEqual(toPlain(parseConfigFile(fixture('json.conf'), {})), {
    http_port: 8227,
    port: 4227,
    write_deadline: '1h',
    cluster: { port: 6222, routes: ['nats://127.0.0.1:4222', 'nats://127.0.0.1:4223'] },
  });
});

test('includes: relative to the including file, nested, variables flow out', () => {
  const m = parseConfigFile(fixture('main.conf'), {});
  const alice = '$2a$10$abcdefghijklmnopqrstuu6bVQXpb4yCt.LxVXkr2Nm9QvmfJbXe6';
  const bob = '$2a$11$0123456789abcdefghijkuLOSaVjHdEe0XrZ7oSV/XmJ9x.6Gb8pq';
  assert.deepEqual(toPlain(m), {
    listen: '127.0.0.1:4222',
    max_payload: 1024 * 1024,
    max_pending: 64 * 1024 * 1024,
    authorization: {
      ALICE_PASS: alice,
      BOB_PASS: bob,
      users: [
        { user: 'alice', password: alice },
        { user: 'bob', password: bob },
      ],
      timeout: 0.5,
    },
  });
  // Included entries keep their own file and line.
  const auth = mapAt(m, 'authorization');
  const alicePass = auth.value.get('ALICE_PASS')!;
  assert.deepEqual(
    [alicePass.file, alicePass.line, alicePass.col, alicePass.usedAsVariable],
    [join(fixtures, 'includes', 'passwords.conf'), 2, 1, true],
  );
  const users = auth.value.get('users')!;
  assert.deepEqual([users.file, users.line], [join(fixtures, 'includes', 'users.conf'), 4]);
  assert.equal(m.value.get('max_pending')!.file, join(fixtures, 'includes', 'limits.conf'));
});

test('include: all three spellings, any case of the keyword, inside maps', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-conf-'));
  try {
    writeFileSync(join(dir, 'part.conf'), 'x: 1\n');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'part.conf'), 'y: 2\n');
    const main = join(dir, 'main.conf');
    for (const line of ["include 'part.conf'", 'include "part.conf"', 'include part.conf']) {
      writeFileSync(main, `${line}\n`);
      assert.deepEqual(toPlain(parseConfigFile(main, {})), { x: 1 }, line);
    }
    writeFileSync(main, 'INCLUDE part.conf; m { include ./sub/part.conf }\n');
    assert.deepEqual(toPlain(parseConfigFile(main, {})), { x: 1, m: { y: 2 } });
    // A quoted "include" is an ordinary key.
    writeFileSync(main, '"include": part.conf\n');
    assert.deepEqual(toPlain(parseConfigFile(main, {})), { include: 'part.conf' });
    // parseConfigText resolves includes against the directory of the name it is given.
    assert.deepEqual(toPlain(parseConfigText('include part.conf', main, {})), { x: 1 });
    // reference: an absolute include path is joined to the including directory too.
    writeFileSync(main, `include ${join(dir, 'part.conf')}\n`);
    const err = fileFailure(main);
    assert.match(err.reason, /^error parsing include file '.*part\.conf', open .*: no such file/);
    assert.ok(err.reason.includes(join(dir, dir, 'part.conf')), err.reason);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('include: a missing file is an error at the include line', () => {
  const err = fileFailure(fixture('missing-include.conf'));
  const target = join(fixtures, 'nope.conf');
  assert.equal(
    err.reason,
    `error parsing include file 'nope.conf', open ${target}: no such file or directory`,
  );
  assert.deepEqual([err.file, err.line, err.col], [fixture('missing-include.conf'), 3, 1]);
  assert.equal(err.message, `${fixture('missing-include.conf')}:3:1: ${err.reason}`);
});

test('include: an error inside the included file points into that file', () => {
  const err = fileFailure(fixture('bad-include.conf'));
  assert.deepEqual(
    [err.file, err.line, err.reason],
    [join(fixtures, 'includes', 'broken.conf'), 4, 'Unexpected EOF.'],
  );
  // What nats-server 2.9.10 prints for this file.
  assert.equal(
    err.reference,
    "error parsing include file 'includes/broken.conf', Parse error on line 4: 'Unexpected EOF.'",
  );
});

test('include: a cycle is an error, not a stack overflow', () => {
  // deviation: nats-server 2.9.10 recurses until "fatal error: stack overflow".
  const err = fileFailure(fixture('cycle-a.conf'));
  assert.match(err.reason, /include cycle/);
  assert.equal(err.file, fixture('cycle-b.conf'));
  assert.equal(err.line, 2);
});

test('a config file that cannot be read', () => {
  const missing = fixture('does-not-exist.conf');
  const err = fileFailure(missing);
  assert.equal(err.reason, `open ${missing}: no such file or directory`);
  assert.equal(err.reference, `open ${missing}: no such file or directory`);
  assert.equal(err.line, 0);
  assert.equal(err.message, `${missing}: ${err.reason}`);
  assert.match(fileFailure(fixtures).reason, /: is a directory$/);
});
