// The pid and ports files: contents as the reference writes them, and a reload
// that moves them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import {
  portsFilePath,
  portsOf,
  processFilesReloadHook,
  removePortsFile,
  writePidFile,
  writePortsFile,
} from '../../src/ops/process-files.js';
import { Server } from '../../src/server/server.js';
import { MemoryLogger, startLogged, tempDir } from './helpers.js';

test('the ports file lists each listener as the reference (omitting empty lists)', async () => {
  const { server } = await startLogged({});
  try {
    assert.deepEqual(portsOf(server, null), { nats: [`nats://127.0.0.1:${server.port}`] });
    assert.deepEqual(portsOf(server, { host: '127.0.0.1', port: 8222 }), {
      nats: [`nats://127.0.0.1:${server.port}`],
      monitoring: ['http://127.0.0.1:8222'],
    });
  } finally {
    await server.close();
  }
  // Bound to every address: each IPv4 address of this host (Node's 0.0.0.0 is IPv4 only).
  const any = new Server({ host: '0.0.0.0', port: 0 }, new MemoryLogger());
  any.port = 4222;
  const urls = portsOf(any, null).nats ?? [];
  assert.ok(urls.includes('nats://127.0.0.1:4222'), urls.join(' '));
  for (const u of urls) assert.equal(isIP(/^nats:\/\/(.*):4222$/.exec(u)?.[1] ?? ''), 4, u);
  assert.equal(portsFilePath('/run', 42), '/run/wirebus_42.ports');
});

test('a reload that changes pid_file or ports_file_dir moves the files', async () => {
  const { dir, remove } = tempDir();
  const { server, log } = await startLogged({
    pidFile: join(dir, 'a.pid'),
    portsFileDir: join(dir, 'a'),
  });
  try {
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    writePidFile(server);
    writePortsFile(server, null);
    const portsA = join(dir, 'a', `wirebus_${process.pid}.ports`);
    assert.equal(readFileSync(join(dir, 'a.pid'), 'utf8'), String(process.pid));
    assert.ok(existsSync(portsA));

    server.reloadHooks.push(processFilesReloadHook(null));
    server.applyReload({ pidFile: join(dir, 'b.pid'), portsFileDir: join(dir, 'b') });
    assert.equal(existsSync(join(dir, 'a.pid')), false);
    assert.equal(existsSync(portsA), false);
    assert.equal(readFileSync(join(dir, 'b.pid'), 'utf8'), String(process.pid));
    const portsB = join(dir, 'b', `wirebus_${process.pid}.ports`);
    assert.deepEqual(JSON.parse(readFileSync(portsB, 'utf8')), {
      nats: [`nats://127.0.0.1:${server.port}`],
    });
    assert.deepEqual(log.grep('Reloaded: p'), [
      `[INF] Reloaded: pid_file = ${join(dir, 'b.pid')}`,
      `[INF] Reloaded: ports_file_dir = ${join(dir, 'b')}`,
    ]);
    removePortsFile(server, join(dir, 'b'));
    assert.equal(existsSync(portsB), false);
    removePortsFile(server, join(dir, 'b'));
    assert.match(log.lines.at(-1) ?? '', /^\[ERR\] Error cleaning up ports file /);
  } finally {
    await server.close();
    remove();
  }
});
