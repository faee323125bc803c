// Turning JetStream on: -js/-sd and the config file's `jetstream` block, the start-up
// banner lines of the reference, INFO's `jetstream` and `domain`, the domain's API
// prefix and PubAck, and the /jsz and /varz figures (field sets as the reference's).

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect } from 'nats';
import { freePort, startWirebus } from '../helpers/process.js';
import { withServer } from '../helpers/server.js';
import { nodeHash } from '../../src/server/server.js';

/** The log's lines without pid, time and level. */
function logLines(log: string): string[] {
  return log
    .split('\n')
    .map((l) => /^\[\d+\] \S+ \S+ \[(?:INF|WRN)\] (.*)$/.exec(l)?.[1])
    .filter((l): l is string => l !== undefined);
}

/** The JetStream banner lines. */
function bannerLines(log: string): string[] {
  const all = logLines(log);
  const from = all.indexOf('Starting JetStream');
  const to = all.indexOf('-------------------------------------------');
  return all.slice(from, to + 1);
}

test('-js -sd: the reference banner, INFO jetstream: true, a stream works', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-'));
  const p = await startWirebus(await freePort(), ['-js', '-sd', dir]);
  try {
    const lines = bannerLines(p.log());
    // As nats-server 2.9.10 writes them (sizes depend on the machine).
    assert.deepEqual(lines.slice(0, 9), [
      'Starting JetStream',
      '    _ ___ _____ ___ _____ ___ ___   _   __  __',
      ' _ | | __|_   _/ __|_   _| _ \\ __| /_\\ |  \\/  |',
      '| || | _|  | | \\__ \\ | | |   / _| / _ \\| |\\/| |',
      ' \\__/|___| |_| |___/ |_| |_|_\\___/_/ \\_\\_|  |_|',
      '',
      '         https://docs.nats.io/jetstream',
      '',
      '---------------- JETSTREAM ----------------',
    ]);
    assert.match(lines[9]!, /^ {2}Max Memory: {6}\d+\.\d\d [KMGT]B$/);
    assert.match(lines[10]!, /^ {2}Max Storage: {5}\d+\.\d\d [KMGT]B$/);
    assert.equal(lines[11], `  Store Directory: "${join(dir, 'jetstream')}"`);
    assert.equal(lines[12], '-------------------------------------------');
    const nc = await connect({ servers: p.url });
    assert.equal(nc.info?.jetstream, true);
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'C', subjects: ['c'] });
    assert.equal((await nc.jetstream().publish('c')).seq, 1);
    await nc.close();
  } finally {
    await p.stop();
  }
  // With JetStream the reference shows the server's node id after its name, and says
  // when JetStream shuts down.
  const all = logLines(p.log());
  const name = all.find((l) => l.startsWith('  Name:     '))!.slice(12);
  assert.equal(all[all.indexOf(`  Name:     ${name}`) + 1], `  Node:     ${nodeHash(name)}`);
  assert.deepEqual(all.slice(-4), [
    'Initiating Shutdown...',
    'Initiating JetStream Shutdown...',
    'JetStream Shutdown',
    'Server Exiting..',
  ]);
});

test("the node id is the reference's hash of the server name", () => {
  // Name and Node lines of a nats-server 2.9.10 -js start-up.
  assert.equal(nodeHash('NDGI5UQNRFSVG5OJANUNLQZSILD6ZBJEUVHXSNY6AIEBPCY5KPYETNPX'), 'VQKvSwOX');
});

test('the jetstream block of a config file: limits and domain', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-'));
  const conf = join(dir, 'js.conf');
  writeFileSync(
    conf,
    `jetstream {\n  store_dir: "${dir}"\n  max_memory_store: 64MB\n  max_file_store: 1GB\n  domain: hub\n}\n`,
  );
  const p = await startWirebus(await freePort(), ['-c', conf]);
  try {
    const lines = bannerLines(p.log());
    assert.equal(lines[9], '  Max Memory:      64.00 MB');
    assert.equal(lines[10], '  Max Storage:     1.00 GB');
    assert.equal(lines[12], '  Domain:          hub');
    const nc = await connect({ servers: p.url });
    assert.equal((nc.info as unknown as Record<string, unknown>).domain, 'hub');
    const jsm = await nc.jetstreamManager({ domain: 'hub' });
    const info = await jsm.getAccountInfo();
    assert.equal(info.domain, 'hub');
    await jsm.streams.add({ name: 'D', subjects: ['d'], storage: 'memory' as never });
    const ack = await nc.jetstream({ domain: 'hub' }).publish('d');
    assert.deepEqual([ack.stream, ack.seq, ack.domain], ['D', 1, 'hub']);
    await nc.close();
  } finally {
    await p.stop();
  }
});

/**
 * Bad JetStream settings and nats-server 2.9.10's message for each, recorded with the
 * same file (it exits 1 and puts column 0 or the key's column in the position; wirebus
 * exits 2 and points at the value).
 */
