// One slice of the FILE store's log, alone: what its append() keeps in memory, and
// that the slice keeps one hidden class whatever it holds (a field that starts as a
// small integer and then gets a heap number retires the class and deoptimizes the
// publish path a fresh server has just compiled).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IoScheduler } from '../../src/streaming/store/file-io.js';
import { IEEE, INDEX_RECORD_SIZE } from '../../src/streaming/store/file-record.js';
import { Slice } from '../../src/streaming/store/file-slice.js';
import { haveSameMap } from '../helpers/v8-natives.js';

describe('FILE store slice', () => {
  it('keeps its hidden class for timestamps and creation times that are no small integers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wirebus-slice-'));
    const io = new IoScheduler({ sync: false, bufferSize: 1 << 20, fdsCap: 16 });
    try {
      const used = new Slice(1, dir, io, 0, 0, IEEE);
      const fresh = new Slice(2, dir, io, 0, 0, IEEE);
      const msg = Buffer.from('a marshaled message');
      // A low half below -2^30 and a high half above 2^30: neither is a small integer.
      used.append(7, -0x7fff_fff0, 0x4000_0001, msg, 2, msg.length);
      used.append(8, 0x7fff_fff0, 0x4000_0001, msg, 0, msg.length);
      assert.ok(haveSameMap(used, fresh), 'append() changed the slice hidden class');
      // And what it kept is what was given.
      assert.equal(used.firstSeq, 7);
      assert.equal(used.lastSeq, 8);
      assert.equal(used.firstTsLow, -0x7fff_fff0);
      assert.equal(used.lastTsLow, 0x7fff_fff0);
      assert.equal(used.tsLowOf(7), -0x7fff_fff0);
      assert.equal(used.tsHighOf(8), 0x4000_0001);
      assert.equal(used.sizeOf(7), msg.length - 2);
      assert.equal(used.sizeOf(8), msg.length);
      assert.ok(used.createdAt > 2 ** 31);
      assert.ok(used.index!.length >= 2 * INDEX_RECORD_SIZE);
      await io.syncAll();
    } finally {
      await io.idle();
      await io.pool.closeAll();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
