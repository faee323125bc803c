// The reference's command line: multi-letter short flags, the value forms of Go's
// flag package, and flags winning over the config file (also on reload).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSettings } from '../../src/cli.js';
import { parseCommandLine, UsageError } from '../../src/config/flags.js';
import { resolveOptions } from '../../src/config/options.js';
import { ignoredFlagWarnings } from '../../src/ops/ignored-flags.js';

test('multi-letter short flags of the reference', () => {
  let cl = parseCommandLine(['-DV']);
  assert.deepEqual([cl.options.debug, cl.options.trace], [true, true]);
  cl = parseCommandLine(['-DVV']);
  assert.deepEqual([cl.options.debug, cl.options.trace], [true, true]);
  cl = parseCommandLine(['-VV']);
  assert.deepEqual([cl.options.debug, cl.options.trace], [undefined, true]);
  cl = parseCommandLine(['-ms', '8443', '-sl', 'reload=123']);
  assert.equal(cl.extra.get('https_port'), '8443');
  assert.equal(cl.signal, 'reload=123');
  cl = parseCommandLine(['--signal=ldm']);
  assert.equal(cl.signal, 'ldm');
});

test('value forms: -p 1, -p=1, --port 1, --port=1; booleans as -T=false', () => {
  for (const argv of [['-p', '4333'], ['-p=4333'], ['--port', '4333'], ['--port=4333']]) {
    assert.equal(parseCommandLine(argv).options.port, 4333, argv.join(' '));
  }
  const cl = parseCommandLine([
    '-T=false',
    '-D',
    '-l',
    '/tmp/w.log',
    '-P',
    '/tmp/w.pid',
    '--ports_file_dir',
    '/tmp',
    '-n',
    'edge',
    '-a',
    '127.0.0.1',
    '-m',
    '8222',
  ]);
  assert.deepEqual(cl.options, {
    logtime: false,
    debug: true,
    logFile: '/tmp/w.log',
    pidFile: '/tmp/w.pid',
    portsFileDir: '/tmp',
    serverName: 'edge',
    host: '127.0.0.1',
    httpPort: 8222,
  });
  assert.throws(() => parseCommandLine(['-T', 'false']), UsageError);
  assert.throws(() => parseCommandLine(['-p', 'abc']), UsageError);
  assert.throws(() => parseCommandLine(['-sl']), UsageError);
});

test('flags win over the config file, booleans included, as the reference', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-flags-'));
  try {
    const file = join(dir, 'server.conf');
    writeFileSync(
      file,
      'listen: 0.0.0.0:4000\ndebug: false\ntrace: true\nlogtime: false\nmax_payload: 2MB\nserver_name: from-file\n',
    );
    const cl = parseCommandLine([
      '-c',
      file,
      '-p',
      '5000',
      '-D',
      '-V=false',
      '-T',
      '-n',
      'from-flag',
    ]);
    const o = resolveOptions(resolveSettings(cl).options);
    assert.equal(o.host, '0.0.0.0', 'the file, where no flag says otherwise');
    assert.equal(o.port, 5000);
    assert.equal(o.debug, true);
    assert.equal(o.trace, false);
    assert.equal(o.logtime, true);
    assert.equal(o.serverName, 'from-flag');
    assert.equal(o.maxPayload, 2 * 1024 * 1024);

    // A reload reads the file again and puts the same flags on top.
    writeFileSync(file, 'listen: 0.0.0.0:4000\nport: 4001\ndebug: false\nmax_payload: 4MB\n');
    const again = resolveOptions(resolveSettings(cl).options);
    assert.deepEqual([again.port, again.debug, again.maxPayload], [5000, true, 4 * 1024 * 1024]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('flags of the reference that wirebus ignores are accepted and warned about', () => {
  const cl = parseCommandLine([
    '-s',
    '-r',
    'udp://logs:514',
    '--log_size_limit',
    '1GB',
    '--max_traced_msg_len=64',
    '--profile',
    '6060',
    '-p',
    '4333',
  ]);
  assert.equal(cl.options.port, 4333);
  assert.deepEqual(
    ignoredFlagWarnings(cl).map((w) => /--(\w+)/.exec(w)?.[1]),
    ['syslog', 'remote_syslog', 'log_size_limit', 'max_traced_msg_len', 'profile'],
  );
  assert.equal(
    ignoredFlagWarnings(cl)[0],
    'flag --syslog is not supported by wirebus and is ignored',
  );
});
