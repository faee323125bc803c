// Plain client connections are driven at Node's TCP handle (src/server/tcp-transport.ts).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';
import { freePort } from '../helpers/process.js';
import { C0, RawClient } from '../helpers/raw.js';
import { transportCases } from './transport-cases.js';

transportCases('handle');

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

it('under --pending-deprecation the server prints no warning and serves clients (through net.Socket)', async () => {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--pending-deprecation', 'bin/wirebus', '-a', '127.0.0.1', '-p', String(port)],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (t: string) => (log += t));
  try {
    const deadline = Date.now() + 10_000;
    while (!log.includes('Server is ready')) {
      assert.ok(Date.now() < deadline, `not ready:\n${log}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const c = await RawClient.open(port);
    assert.equal(await c.exchange(`${C0}PING\r\n`), 'PONG\r\n');
    c.close();
    assert.doesNotMatch(log, /DeprecationWarning|DEP0111/);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
});
