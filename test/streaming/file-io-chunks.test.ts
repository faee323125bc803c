// The FILE store's append buffers: a file that gets a few records per write round
// keeps small chunks, one that fills a chunk within a round gets larger ones (up to
// buffer_size). Before, chunks doubled at every fill however slowly they filled, so a
// channel storing a few hundred bytes a turn held buffer_size bytes for each of its
// files (seen in the soak's heap snapshots: 2 MiB per .dat, issue 19).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppendFile, IoScheduler } from '../../src/streaming/store/file-io.js';
import { cleanupDirs, tempDir } from './file-fixtures.js';

after(cleanupDirs);

const BUFFER_SIZE = 1 << 20;

describe('FILE store append chunks', () => {
  it('stay small for a file written a little per round, and every byte lands in order', async () => {
    const io = new IoScheduler({ sync: false, bufferSize: BUFFER_SIZE, fdsCap: 4 });
    const path = join(await tempDir(), 'trickle.dat');
    const file = new AppendFile(path, 0, io);
    const record = Buffer.alloc(300);
    const rounds = 400;
    for (let i = 0; i < rounds; i++) {
      record.fill(i & 0xff);
      file.append(record);
      await io.flush();
    }
    // 120,000 bytes went through: the old doubling had reached 64 KiB and kept growing.
    assert.ok(file.room(1).length <= 32 * 1024, `chunk of ${file.room(1).length} bytes`);
    await io.pool.closeAll();
    const data = readFileSync(path);
    assert.equal(data.length, rounds * record.length);
    for (let i = 0; i < rounds; i++) assert.equal(data[i * record.length + 299], i & 0xff);
  });

  it('grow while one round fills them', async () => {
    const io = new IoScheduler({ sync: false, bufferSize: BUFFER_SIZE, fdsCap: 4 });
    const path = join(await tempDir(), 'burst.dat');
    const file = new AppendFile(path, 0, io);
    const record = Buffer.alloc(1000, 7);
    for (let i = 0; i < 600; i++) file.append(record);
    assert.ok(file.room(1).length >= 128 * 1024, `chunk of ${file.room(1).length} bytes`);
    await io.flush();
    await io.pool.closeAll();
    assert.equal(readFileSync(path).length, 600 * record.length);
  });
});
