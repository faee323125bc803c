// What the FILE store does beyond the shared suite: the directory lock, slices and
// their removal, limits that hold across restarts, subs.dat compaction, bounded
// open files, and reads of messages no longer cached.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Long } from '../../src/streaming/protocol/index.js';
import { FileStore } from '../../src/streaming/store/file.js';
import { DeadFileError, FilePool, StoreFile } from '../../src/streaming/store/file-pool.js';
import type { FileStoreOptions } from '../../src/streaming/store/file-options.js';
import type { StoredMsg } from '../../src/streaming/store/index.js';
import { assertSameMsg, msg, nanosFromNow, sleep, sub } from './store-fixtures.js';
import { cleanupDirs, tempDir } from './file-fixtures.js';

after(cleanupDirs);

type Options = Omit<FileStoreOptions, 'dir'>;

async function open(dir: string, options: Options = {}): Promise<FileStore> {
  const store = new FileStore({ dir, ...options });
  await store.recover();
  return store;
}

async function slices(dir: string, channel = 'foo'): Promise<string[]> {
  const names = await readdir(join(dir, channel));
  return names.filter((n) => n.startsWith('msgs.')).sort();
}

function fill(store: FileStore, channel: string, from: number, to: number): StoredMsg[] {
  const ch = store.lookupChannel(channel) ?? store.createChannel(channel);
  const out: StoredMsg[] = [];
  for (let seq = from; seq <= to; seq++) {
    const m = msg(channel, seq);
    ch.msgs.store(m);
    out.push(m);
  }
  return out;
}

describe('file store: directory lock', () => {
  it('a second store on the same directory is refused while the first is open', async () => {
    const dir = await tempDir();
    const first = await open(dir);
    const second = new FileStore({ dir });
    await assert.rejects(second.recover(), /is in use by another server \(pid \d+\)/);
    assert.equal(await second.tryExclusiveLock(), false);
    assert.equal(await first.tryExclusiveLock(), true);
    await first.close();
    await second.close();
    const third = await open(dir);
    await third.close();
  });

  it('a lock left by a process that died is taken over at once', async () => {
    const dir = await tempDir();
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    await writeFile(
      join(dir, '.rootdir.lck'),
      JSON.stringify({ id: 'x', host: hostname(), pid: Number(gone.stdout), since: '' }),
    );
    const store = await open(dir);
    assert.equal(await store.tryExclusiveLock(), true);
    await store.close();
  });

  it('a standby takes the lock once the active store closes (fault tolerance)', async () => {
    const dir = await tempDir();
    const active = await open(dir);
    const standby = new FileStore({ dir });
    assert.equal(await standby.tryExclusiveLock(), false);
    fill(active, 'foo', 1, 3);
    await active.close();
    // The standby's helper keeps trying (every 250 ms): poll, as the FT loop does.
    let locked = false;
    for (let i = 0; i < 40 && !locked; i++) {
      locked = await standby.tryExclusiveLock();
      if (!locked) await sleep(50);
    }
    assert.equal(locked, true);
    await standby.recover();
    assert.equal(standby.lookupChannel('foo')!.msgs.count, 3);
    await standby.close();
  });
});

