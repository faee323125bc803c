// A directory in wirebus's former FILE format (VERSION, channels/, "WBFS" headers,
// CRCs over size field and payload) is converted in place to the reference's layout
// at start; the former files are written here by hand with that documented framing.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import {
  ClientDelete,
  ClientInfo,
  ServerInfo,
  SubState,
  SubStateUpdate,
  seqToLong,
} from '../../src/streaming/protocol/index.js';
import { FileStore } from '../../src/streaming/store/file.js';
import { FileStoreError } from '../../src/streaming/store/file-record.js';
import type { StoredMsg } from '../../src/streaming/store/index.js';
import { assertSameMsg, msg } from './store-fixtures.js';
import { cleanupDirs, tempDir } from './file-fixtures.js';

after(cleanupDirs);

/** A file of the former format: "WBFS" + 1, then size (type << 24) + CRC(size, payload) + payload. */
function former(records: readonly { type?: number; payload: Uint8Array }[]): Buffer {
  const parts = [Buffer.from([0x57, 0x42, 0x46, 0x53, 1, 0, 0, 0])];
  for (const { type, payload } of records) {
    const head = Buffer.alloc(8);
    head.writeUInt32LE(type === undefined ? payload.length : ((type << 24) | payload.length) >>> 0);
    head.writeUInt32LE(crc32(payload, crc32(head.subarray(0, 4))), 4);
    parts.push(head, Buffer.from(payload));
  }
  return Buffer.concat(parts);
}

const sent = (type: number, id: number, seq: number): { type: number; payload: Uint8Array } => ({
  type,
  payload: SubStateUpdate.encode({ ID: seqToLong(id), seqno: seqToLong(seq) }).finish(),
});

/** A directory of the former format: server info, clients, foo (two slices, a durable), "channels". */
async function writeFormer(dir: string): Promise<{ stored: StoredMsg[]; other: StoredMsg }> {
  await writeFile(join(dir, 'VERSION'), 'wirebus-file-store 1\n');
  await writeFile(
    join(dir, 'server.dat'),
    former([{ type: 1, payload: ServerInfo.encode({ ClusterID: 'old', NodeID: 'n1' }).finish() }]),
  );
  const client = (id: string): Uint8Array =>
    ClientInfo.encode({ ID: id, HbInbox: `_INBOX.${id}`, PingInterval: 5 }).finish();
  await writeFile(
    join(dir, 'clients.dat'),
    former([
      { type: 1, payload: client('c1') },
      { type: 1, payload: client('c2') },
      { type: 2, payload: ClientDelete.encode({ ID: 'c2' }).finish() },
    ]),
  );
  const foo = join(dir, 'channels', 'foo');
  // A channel named as the former container directory, too.
  const named = join(dir, 'channels', 'channels');
  await mkdir(foo, { recursive: true });
  await mkdir(named, { recursive: true });
  const stored = [1, 2, 3, 4, 5].map((seq) => msg('foo', seq));
  const records = (from: number, to: number): { payload: Uint8Array }[] =>
    stored.slice(from - 1, to).map((m) => ({ payload: m.encoded }));
  await writeFile(join(foo, 'msgs.1.dat'), former(records(1, 3)));
  await writeFile(join(foo, 'msgs.1.idx'), 'an index of the former format');
  await writeFile(join(foo, 'msgs.2.dat'), former(records(4, 5)));
  await writeFile(join(foo, 'channel.dat'), 'the first sequence, formerly');
  const durable = SubState.encode({
    ID: seqToLong(1),
    clientID: 'c1',
    inbox: '_INBOX.x',
    ackInbox: '_INBOX.y',
    maxInFlight: 10,
    ackWaitInSecs: 30,
    durableName: 'dur',
    isDurable: true,
  }).finish();
  await writeFile(
    join(foo, 'subs.dat'),
    former([{ type: 1, payload: durable }, sent(5, 1, 4), sent(5, 1, 5), sent(4, 1, 4)]),
  );
  const other = msg('channels', 1);
  await writeFile(join(named, 'msgs.1.dat'), former([{ payload: other.encoded }]));

  return { stored, other };
}

