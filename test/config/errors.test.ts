// Malformed config files: every error names the file, the line (and column) and
// the key, and the command exits with 2, with or without -t.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from './run-cli.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function withDir(body: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wirebus-conf-'));
    try {
      await body(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

// [file text, expected message after "<file>:"]; every one is refused by the
// reference too (its messages differ in places: noted).
const cases: [string, string, string][] = [
  ['unknown key', 'port: 4222\nfoo: 1\n', '2:1: unknown field "foo"'],
  [
    'wrong type',
    'port: 4222\nmax_payload: "abc"\n',
    // reference: "interface conversion: interface {} is string, not int64"
    '2:14: max_payload: expected an integer, got string "abc"',
  ],
  ['wrong type in a boolean', 'debug: "yes"\n', '1:8: debug: expected a boolean, got string "yes"'],
  [
    'bad duration',
    'ping_interval: "2 minutes"\n',
    '1:16: error parsing ping_interval: time: unknown unit " minutes" in duration "2 minutes"',
  ],
  [
    'lame duck duration below the minimum',
    'lame_duck_duration: "10s"\n',
    '1:21: invalid lame_duck_duration of 10s, minimum is 30 seconds',
  ],
  [
    'negative grace period',
    'lame_duck_grace_period: "-1s"\n',
    '1:25: invalid lame_duck_grace_period, needs to be positive',
  ],
  [
    'a nested unknown key stays an error in its block',
    'http_port: 8222\nzork { a: 1 }\n',
    '2:1: unknown field "zork"',
  ],
];

for (const [name, text, message] of cases) {
  test(
    `${name}: file:line:col and exit 2`,
    withDir(async (dir) => {
      const file = join(dir, 'bad.conf');
      writeFileSync(file, text);
      for (const argv of [
        ['-c', file, '-t'],
        ['-c', file],
      ]) {
        const { code, stderr } = await runCli(argv);
        assert.equal(stderr, `wirebus: ${file}:${message}\n`, argv.join(' '));
        assert.equal(code, 2);
      }
    }),
  );
}

test(
  'an error in an included file names that file',
  withDir(async (dir) => {
    mkdirSync(join(dir, 'conf.d'));
    writeFileSync(join(dir, 'main.conf'), 'port: 4222\ninclude conf.d/limits.conf\n');
    writeFileSync(
      join(dir, 'conf.d', 'limits.conf'),
      '# limits\nmax_payload: 1MB\nmax_pendin: 64MB\n',
    );
    const { code, stderr } = await runCli(['-c', join(dir, 'main.conf'), '-t']);
    assert.equal(
      stderr,
      `wirebus: ${join(dir, 'conf.d', 'limits.conf')}:3:1: unknown field "max_pendin"\n`,
    );
    assert.equal(code, 2);
  }),
);

test(
  'options that contradict each other, a missing file, -t without -c',
  withDir(async (dir) => {
    const file = join(dir, 'limits.conf');
    writeFileSync(file, 'max_payload: 2MB\nmax_pending: 1MB\n');
    let r = await runCli(['-c', file, '-t']);
    assert.match(r.stderr, /max_payload \(2097152\) cannot be higher than max_pending \(1048576\)/);
    assert.equal(r.code, 2);
    r = await runCli(['-c', join(dir, 'missing.conf'), '-t']);
    assert.match(r.stderr, /^wirebus: .*missing\.conf.*no such file or directory\n$/);
    assert.equal(r.code, 2);
    r = await runCli(['-t']);
    assert.equal(
      r.stderr,
      'wirebus: must specify [-c, --config] option to check configuration file syntax\n',
    );
    assert.equal(r.code, 2);
  }),
);

test(
  'bin/wirebus exits with 2 on a malformed file',
  withDir(async (dir) => {
    const file = join(dir, 'bad.conf');
    writeFileSync(file, 'listen: 127.0.0.1:4222\n\nmax_connections: { limit: 10 }\n');
    const child = spawn(process.execPath, [join(ROOT, 'bin/wirebus'), '-c', file], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (t: string) => (stderr += t));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 2);
    assert.match(
      stderr,
      new RegExp(
        `^wirebus: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:\\d+: max_connections: expected an integer, got map\\n$`,
      ),
    );
  }),
);
