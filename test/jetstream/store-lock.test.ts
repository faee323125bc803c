// One JetStream store_dir, one server: a second server on the same directory (a
// process or another embedded server) does not start, with a clear error; once the
// holder stops (or is killed), the directory is free again.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../src/index.js';
import { freePort, startWirebus } from '../helpers/process.js';
import { cleanupDirs, tempDir as storeDir } from '../streaming/file-fixtures.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
after(cleanupDirs);

const IN_USE = /JetStream store directory ".*" is in use by another server \(pid \d+\)/;

describe('JetStream store_dir lock', () => {
  it('a second embedded server on the same store_dir fails to start; the first keeps it', async () => {
    const dir = await storeDir();
    const first = await startServer({ host: '127.0.0.1', port: 0, jetstream: { storeDir: dir } });
    try {
      assert.ok(existsSync(join(dir, 'jetstream', '.rootdir.lck')));
      await assert.rejects(
        startServer({ host: '127.0.0.1', port: 0, jetstream: { storeDir: dir } }),
        IN_USE,
      );
      // Another directory is no problem.
      const other = await startServer({
        host: '127.0.0.1',
        port: 0,
        jetstream: { storeDir: await storeDir() },
      });
      await other.close();
    } finally {
      await first.close();
    }
    // Released on close: the directory can be used again.
    const again = await startServer({ host: '127.0.0.1', port: 0, jetstream: { storeDir: dir } });
    await again.close();
  });

  it('bin/wirebus on a store_dir in use exits with the error; free again after kill -9', async () => {
    const dir = await storeDir();
    const holder = await startWirebus(await freePort(), ['-js', '-sd', dir]);
    const second = spawnSync(
      process.execPath,
      ['bin/wirebus', '-a', '127.0.0.1', '-p', String(await freePort()), '-js', '-sd', dir],
      { cwd: ROOT, encoding: 'utf8', timeout: 15_000 },
    );
    assert.notEqual(second.status, 0);
    assert.match(second.stderr, IN_USE);
    holder.child.kill('SIGKILL');
    await new Promise((r) => holder.child.once('exit', r));
    const after = await startServer({ host: '127.0.0.1', port: 0, jetstream: { storeDir: dir } });
    await after.close();
  });
  it('keeps the lock when a signal goes to its whole process group (HUP: reload)', async () => {
    // A terminal's hang-up or Ctrl-C, `timeout`, `kill -HUP -- -PGID` signal every process
    // of the group, the lock's helper too. The server reloads (here: refuses to, it has no
    // config file) and runs on; its directory must stay locked.
    const dir = await storeDir();
    const child = spawn(
      process.execPath,
      ['bin/wirebus', '-a', '127.0.0.1', '-p', String(await freePort()), '-js', '-sd', dir],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], detached: true },
    );
    let log = '';
    child.stderr.setEncoding('utf8');
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (text: string) => {
          log += text;
          if (log.includes('Server is ready')) resolve();
        });
        void exited.then(() => reject(new Error(`bin/wirebus exited:\n${log}`)));
      });
      process.kill(-child.pid!, 'SIGHUP');
      await waitFor(() => log.includes('Failed to reload server configuration'));
      // Time for a helper killed by the HUP to have been noticed.
      await new Promise((r) => setTimeout(r, 300));
      const second = await startServer({
        host: '127.0.0.1',
        port: 0,
        jetstream: { storeDir: dir },
      }).then(
        async (s) => {
          await s.close();
          return 'started';
        },
        (err: unknown) => String(err),
      );
      assert.match(second, IN_USE);
      assert.doesNotMatch(log, /lock/);
      assert.equal(child.exitCode, null);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });
});

async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(done());
}