describe('file store: slices', () => {
  it('rotates by message count and reads every slice back after a restart', async () => {
    const dir = await tempDir();
    const store = await open(dir, { sliceMaxMsgs: 4 });
    const stored = fill(store, 'foo', 1, 10);
    await store.flush();
    assert.deepEqual(await slices(dir), [
      'msgs.1.dat',
      'msgs.1.idx',
      'msgs.2.dat',
      'msgs.2.idx',
      'msgs.3.dat',
      'msgs.3.idx',
    ]);
    await store.close();
    const again = await open(dir, { sliceMaxMsgs: 4, cacheBytes: 0 });
    const { msgs } = again.lookupChannel('foo')!;
    for (const m of stored) assertSameMsg(await msgs.lookup(m.sequence), m);
    await again.close();
  });

  it('after a restart, old and new messages are each found under their sequence', async () => {
    const dir = await tempDir();
    let store = await open(dir);
    const stored = fill(store, 'foo', 1, 20);
    await store.close();
    store = await open(dir);
    stored.push(...fill(store, 'foo', 21, 25));
    const { msgs } = store.lookupChannel('foo')!;
    for (const m of stored) assertSameMsg(await msgs.lookup(m.sequence), m);
    await store.close();
  });

  it('rotates by bytes and by age', async () => {
    const dir = await tempDir();
    // The reference's count: a message is its bytes + 40; a slice is full once it holds the limit.
    const size = msg('foo', 1).encoded.length + 40;
    const store = await open(dir, { sliceMaxBytes: 3 * size, sliceMaxAge: 150 });
    fill(store, 'foo', 1, 7);
    await store.flush();
    assert.equal((await slices(dir)).length, 6);
    await sleep(200);
    fill(store, 'foo', 8, 8);
    await store.flush();
    assert.equal((await slices(dir)).length, 8);
    await store.close();
  });

  it('max_msgs drops whole slices and deletes their files; a restart applies limits again', async () => {
    const dir = await tempDir();
    const store = await open(dir, { sliceMaxMsgs: 5, limits: { maxMsgs: 12 } });
    fill(store, 'foo', 1, 30);
    const { msgs } = store.lookupChannel('foo')!;
    assert.equal(msgs.firstSequence, 19);
    assert.equal(msgs.count, 12);
    await store.flush();
    // 19..20 in slice 4, then 5 and 6: slices 1 to 3 are gone.
    assert.deepEqual(
      (await slices(dir)).filter((n) => n.endsWith('.dat')),
      ['msgs.4.dat', 'msgs.5.dat', 'msgs.6.dat'],
    );
    await store.close();
    // As the reference: nothing says which messages of a slice were dropped, the limits
    // of the restart drop them again.
    let again = await open(dir, { sliceMaxMsgs: 5, limits: { maxMsgs: 12 } });
    let m2 = again.lookupChannel('foo')!.msgs;
    assert.deepEqual([m2.firstSequence, m2.count], [19, 12]);
    assert.equal(await m2.lookup(17), undefined);
    await again.close();
    // Looser limits: the slices still on disk are read whole (the reference's behavior).
    again = await open(dir, { sliceMaxMsgs: 5, limits: { maxMsgs: 100 } });
    m2 = again.lookupChannel('foo')!.msgs;
    assert.deepEqual([m2.firstSequence, m2.count], [16, 15]);
    await again.close();
  });

  it('limits applied at a restart: max_msgs and max_bytes lowered, max_age passed', async () => {
    const dir = await tempDir();
    let store = await open(dir, { sliceMaxMsgs: 3 });
    const stored = fill(store, 'foo', 1, 10);
    fill(store, 'bar', 1, 10);
    const old = store.createChannel('old');
    for (let seq = 1; seq <= 5; seq++) old.msgs.store(msg('old', seq, nanosFromNow(-60_000)));
    old.msgs.store(msg('old', 6));
    await store.close();
    const per = msg('bar', 10).encoded.length + 40;
    store = await open(dir, {
      sliceMaxMsgs: 3,
      limits: {
        maxAge: 30_000,
        perChannel: { foo: { maxMsgs: 4 }, bar: { maxBytes: 2 * per } },
      },
    });
    const foo = store.lookupChannel('foo')!.msgs;
    assert.deepEqual([foo.firstSequence, foo.lastSequence, foo.count], [7, 10, 4]);
    assertSameMsg(await foo.lookup(7), stored[6]!);
    const bar = store.lookupChannel('bar')!.msgs;
    assert.deepEqual([bar.firstSequence, bar.count], [9, 2]);
    assert.ok(bar.bytes <= 2 * per);
    const oldMsgs = store.lookupChannel('old')!.msgs;
    assert.deepEqual([oldMsgs.firstSequence, oldMsgs.count], [6, 1]);
    await store.close();
    // Whole slices that limits dropped stay dropped; the rest is read again (the
    // reference's behavior: slices of 3, so foo keeps 7..10, bar 7..10, old 4..6).
    store = await open(dir, { sliceMaxMsgs: 3 });
    assert.equal(store.lookupChannel('foo')!.msgs.firstSequence, 7);
    assert.equal(store.lookupChannel('bar')!.msgs.firstSequence, 7);
    assert.equal(store.lookupChannel('old')!.msgs.firstSequence, 4);
    await store.close();
  });

  it('slice_archive_script is given each slice that limits remove, renamed .bak', async () => {
    const dir = await tempDir();
    const log = join(dir, 'archived.txt');
    const script = join(dir, 'archive.sh');
    // The script removes the slice before it logs it: a logged line means that slice is gone.
    await writeFile(script, `#!/bin/sh\nrm -f "$2" "$3"\necho "$1 $2 $3" >> ${log}\n`, {
      mode: 0o755,
    });
    const store = await open(dir, {
      sliceMaxMsgs: 2,
      sliceArchiveScript: script,
      limits: { maxMsgs: 3 },
    });
    // On disk first: slices dropped in the turn that made them are never written.
    fill(store, 'foo', 1, 4);
    await store.flush();
    fill(store, 'foo', 5, 7);
    await store.flush();
    let lines: string[] = [];
    for (let i = 0; i < 500 && lines.length < 2; i++) {
      await sleep(20);
      lines = (await readFile(log, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
    }
    const foo = join(dir, 'foo');
    // Each slice's script runs on its own, as the reference runs them: either may log first.
    lines.sort();
    assert.deepEqual(lines, [
      `foo ${foo}/msgs.1.dat.bak ${foo}/msgs.1.idx.bak`,
      `foo ${foo}/msgs.2.dat.bak ${foo}/msgs.2.idx.bak`,
    ]);
    assert.deepEqual(await slices(dir), ['msgs.3.dat', 'msgs.3.idx', 'msgs.4.dat', 'msgs.4.idx']);
    await store.close();
  });

  it('parallel_recovery recovers channels concurrently, each whole', async () => {
    const dir = await tempDir();
    let store = await open(dir, { limits: { maxChannels: 0 } });
    const stored = new Map<string, StoredMsg[]>();
    for (let i = 0; i < 12; i++) stored.set(`ch${i}`, fill(store, `ch${i}`, 1, 5));
    await store.close();
    store = await open(dir, { parallelRecovery: 4, cacheBytes: 0, limits: { maxChannels: 0 } });
    assert.equal(store.channelCount, 12);
    for (const [name, msgs] of stored) {
      for (const m of msgs)
        assertSameMsg(await store.lookupChannel(name)!.msgs.lookup(m.sequence), m);
    }
    await store.close();
  });

  it('max_age expiring everything keeps the last sequence across a restart', async () => {
    const dir = await tempDir();
    let store = await open(dir, { limits: { maxAge: 100 } });
    fill(store, 'foo', 1, 3);
    await sleep(250);
    assert.equal(store.lookupChannel('foo')!.msgs.count, 0);
    await store.close();
    store = await open(dir, { limits: { maxAge: 100 } });
    const { msgs } = store.lookupChannel('foo')!;
    assert.deepEqual([msgs.firstSequence, msgs.lastSequence, msgs.count], [4, 3, 0]);
    msgs.store(msg('foo', 4));
    await store.close();
  });

  it('finds sequences by time across slices after a restart', async () => {
    const dir = await tempDir();
    let store = await open(dir, { sliceMaxMsgs: 3 });
    const base = Long.fromString('1712000000000000000');
    const foo = store.createChannel('foo');
    for (let seq = 1; seq <= 10; seq++) foo.msgs.store(msg('foo', seq, base.add(seq * 10)));
    await store.close();
    store = await open(dir, { sliceMaxMsgs: 3 });
    const { msgs } = store.lookupChannel('foo')!;
    assert.equal(await msgs.sequenceFromTimestamp(base), 1);
    assert.equal(await msgs.sequenceFromTimestamp(base.add(45)), 5);
    assert.equal(await msgs.sequenceFromTimestamp(base.add(70)), 7);
    assert.equal(await msgs.sequenceFromTimestamp(base.add(101)), 11);
    await store.close();
  });
});

describe('file store: subscriptions, clients, files', () => {
  it('compacts subs.dat once mostly obsolete, and the state survives a restart', async () => {
    const dir = await tempDir();
    const tuning = { compactMinSize: 1024, compactInterval: 0, compactFrag: 50 };
    let store = await open(dir, tuning);
    const { subs } = store.createChannel('foo');
    const s = subs.create(sub({ durableName: 'dur', isDurable: true }));
    const gone = subs.create(sub());
    subs.delete(gone.id);
    for (let seq = 1; seq <= 2000; seq++) {
      subs.addPending(s.id, seq);
      if (seq > 3) subs.ack(s.id, seq - 3);
    }
    await store.flush();
    const size = (await stat(join(dir, 'foo', 'subs.dat'))).size;
    assert.ok(size < 8 * 1024, `subs.dat not compacted (${size} bytes)`);
    await store.close();
    store = await open(dir);
    const { subs: again } = store.lookupChannel('foo')!;
    const [back] = [...again.all()];
    assert.equal(back!.record.lastSent, 2000);
    assert.deepEqual(
      [...back!.pending].sort((a, b) => a - b),
      [1998, 1999, 2000],
    );
    // IDs go on after the compaction forgot the deleted one.
    assert.equal(again.create(sub()).id, 3);
    await store.close();
  });

  it('file_compact_enabled false: subs.dat keeps every record, and the state is the same', async () => {
    const dir = await tempDir();
    let store = await open(dir, {
      compact: false,
      compactMinSize: 1024,
      compactInterval: 0,
      compactFrag: 50,
    });
    const { subs } = store.createChannel('foo');
    const s = subs.create(sub({ durableName: 'dur', isDurable: true }));
    for (let seq = 1; seq <= 2000; seq++) {
      subs.addPending(s.id, seq);
      if (seq > 3) subs.ack(s.id, seq - 3);
    }
    await store.flush();
    // 3,997 records of at least 8 bytes each, none of them compacted away.
    const size = (await stat(join(dir, 'foo', 'subs.dat'))).size;
    assert.ok(size > 3997 * 8, `subs.dat compacted (${size} bytes)`);
    await store.close();
    store = await open(dir);
    const [back] = [...store.lookupChannel('foo')!.subs.all()];
    assert.equal(back!.record.lastSent, 2000);
    assert.deepEqual(
      [...back!.pending].sort((a, b) => a - b),
      [1998, 1999, 2000],
    );
    await store.close();
  });

  it('compacts subs.dat with more pending messages than one buffer of the snapshot holds', async () => {
    const dir = await tempDir();
    const tuning = { compactMinSize: 1024, compactInterval: 0, compactFrag: 50 };
    let store = await open(dir, tuning);
    const { subs } = store.createChannel('foo');
    const s = subs.create(sub({ durableName: 'dur', isDurable: true }));
    // 20,000 pending (some 280 KB of records once compacted), 20,000 acked.
    for (let seq = 1; seq <= 40_000; seq++) subs.addPending(s.id, seq);
    for (let seq = 1; seq <= 40_000; seq += 2) subs.ack(s.id, seq);
    await store.flush();
    await store.close();
    store = await open(dir);
    const [back] = [...store.lookupChannel('foo')!.subs.all()];
    assert.equal(back!.record.lastSent, 40_000);
    const pending = [...back!.pending].sort((a, b) => a - b);
    assert.equal(pending.length, 20_000);
    assert.ok(pending.every((seq, i) => seq === 2 * (i + 1)));
    // A compaction wrote it (the records alone were more than 1 MB).
    const size = (await stat(join(dir, 'foo', 'subs.dat'))).size;
    assert.ok(size < 600 * 1024, `subs.dat not compacted (${size} bytes)`);
    await store.close();
  });

  it('keeps open files under fds_limit with many channels', async () => {
    const dir = await tempDir();
    const store = await open(dir, { fdsLimit: 8, limits: { maxChannels: 0 } });
    for (let i = 0; i < 40; i++) fill(store, `ch${i}`, 1, 3);
    await store.flush();
    assert.ok(store.openFiles <= 8, `${store.openFiles} files open`);
    await store.close();
    const again = await open(dir, { fdsLimit: 8, cacheBytes: 0 });
    for (let i = 0; i < 40; i++) {
      assert.equal((await again.lookupChannel(`ch${i}`)!.msgs.lookup(2))?.sequence, 2);
    }
    assert.ok(again.openFiles <= 8);
    await again.close();
  });

  it('reads uncached messages in blocks, concurrently, while new ones are stored', async () => {
    const dir = await tempDir();
    const store = await open(dir, { cacheBytes: 2000, readBufferSize: 1500 });
    const stored = fill(store, 'foo', 1, 500);
    const { msgs } = store.lookupChannel('foo')!;
    const reads = stored.map((m) => Promise.resolve(msgs.lookup(m.sequence)));
    stored.push(...fill(store, 'foo', 501, 600));
    const got = await Promise.all(reads);
    got.forEach((m, i) => {
      assertSameMsg(m, stored[i]!);
    });
    await store.close();
  });

  it('a write error fails flush() and every later store: nothing is acknowledged that is not on disk', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    const { msgs } = store.createChannel('foo');
    // The directory goes away behind the store's back (before the turn ends, when the
    // channel's first writes go out): they fail.
    rmSync(join(dir, 'foo'), { recursive: true });
    msgs.store(msg('foo', 1));
    await assert.rejects(store.flush(), /file store: write failed, store stopped: .*ENOENT/);
    assert.throws(() => msgs.store(msg('foo', 2)), /write failed/);
    await assert.rejects(store.flush(), /write failed/);
    await store.close();
  });

  it('a channel deleted and created again in one turn keeps the new one whole', async () => {
    const dir = await tempDir();
    const tuning = { sliceMaxMsgs: 2, limits: { maxMsgs: 3 } };
    let store = await open(dir, tuning);
    // Limits remove slices 1 to 3 of the old channel: file work queued for the turn's end.
    fill(store, 'foo', 1, 9);
    store.deleteChannel('foo');
    const stored = fill(store, 'foo', 1, 5);
    await store.close();
    store = await open(dir, tuning);
    const { msgs } = store.lookupChannel('foo')!;
    assert.deepEqual([msgs.firstSequence, msgs.lastSequence, msgs.count], [3, 5, 3]);
    for (const m of stored.slice(2)) assertSameMsg(await msgs.lookup(m.sequence), m);
    await store.close();
  });

  it('a file removed while it is being opened for a write is not written', async () => {
    const dir = await tempDir();
    const pool = new FilePool(4);
    const file = new StoreFile(join(dir, 'x.dat'));
    let wrote = false;
    const use = pool.use(
      file,
      async () => {
        wrote = true;
        return Promise.resolve();
      },
      true,
    );
    // As deleteChannel does, before the open completes (its path may be reused).
    file.dead = true;
    await assert.rejects(use, DeadFileError);
    assert.equal(wrote, false);
    assert.equal(pool.openCount, 0);
  });

  it('deleting a channel removes its directory; a new one of that name starts empty', async () => {
    const dir = await tempDir();
    const store = await open(dir);
    fill(store, 'foo', 1, 3);
    store.deleteChannel('foo');
    fill(store, 'foo', 1, 1);
    await store.close();
    const again = await open(dir);
    assert.equal(again.lookupChannel('foo')!.msgs.count, 1);
    // Every directory of the root is a channel to the reference: nothing else is left.
    const dirs = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory());
    assert.deepEqual(
      dirs.map((e) => e.name),
      ['foo'],
    );
    await again.close();
  });
});
