// One JetStream store_dir, one server: a second server on the same directory (a
// process or another embedded server) does not start, with a clear error; once the
// holder stops (or is killed), the directory is free again.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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
});
