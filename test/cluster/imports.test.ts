// Stream imports on one server, against nats-server 2.9.10 on the same bytes: the
// subscriptions of an importing account receive what the reference delivers to
// them (subscriptions on the import's subject, narrower, wider or overlapping it,
// queue groups), and a request that a service import brought into the exporter is
// not exported again as a stream. The same config file starts both servers.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { attachSecurityFromSettings } from '../../src/auth/config.js';
import { loadConfig } from '../../src/config/load.js';
import { Server } from '../../src/server/server.js';
import { freePort } from '../helpers/process.js';
import { RawClient } from '../helpers/raw.js';
import { referenceMissing, sleep, waitFor } from './helpers.js';

const missing = referenceMissing();

const CONF = `
accounts {
  A: {
    users: [ { user: a, password: a } ]
    exports: [
      { stream: "feed.>" }, { stream: "news.>" }, { stream: "alerts.>" }
      { stream: "svc.>" }, { service: "svc.>" }
    ]
  }
  B: {
    users: [ { user: b, password: b } ]
    imports: [
      { stream: { account: A, subject: "feed.>" }, prefix: "fromA" }
      { stream: { account: A, subject: "news.*" }, to: "headlines.*" }
      { stream: { account: A, subject: "alerts.fire" }, to: "fire" }
      { stream: { account: A, subject: "svc.>" } }
      { service: { account: A, subject: "svc.x" }, to: "ask" }
    ]
  }
}
`;

/** What b and a receive on a server listening on port. */
async function transcript(port: number): Promise<{ a: string; b: string }> {
  const login = async (user: string): Promise<RawClient> => {
    const c = await RawClient.open(port);
    c.send(`CONNECT {"verbose":false,"user":"${user}","pass":"${user}"}\r\nPING\r\n`);
    assert.ok(await c.waitFor((t) => t.endsWith('PONG\r\n')));
    c.take();
    return c;
  };
  const a = await login('a');
  const b = await login('b');
  const subs = [
    'fromA.feed.x',
    'fromA.feed.*',
    'fromA.>',
    'fromA.*.x',
    '*.feed.>',
    '*',
    'headlines.y',
    'headlines.>',
    '>',
    'svc.>',
  ];
  let ops = subs.map((s, i) => `SUB ${s} ${i + 1}\r\n`).join('');
  // Two members of one group: each message goes to one of them.
  ops += 'SUB fromA.feed.x q 50\r\nSUB fromA.> q 51\r\n';
  b.send(ops + 'PING\r\n');
  assert.ok(await b.waitFor((t) => t.endsWith('PONG\r\n')));
  b.take();
  a.send('SUB svc.x 9\r\nPING\r\n');
  assert.ok(await a.waitFor((t) => t.endsWith('PONG\r\n')));
  a.take();
  for (const subject of ['feed.x', 'feed.y.z', 'news.y', 'alerts.fire', 'alerts.other', 'svc.y']) {
    a.send(`PUB ${subject} 2\r\nhi\r\n`);
  }
  // Through the service import: A's service sees it, B's stream import of svc.> does not.
  b.send('PUB ask _INBOX.1 1\r\n?\r\n');
  await sleep(200);
  a.send('PING\r\n');
  b.send('PING\r\n');
  assert.ok(await a.waitFor((t) => t.endsWith('PONG\r\n')));
  assert.ok(await b.waitFor((t) => t.endsWith('PONG\r\n')));
  const out = { a: a.take(), b: b.take() };
  a.close();
  b.close();
  return out;
}

/** The MSG records of a transcript, sorted; queue members (sid 50, 51) as one. */
function records(text: string): string[] {
  const out: string[] = [];
  const re = /MSG (\S+) (\S+)(?: (\S+))? (\d+)\r\n([^\r]*)\r\n/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const sid = m[2] === '50' || m[2] === '51' ? 'q' : m[2]!;
    const reply = m[3] === undefined ? '' : m[3].startsWith('_R_.') ? ' _R_' : ` ${m[3]}`;
    out.push(`${m[1]} ${sid}${reply} ${m[5]}`);
  }
  return out.sort();
}

describe('stream imports on one server', { skip: missing ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'wbi-'));
  const file = join(dir, 'accounts.conf');
  writeFileSync(file, CONF);
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('deliver what the reference delivers', async () => {
    const config = loadConfig(file);
    const wb = new Server({ ...config.options, host: '127.0.0.1', port: 0, quiet: true });
    attachSecurityFromSettings(wb, config, new Map());
    await wb.start();
    const port = await freePort();
    const ref = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-c', file], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    ref.stderr.setEncoding('utf8');
    ref.stderr.on('data', (t: string) => (log += t));
    try {
      await waitFor('nats-server', () => log.includes('Server is ready'), 8000);
      const expected = await transcript(port);
      const actual = await transcript(wb.port);
      assert.deepEqual(records(actual.b), records(expected.b));
      assert.deepEqual(records(actual.a), records(expected.a));
      assert.ok(records(expected.b).length > 10, expected.b);
    } finally {
      ref.kill('SIGKILL');
      await wb.close();
    }
  });
});
