// Config files an operator of the reference server already has: the samples in
// samples/ follow the reference's documentation (and the spec's §10 sample) using
// only keys wirebus implements or knowingly ignores. Each one passes
// `nats-server -t` (2.9.10) and must pass `wirebus -t`, and the options they give
// are the ones the file says.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveSettings } from '../../src/cli.js';
import { parseCommandLine } from '../../src/config/flags.js';
import { resolveOptions, type ServerOptions } from '../../src/config/options.js';
import { runCli } from './run-cli.js';

const here = dirname(fileURLToPath(import.meta.url));
const samples = join(here.replace(`${sep}dist${sep}test${sep}`, `${sep}test${sep}`), 'samples');
const sample = (name: string): string => join(samples, name);

function optionsOf(file: string): ServerOptions {
  return resolveOptions(resolveSettings(parseCommandLine(['-c', file])).options);
}

const files = [
  ...readdirSync(samples).filter((f) => f.endsWith('.conf')),
  join('include', 'server.conf'),
];

test('every sample passes -t', async () => {
  assert.ok(files.length >= 8);
  for (const file of files) {
    const { code, stderr } = await runCli(['-c', sample(file), '-t']);
    assert.equal(stderr, `wirebus: configuration file ${sample(file)} is valid\n`, file);
    assert.equal(code, 0, file);
  }
});

test("the spec's sample (without its cluster block)", () => {
  const o = optionsOf(sample('spec-core.conf'));
  assert.equal(o.host, '127.0.0.1');
  assert.equal(o.port, 4222);
  assert.equal(o.httpPort, 8222);
  assert.equal(o.serverName, 'n1');
  assert.equal(o.maxPayload, 1024 * 1024);
  assert.equal(o.maxPending, 64 * 1024 * 1024);
  assert.equal(o.maxControlLine, 4096);
  assert.equal(o.maxConnections, 65536);
  assert.equal(o.maxSubscriptions, 0);
  assert.equal(o.pingInterval, 120_000);
  assert.equal(o.pingMax, 2);
  assert.equal(o.writeDeadline, 10_000);
  assert.equal(o.lameDuckDuration, 120_000);
  assert.equal(o.lameDuckGracePeriod, 10_000);
});

test('the documented properties with their defaults spelled out', () => {
  const o = optionsOf(sample('docs-properties.conf'));
  assert.equal(o.clientAdvertise, 'nats.example.com:4222');
  assert.equal(o.maxConnections, 64 * 1000, '64K is 64 * 1000: K is decimal, KB binary');
  assert.equal(o.maxControlLine, 4096);
  assert.equal(o.disableSublistCache, false);
  assert.equal(o.pidFile, '/var/run/nats-server.pid');
  assert.equal(o.portsFileDir, '/var/run');
  assert.equal(o.httpBasePath, '/');
});

test('logging, monitoring and include samples', () => {
  const log = optionsOf(sample('docs-logging.conf'));
  assert.deepEqual(
    [log.debug, log.trace, log.logtime, log.logFile],
    [false, true, false, '/tmp/nats-server.log'],
  );
  const settings = resolveSettings(parseCommandLine(['-c', sample('docs-logging.conf')]));
  assert.deepEqual(
    settings.config?.warnings.map((w) => w.replace(/^.*docs-logging\.conf:/, '')),
    ['6:1: "logfile_size_limit" is not supported by wirebus and is ignored'],
  );
  const mon = optionsOf(sample('docs-monitoring.conf'));
  assert.deepEqual([mon.httpHost, mon.httpPort], ['localhost', 8222]);
  const inc = optionsOf(sample(join('include', 'server.conf')));
  assert.deepEqual([inc.host, inc.port], ['127.0.0.1', 4222]);
});

test('keys of the reference that wirebus ignores are warnings, the others apply', () => {
  const settings = resolveSettings(parseCommandLine(['-c', sample('ignored-keys.conf')]));
  const ignored = (settings.config?.warnings ?? []).map((w) => /"([^"]+)"/.exec(w)?.[1]);
  assert.deepEqual(ignored, [
    'syslog',
    'remote_syslog',
    'log_size_limit',
    'prof_port',
    'max_traced_msg_len',
    'connect_error_reports',
    'reconnect_error_reports',
  ]);
  const o = resolveOptions(settings.options);
  assert.deepEqual(
    [o.serverName, o.host, o.port, o.httpPort, o.httpBasePath],
    ['edge-7', '127.0.0.1', 4333, 8333, '/nats'],
  );
  assert.deepEqual(
    [o.maxConnections, o.maxSubscriptions, o.maxPending, o.maxControlLine, o.maxPayload],
    [500, 200, 8 * 1024 * 1024, 1024, 512 * 1024],
  );
  assert.deepEqual(
    [o.pingInterval, o.pingMax, o.writeDeadline, o.lameDuckDuration, o.debug],
    [30_000, 4, 5000, 45_000, true],
  );
});
