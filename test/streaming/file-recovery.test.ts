// FILE store recovery from damaged directories: each case gives the documented
// outcome (FILE-FORMAT.md, "Recovery"), never a crash or a silent loss.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FileStore } from '../../src/streaming/store/file.js';
import type { FileStoreTuning } from '../../src/streaming/store/file-options.js';
import { FileStoreError } from '../../src/streaming/store/file-record.js';
import type { StoredMsg } from '../../src/streaming/store/index.js';
import { assertSameMsg, msg, sub } from './store-fixtures.js';
import { cleanupDirs, tempDir } from './file-fixtures.js';

after(cleanupDirs);

interface Opened {
  readonly store: FileStore;
  readonly warnings: string[];
}

async function open(dir: string, tuning: Partial<FileStoreTuning> = {}): Promise<Opened> {
  const warnings: string[] = [];
  const store = new FileStore({ dir, ...tuning, warn: (w) => warnings.push(w) });
  await store.recover();
  return { store, warnings };
}

/** A store with `n` messages on foo (and a durable with pending 2, 3), closed. */
async function written(n: number): Promise<{ dir: string; stored: StoredMsg[] }> {
  const dir = await tempDir();
  const { store } = await open(dir);
  const foo = store.createChannel('foo');
  const stored: StoredMsg[] = [];
  for (let seq = 1; seq <= n; seq++) {
    const m = msg('foo', seq);
    foo.msgs.store(m);
    stored.push(m);
  }
  const d = foo.subs.create(sub({ durableName: 'dur', isDurable: true }));
  for (const seq of [1, 2, 3]) foo.subs.addPending(d.id, seq);
  foo.subs.ack(d.id, 1);
  store.addClient({
    id: 'me',
    hbInbox: '_INBOX.hb',
    connID: Buffer.from('c'),
    protocol: 1,
    pingInterval: 5,
    pingMaxOut: 88,
  });
  await store.close();
  return { dir, stored };
}

const foo = (dir: string, file: string): string => join(dir, 'foo', file);

async function assertRefused(
  dir: string,
  code: string,
  text: RegExp,
  tuning: Partial<FileStoreTuning> = {},
): Promise<FileStoreError> {
  const store = new FileStore({ dir, ...tuning });
  let caught: unknown;
  await store.recover().catch((err: unknown) => (caught = err));
  await store.close();
  assert.ok(caught instanceof FileStoreError, `expected a FileStoreError, got ${String(caught)}`);
  assert.equal(caught.code, code);
  assert.match(caught.message, text);
  return caught;
}

/** Offset of message `seq`'s record in msgs.1.dat (all messages the same size). */
function recordOffset(stored: StoredMsg[], seq: number): number {
  return 4 + (seq - 1) * (8 + stored[0]!.encoded.length);
}

