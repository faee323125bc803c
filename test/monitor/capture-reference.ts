// Records the reference server's monitoring output as the fixtures of the monitor
// tests. Not a test: run it by hand after a build, with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/monitor/capture-reference.js
//   npx prettier --write test/monitor/fixtures
//
// It starts the reference with small max_pending/max_payload (so that a slow consumer
// can be produced quickly), creates two open clients with subscriptions and traffic,
// a client that closed itself and a slow consumer, then stores every endpoint's JSON
// in test/monitor/fixtures/. Ids, times and counts vary per run; the tests compare
// field names, nesting and value types only.

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect as netConnect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { RawClient } from '../helpers/raw.js';
import { CONNZ_BAD_QUERIES } from './bad-queries.js';

const fixtures = resolve(import.meta.dirname, '..', '..', '..', 'test', 'monitor', 'fixtures');

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const address = srv.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Captured {
  status: number;
  contentType: string;
  body: string;
}

async function get(base: string, path: string): Promise<Captured> {
  const res = await fetch(base + path);
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    body: await res.text(),
  };
}

function connect(name: string): string {
  return `CONNECT ${JSON.stringify({ verbose: false, pedantic: false, name, lang: 'raw', version: '1.0', protocol: 1 })}\r\n`;
}

async function main(): Promise<void> {
  const port = await freePort();
  const httpPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-capture-'));
  const conf = join(dir, 'ref.conf');
  writeFileSync(
    conf,
    `listen: 127.0.0.1:${port}\nhttp: 127.0.0.1:${httpPort}\nmax_pending: 262144\nmax_payload: 65536\n`,
  );
  const ref = spawn('nats-server', ['-c', conf], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${httpPort}`;
  try {
    for (let i = 0; i < 50; i++) {
      try {
        if ((await get(base, '/healthz')).status === 200) break;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }

    const alice = await RawClient.open(port);
    await alice.exchange(
      connect('alice') +
        'SUB foo 1\r\nSUB bar q 2\r\nSUB foo.* 3\r\nSUB auto 4\r\nUNSUB 4 10\r\nPING\r\n',
    );
    const bob = await RawClient.open(port);
    await bob.exchange(connect('bob') + 'PUB foo 5\r\nhello\r\nPUB foo.bar 5\r\nworld\r\nPING\r\n');
    await alice.waitFor((t) => t.includes('world'));

    const carol = await RawClient.open(port);
    await carol.exchange(connect('carol') + 'SUB gone 1\r\nPING\r\n');
    carol.close();

    // A subscriber that never reads: a bare socket, paused after its SUB.
    const slow = netConnect({ port, host: '127.0.0.1' });
    slow.write(connect('slow') + 'SUB slow 1\r\nPING\r\n');
    await sleep(200);
    slow.pause();
    const payload = 'x'.repeat(60000);
    for (let i = 0; i < 400; i++) {
      bob.send(`PUB slow ${payload.length}\r\n${payload}\r\n`);
      if (i % 20 !== 19) continue;
      await bob.exchange('PING\r\n', 'PONG\r\n', 5000);
      if ((await get(base, '/connz?state=closed')).body.includes('"slow"')) break;
    }
    await sleep(500);

    const json: [string, string][] = [
      ['varz', '/varz'],
      ['connz', '/connz'],
      ['connz-subs', '/connz?subs=1'],
      ['connz-subs-detail', '/connz?subs=detail'],
      ['connz-closed', '/connz?state=closed&subs=detail'],
      ['connz-any', '/connz?state=any&sort=msgs_to'],
      ['connz-auth', '/connz?auth=true'],
      ['connz-cid', '/connz?cid=1000'],
      ['connz-paged', '/connz?offset=1&limit=1'],
      ['subsz', '/subsz'],
      ['subsz-subs', '/subsz?subs=1'],
      ['subsz-test', '/subsz?subs=1&test=foo.bar'],
      ['routez', '/routez'],
      ['healthz', '/healthz'],
      ['accountz', '/accountz'],
      ['accountz-detail', '/accountz?acc=$G'],
      ['leafz', '/leafz'],
      ['gatewayz', '/gatewayz'],
      ['jsz', '/jsz'],
      ['accstatz', '/accstatz'],
    ];
    for (const [name, path] of json) {
      const c = await get(base, path);
      if (c.status !== 200) throw new Error(`${path}: HTTP ${c.status} ${c.body}`);
      writeFileSync(join(fixtures, `${name}.json`), c.body.endsWith('\n') ? c.body : c.body + '\n');
    }

    // Status, content type and exact text of error answers, JSONP and the index page.
    const other = [
      ...CONNZ_BAD_QUERIES,
      '/subsz?test=foo.*',
      '/subsz?subs=1&test=foo..bar',
      '/subsz?limit=x',
      '/healthz?js-enabled-only=x',
      '/routez?subs=x',
      '/accountz?acc=nope',
      '/nope',
      '/varz/',
      '/varz?callback=cb',
    ];
    const answers: Record<string, Captured> = {};
    for (const path of other) {
      const c = await get(base, path);
      if (path.includes('callback')) c.body = c.body.slice(0, 4) + '…';
      answers[path] = c;
    }
    const index = await get(base, '/');
    answers['/'] = { ...index, body: index.body.slice(0, 16) + '…' };
    writeFileSync(join(fixtures, 'answers.json'), JSON.stringify(answers, null, 2) + '\n');

    alice.close();
    bob.close();
    slow.destroy();
  } finally {
    ref.kill();
  }
}

await main();