const BAD_CONFIGS: [string, string][] = [
  ['jetstream: maybe', "Expected 'enabled' or 'disabled' for string value, got 'maybe'"],
  ['jetstream: 5', 'Expected map, bool or string to define JetStream, got int64'],
  // Quoted sizes are read by getStorageSize: one K, M, G or T at the end, nothing after.
  [
    'jetstream { max_file_store: "2GB" }',
    'max_file_store strconv.ParseInt: parsing "2G": invalid syntax',
  ],
  [
    'jetstream { max_memory_store: "10g" }',
    'max_mem_store sizes defined as strings must end in K, M, G, T',
  ],
  ['jetstream { max_memory_store: 1.5 }', 'max_mem_store must be int64 or string'],
  ['jetstream { bogus: 1 }', 'unknown field "bogus"'],
  ['jetstream { domain: "a.b" }', 'invalid domain name: may not contain ., * or >'],
  [
    'jetstream { domain: "a b" }',
    'invalid domain name: derived "$JS.a b.API.>" is not a valid subject',
  ],
  [
    'accounts { A { users: [{user: a, password: a}], jetstream: { max_mem: "x" } } }',
    'Expected a parseable size for "max_mem", got x',
  ],
  [
    'accounts { A { users: [{user: a, password: a}], jetstream: { max_bytes: 1 } } }',
    'Expected a parseable bool for "max_bytes", got 1',
  ],
  [
    'accounts { A { users: [{user: a, password: a}], jetstream: maybe } }',
    "Expected 'enabled' or 'disabled' for string value, got 'maybe'",
  ],
];

test("bad JetStream settings in a config file exit 2 with the reference's message", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-'));
  for (const [i, [text, message]] of BAD_CONFIGS.entries()) {
    const conf = join(dir, `bad${i}.conf`);
    writeFileSync(conf, text + '\n');
    await assert.rejects(startWirebus(await freePort(), ['-c', conf]), (err: Error) => {
      assert.match(err.message, /exited before it was ready \(2\)/, text);
      assert.ok(err.message.includes(`: ${message}\n`), `${text}: ${err.message}`);
      return true;
    });
  }
});

/** The keys of a JSON object, recursively, as "a.b.c" paths. */
function paths(v: unknown, prefix = ''): string[] {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return [prefix];
  return Object.entries(v as Record<string, unknown>).flatMap(([k, x]) =>
    paths(x, prefix === '' ? k : `${prefix}.${k}`),
  );
}

test('/jsz and /varz carry the JetStream figures with the reference fields', async () => {
  await withServer({ jetstream: true, httpPort: -1 }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'S1', subjects: ['a.>'], storage: 'memory' as never });
    await nc.jetstream().publish('a.b', new TextEncoder().encode('hi'));
    await jsm.consumers.add('S1', { durable_name: 'd1' });
    await nc.close();
    const base = `http://127.0.0.1:${s.httpPort}`;
    const jsz = (await (await fetch(`${base}/jsz`)).json()) as Record<string, unknown>;
    // Recorded from nats-server 2.9.10 -js with the same stream, message and consumer.
    assert.deepEqual(paths(jsz), [
      'server_id',
      'now',
      'config.max_memory',
      'config.max_storage',
      'memory',
      'storage',
      'reserved_memory',
      'reserved_storage',
      'accounts',
      'ha_assets',
      'api.total',
      'api.errors',
      'streams',
      'consumers',
      'messages',
      'bytes',
    ]);
    assert.deepEqual(
      [jsz.memory, jsz.accounts, jsz.streams, jsz.consumers, jsz.messages, jsz.bytes],
      [21, 1, 1, 1, 1, 21],
    );
    const text = await (await fetch(`${base}/jsz?consumers=true&config=true`)).text();
    assert.match(text, /"reserved_memory": 18446744073709551615/);
    const detail = JSON.parse(text) as {
      account_details: { stream_detail: { consumer_detail: { name: string }[] }[] }[];
    };
    assert.equal(detail.account_details[0]!.stream_detail[0]!.consumer_detail[0]!.name, 'd1');
    const varz = (await (await fetch(`${base}/varz`)).json()) as { jetstream: unknown };
    assert.deepEqual(paths(varz.jetstream), [
      'config.max_memory',
      'config.max_storage',
      'stats.memory',
      'stats.storage',
      'stats.reserved_memory',
      'stats.reserved_storage',
      'stats.accounts',
      'stats.ha_assets',
      'stats.api.total',
      'stats.api.errors',
    ]);
  });
});

test('with a cluster configured, the start-up log says JetStream stays single-server', async () => {
  const p = await startWirebus(await freePort(), [
    '-js',
    '--cluster',
    `nats://127.0.0.1:${await freePort()}`,
  ]);
  try {
    assert.ok(
      logLines(p.log()).includes(
        "JetStream is single-server in wirebus: streams on this node are not replicated; a replicated JetStream is a nats-server cluster's job",
      ),
      p.log(),
    );
  } finally {
    await p.stop();
  }
});