describe('file store recovery', () => {
  it('a torn last record: refused naming file and offset; truncate_bad_eof cuts it', async () => {
    const { dir, stored } = await written(10);
    const dat = foo(dir, 'msgs.1.dat');
    const size = (await stat(dat)).size;
    await truncate(dat, size - 5);
    const err = await assertRefused(dir, 'TRUNCATED', /unexpected end of file/);
    assert.equal(err.file, dat);
    assert.equal(err.offset, recordOffset(stored, 10));
    assert.match(err.message, new RegExp(`msgs\\.1\\.dat at offset ${err.offset};`));
    assert.match(err.message, /--file_truncate_bad_eof/);

    const { store, warnings } = await open(dir, { truncateBadEof: true });
    const { msgs } = store.lookupChannel('foo')!;
    assert.equal(msgs.lastSequence, 9);
    assert.equal(msgs.count, 9);
    for (const m of stored.slice(0, 9)) assertSameMsg(await msgs.lookup(m.sequence), m);
    assert.ok(warnings.some((w) => /file cut there/.test(w)));
    // The next message takes the cut one's sequence, and it all survives a restart.
    msgs.store(msg('foo', 10));
    await store.close();
    const again = await open(dir);
    assert.equal(again.store.lookupChannel('foo')!.msgs.lastSequence, 10);
    assert.deepEqual(again.warnings, []);
    await again.store.close();
  });

  it('a flipped byte: refused (CRC mismatch, file and offset); truncate_bad_eof cuts there', async () => {
    const { dir, stored } = await written(10);
    const dat = foo(dir, 'msgs.1.dat');
    const bytes = await readFile(dat);
    const at = recordOffset(stored, 6) + 12;
    bytes[at] = bytes[at]! ^ 0x40;
    await writeFile(dat, bytes);
    const err = await assertRefused(dir, 'CORRUPT', /CRC mismatch/);
    assert.equal(err.offset, recordOffset(stored, 6));

    const { store, warnings } = await open(dir, { truncateBadEof: true });
    const { msgs } = store.lookupChannel('foo')!;
    assert.equal(msgs.lastSequence, 5);
    for (const m of stored.slice(0, 5)) assertSameMsg(await msgs.lookup(m.sequence), m);
    assert.ok(warnings.some((w) => /CRC mismatch .* at offset \d+: file cut there/.test(w)));
    await store.close();
  });

  it('a damaged size field makes its record fail the CRC', async () => {
    const { dir, stored } = await written(4);
    const dat = foo(dir, 'msgs.1.dat');
    const bytes = await readFile(dat);
    bytes[recordOffset(stored, 2)] = bytes[recordOffset(stored, 2)]! - 1;
    await writeFile(dat, bytes);
    const err = await assertRefused(dir, 'CORRUPT', /CRC mismatch/);
    assert.equal(err.offset, recordOffset(stored, 2));
  });

  it('a missing index is rebuilt from the .dat', async () => {
    const { dir, stored } = await written(10);
    const idx = foo(dir, 'msgs.1.idx');
    const original = await readFile(idx);
    await unlink(idx);
    const { store, warnings } = await open(dir);
    const { msgs } = store.lookupChannel('foo')!;
    assert.equal(msgs.count, 10);
    for (const m of stored) assertSameMsg(await msgs.lookup(m.sequence), m);
    assert.equal(await msgs.sequenceFromTimestamp(stored[4]!.timestamp), 5);
    assert.ok(warnings.some((w) => /index .*msgs\.1\.idx missing or unreadable, rebuilt/.test(w)));
    assert.deepEqual(await readFile(idx), original);
    await store.close();
  });

  it('a damaged or short index is rebuilt from where it goes wrong', async () => {
    const { dir, stored } = await written(10);
    const idx = foo(dir, 'msgs.1.idx');
    const original = await readFile(idx);
    const damaged = Buffer.from(original);
    damaged[4 + 32 * 7 + 3] = damaged[4 + 32 * 7 + 3]! ^ 1;
    await writeFile(idx, damaged);
    let opened = await open(dir);
    assert.ok(opened.warnings.some((w) => /damaged from record 7, rebuilt/.test(w)));
    assertSameMsg(await opened.store.lookupChannel('foo')!.msgs.lookup(8), stored[7]!);
    await opened.store.close();
    assert.deepEqual(await readFile(idx), original);
    // An index behind its .dat (the crash came between the two writes).
    await truncate(idx, 4 + 32 * 4 + 17);
    opened = await open(dir);
    assert.equal(opened.store.lookupChannel('foo')!.msgs.count, 10);
    await opened.store.close();
    assert.deepEqual(await readFile(idx), original);
  });

  it('subscriptions and clients come back; a torn subs.dat tail is refused or cut', async () => {
    const { dir } = await written(3);
    let opened = await open(dir);
    const [durable] = [...opened.store.lookupChannel('foo')!.subs.all()];
    assert.equal(durable!.record.durableName, 'dur');
    assert.deepEqual([...durable!.pending].sort(), [2, 3]);
    assert.deepEqual(
      [...opened.store.clients()].map((c) => c.id),
      ['me'],
    );
    await opened.store.close();
    const subs = foo(dir, 'subs.dat');
    await truncate(subs, (await stat(subs)).size - 2);
    await assertRefused(dir, 'TRUNCATED', /subs\.dat at offset \d+/);
    opened = await open(dir, { truncateBadEof: true });
    const [cut] = [...opened.store.lookupChannel('foo')!.subs.all()];
    // The last record (the ack of 1) is gone: 1 is pending again, as at-least-once wants.
    assert.deepEqual([...cut!.pending].sort(), [1, 2, 3]);
    await opened.store.close();
  });

  it('a flipped byte in clients.dat is refused', async () => {
    const { dir } = await written(1);
    const path = join(dir, 'clients.dat');
    const bytes = await readFile(path);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0xff;
    await writeFile(path, bytes);
    await assertRefused(dir, 'CORRUPT', /clients\.dat at offset 4/);
  });

  it('a directory of another wirebus format than the former one is refused, not converted', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'VERSION'), 'wirebus-file-store 2\n');
    await assertRefused(
      dir,
      'VERSION',
      /holds wirebus file format 2, which this version cannot convert/,
    );
  });

  it('a file of another format version is refused, not cut', async () => {
    const { dir } = await written(2);
    const dat = foo(dir, 'msgs.1.dat');
    const bytes = await readFile(dat);
    bytes.writeUInt32LE(7, 0);
    await writeFile(dat, bytes);
    const store = new FileStore({ dir, truncateBadEof: true });
    await assert.rejects(store.recover(), /unsupported file version: 7 \(supports \[1\.\.1\]\)/);
    await store.close();
  });

  it('zeros at the end of a file (extended, never written) are cut, as the reference does', async () => {
    const { dir, stored } = await written(3);
    const dat = foo(dir, 'msgs.1.dat');
    const size = (await stat(dat)).size;
    await writeFile(dat, Buffer.alloc(64), { flag: 'a' });
    const subs = foo(dir, 'subs.dat');
    const subsSize = (await stat(subs)).size;
    await writeFile(subs, Buffer.alloc(16), { flag: 'a' });
    const { store, warnings } = await open(dir);
    const { msgs } = store.lookupChannel('foo')!;
    assert.equal(msgs.lastSequence, 3);
    assertSameMsg(await msgs.lookup(3), stored[2]!);
    assert.equal(warnings.filter((w) => /zero bytes from offset \d+: cut there/.test(w)).length, 2);
    await store.close();
    assert.equal((await stat(dat)).size, size);
    assert.equal((await stat(subs)).size, subsSize);
  });

  it('a store written with another crc_poly is read with it, and refused without it', async () => {
    const dir = await tempDir();
    const poly = 0x82f63b78; // Castagnoli
    let opened = await open(dir, { crcPoly: poly });
    opened.store.createChannel('foo').msgs.store(msg('foo', 1));
    await opened.store.close();
    opened = await open(dir, { crcPoly: poly });
    assert.equal(opened.store.lookupChannel('foo')!.msgs.count, 1);
    await opened.store.close();
    await assertRefused(dir, 'CORRUPT', /CRC mismatch/);
  });

  it("two starts in a row with truncate_bad_eof are refused (the reference's guard)", async () => {
    const { dir } = await written(1);
    const opened = await open(dir, { truncateBadEof: true });
    await opened.store.close();
    await assertRefused(dir, 'IO', /should not be opened consecutively with the truncate_bad_eof/, {
      truncateBadEof: true,
    });
    // A start without it removes the witness.
    await (await open(dir)).store.close();
    await (await open(dir, { truncateBadEof: true })).store.close();
  });

  it('an empty slice (created, never written) is removed', async () => {
    const { dir, stored } = await written(3);
    await writeFile(foo(dir, 'msgs.2.dat'), '');
    const { store, warnings } = await open(dir);
    const { msgs } = store.lookupChannel('foo')!;
    assert.equal(msgs.lastSequence, 3);
    assertSameMsg(await msgs.lookup(3), stored[2]!);
    assert.deepEqual(warnings, []);
    msgs.store(msg('foo', 4));
    await store.close();
    const again = await open(dir);
    assert.equal(again.store.lookupChannel('foo')!.msgs.lastSequence, 4);
    await again.store.close();
  });
});
