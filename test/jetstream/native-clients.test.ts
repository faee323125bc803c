// The official clients beyond nats.js against the embedded JetStream, memory and file:
// nats.go (Debian's golang-github-nats-io-go-nats-dev, built offline from
// /usr/share/gocode) and the C client (libnats-dev). Each is a small program under
// test/jetstream/native/ that this file builds once and runs against a fresh server;
// the program prints "ok <step>" per step and "FAIL <step>: <why>" on the first failure.
// Both programs pass unchanged against `nats-server -js` 2.9.10. Skipped, saying
// why, when the toolchain or the client package is absent (.ci/run installs them).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServer } from '../../src/index.js';

const run = promisify(execFile);
const SOURCES = fileURLToPath(new URL('../../../test/jetstream/native/', import.meta.url));
const GOPATH = '/usr/share/gocode';
const NATS_GO = join(GOPATH, 'src/github.com/nats-io/nats.go');

function onPath(tool: string): boolean {
  return (process.env.PATH ?? '')
    .split(':')
    .some((dir) => dir !== '' && existsSync(join(dir, tool)));
}

function goSkip(): string | false {
  if (!onPath('go')) return 'needs the go toolchain (apt-get install golang-go)';
  if (!existsSync(NATS_GO))
    return 'needs nats.go (apt-get install golang-github-nats-io-go-nats-dev)';
  return false;
}

function cSkip(): string | false {
  if (!onPath('gcc')) return 'needs gcc (apt-get install gcc)';
  if (!existsSync('/usr/include/nats/nats.h'))
    return 'needs the C client (apt-get install libnats-dev)';
  return false;
}

type Storage = 'memory' | 'file';

/** Runs one built client against a fresh wirebus with JetStream on the given storage. */
async function runAgainstWirebus(binary: string, storage: Storage): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-native-'));
  const server = await startServer({
    host: '127.0.0.1',
    port: 0,
    jetstream: storage === 'file' ? { storeDir: dir } : true,
  });
  try {
    const { stdout } = await run(binary, [`nats://127.0.0.1:${server.port}`, storage], {
      timeout: 60_000,
    }).catch((err: unknown) => {
      // The program's own account of the failing step is the useful part.
      const out = (err as { stdout?: unknown }).stdout;
      throw new Error(typeof out === 'string' && out !== '' ? out : String(err));
    });
    return stdout;
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function steps(stdout: string): string[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => line.replace(/^ok /, ''));
}

const COMMON_STEPS = [
  'connect',
  'stream create',
  'publish with PubAck',
  'publish async',
  'stream get message',
  'pull fetch and ack',
  'pull nak redelivers',
  'push consumer',
  'push queue group',
  'kv create bucket',
  'kv watch',
  'kv put get',
  'kv create and update',
  'kv keys history delete',
  'kv watch updates',
  'kv ttl',
];

const work = mkdtempSync(join(tmpdir(), 'wirebus-js-native-build-'));
after(() => rmSync(work, { recursive: true, force: true }));

describe('nats.go', { skip: goSkip() }, () => {
  const binary = join(work, 'jsclient-go');
  before(async () => {
    await run('go', ['build', '-o', binary, join(SOURCES, 'jsclient.go')], {
      env: {
        ...process.env,
        GOPATH,
        GO111MODULE: 'off',
        GOFLAGS: '',
        GOCACHE: process.env.GOCACHE ?? join(tmpdir(), 'wirebus-gocache'),
      },
      timeout: 240_000,
    });
  });
  for (const storage of ['memory', 'file'] as const) {
    test(`streams, consumers, KeyValue and ObjectStore on ${storage} storage`, async () => {
      assert.deepEqual(steps(await runAgainstWirebus(binary, storage)), [
        ...COMMON_STEPS,
        'object store create',
        'object put get 5 MB',
        'object info list link delete',
      ]);
    });
  }
});

describe('the C client (libnats)', { skip: cSkip() }, () => {
  const binary = join(work, 'jsclient-c');
  before(async () => {
    await run('gcc', ['-O1', '-o', binary, join(SOURCES, 'jsclient.c'), '-lnats'], {
      timeout: 120_000,
    });
  });
  for (const storage of ['memory', 'file'] as const) {
    test(`streams, consumers and KeyValue on ${storage} storage`, async () => {
      assert.deepEqual(steps(await runAgainstWirebus(binary, storage)), COMMON_STEPS);
    });
  }
});