describe("wirebus's former FILE format", () => {
  it('is converted in place at start, every message, subscription and client kept', async () => {
    const dir = await tempDir();
    const { stored, other } = await writeFormer(dir);
    const warnings: string[] = [];
    const store = new FileStore({ dir, warn: (w) => warnings.push(w) });
    const state = await store.recover();
    assert.equal(state?.info.clusterID, 'old');
    assert.equal(state.info.nodeID, 'n1');
    assert.deepEqual(
      [...store.clients()].map((c) => c.id),
      ['c1'],
    );
    const ch = store.lookupChannel('foo')!;
    assert.deepEqual([ch.msgs.firstSequence, ch.msgs.lastSequence], [1, 5]);
    for (const m of stored) assertSameMsg(await ch.msgs.lookup(m.sequence), m);
    const [sub] = [...ch.subs.all()];
    assert.equal(sub!.record.durableName, 'dur');
    assert.equal(sub!.record.lastSent, 5);
    assert.deepEqual([...sub!.pending], [5]);
    assertSameMsg(await store.lookupChannel('channels')!.msgs.lookup(1), other);
    assert.ok(warnings.some((w) => /converted to nats-streaming-server's layout/.test(w)));
    await store.close();
    const names = (await readdir(dir)).filter((n) => n !== '.rootdir.lck').sort();
    assert.deepEqual(names, ['channels', 'clients.dat', 'foo', 'server.dat']);
    assert.deepEqual((await readdir(join(dir, 'foo'))).sort(), [
      'msgs.1.dat',
      'msgs.1.idx',
      'msgs.2.dat',
      'msgs.2.idx',
      'subs.dat',
    ]);
    // The reference's framing now: version 1, then the record with its payload's CRC.
    const dat = await readFile(join(dir, 'foo', 'msgs.1.dat'));
    assert.equal(dat.readUInt32LE(0), 1);
    assert.equal(dat.readUInt32LE(8), crc32(stored[0]!.encoded));
    // And it opens again as any store of that layout, without a warning.
    const again = new FileStore({ dir, warn: (w) => warnings.push(`again: ${w}`) });
    await again.recover();
    assert.equal(again.lookupChannel('foo')!.msgs.count, 5);
    await again.close();
    assert.deepEqual(
      warnings.filter((w) => w.startsWith('again')),
      [],
    );
  });

  it('a conversion cut short after it was complete is finished at the next start', async () => {
    const done = await tempDir();
    // The converted files come from this copy (same content, its own timestamps).
    const { stored } = await writeFormer(done);
    const converter = new FileStore({ dir: done });
    await converter.recover();
    await converter.close();
    const dir = await tempDir();
    await writeFormer(dir);
    // The state a crash leaves after DONE and the first rename: converted files under
    // .convert, the former channels/ moved aside, the former root files still there.
    const work = join(dir, '.convert');
    await mkdir(work);
    for (const name of ['server.dat', 'clients.dat', 'foo']) {
      await cp(join(done, name), join(work, name), { recursive: true });
    }
    await rename(join(dir, 'channels'), join(dir, '.convert-old-channels'));
    await cp(join(done, 'channels'), join(dir, 'channels'), { recursive: true });
    await writeFile(join(work, 'DONE'), '');
    const store = new FileStore({ dir });
    const state = await store.recover();
    assert.equal(state?.info.clusterID, 'old');
    const ch = store.lookupChannel('foo')!;
    for (const m of stored) assertSameMsg(await ch.msgs.lookup(m.sequence), m);
    assert.equal(store.lookupChannel('channels')!.msgs.count, 1);
    await store.close();
    assert.deepEqual((await readdir(dir)).filter((n) => n !== '.rootdir.lck').sort(), [
      'channels',
      'clients.dat',
      'foo',
      'server.dat',
    ]);
  });

  it('a damaged former file stops the start, naming it, and leaves the directory as it was', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'VERSION'), 'wirebus-file-store 1\n');
    const foo = join(dir, 'channels', 'foo');
    await mkdir(foo, { recursive: true });
    const bytes = former([{ payload: msg('foo', 1).encoded }, { payload: msg('foo', 2).encoded }]);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0xff;
    await writeFile(join(foo, 'msgs.1.dat'), bytes);
    const store = new FileStore({ dir });
    await assert.rejects(store.recover(), (err: unknown) => {
      assert.ok(err instanceof FileStoreError);
      assert.match(err.message, /cannot convert .*msgs\.1\.dat: CRC mismatch at offset \d+/);
      return true;
    });
    await store.close();
    assert.deepEqual((await readdir(dir)).filter((n) => n !== '.rootdir.lck').sort(), [
      'VERSION',
      'channels',
    ]);
  });
});
