// The key-value and object stores through the official nats.js clients, every call the
// issue names: KV create / put / get / create-if-absent / update-with-revision / delete /
// purge / history / watch / keys / TTL, and object put / get (multi-MB, chunked) / info /
// list / delete / links, with the v3 packages (@nats-io/kv, @nats-io/obj) and nats v2's
// views. Each scenario takes only a port, so the same code that kv-obj.test.ts runs
// against wirebus also passes against `nats-server -js` 2.9.10 (run by hand the day it
// was written); the expectations are what the reference does.

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as connectV3 } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { connect as connectV2, StorageType, type KvEntry as KvEntryV2 } from 'nats';

export type Storage = 'memory' | 'file';

const enc = new TextEncoder();
const dec = new TextDecoder();
const url = (port: number): string => `127.0.0.1:${port}`;

/** A blob of `n` bytes that no shift of itself equals (chunks misplaced would show). */
export function blob(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + (i >>> 8)) & 255;
  return b;
}

/** A key's entries as `op:value@revision`, the way both clients' entries read. */
const show = (e: { operation: string; value: Uint8Array; revision: number }): string =>
  `${e.operation}:${dec.decode(e.value)}@${e.revision}`;

/** Waits until `done()` holds; the TTL tests wait on the server's max_age timer. */
async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await sleep(100);
  }
}

/** @nats-io/kv (v3): every KV call on one bucket, then a bucket with a TTL. */
export async function kvV3(port: number, storage: Storage): Promise<void> {
  const nc = await connectV3({ servers: url(port) });
  try {
    const kvm = new Kvm(nc);
    const kv = await kvm.create('K3', { history: 5, storage: storage as never });
    const watched: string[] = [];
    const watcher = await kv.watch();
    const watching = (async () => {
      for await (const e of watcher) {
        watched.push(`${e.key}=${show(e)}`);
        if (e.key === 'done') break;
      }
    })();

    assert.equal(await kv.put('a', enc.encode('1')), 1);
    const a = await kv.get('a');
    assert.deepEqual(a && [a.bucket, a.key, show(a), a.delta, a.length], [
      'K3',
      'a',
      'PUT:1@1',
      0,
      1,
    ]);
    assert.equal(await kv.get('missing'), null);

    // create-if-absent: refused while the key has a value, allowed once it is deleted.
    assert.equal(await kv.create('b', enc.encode('x')), 2);
    await assert.rejects(kv.create('b', enc.encode('y')), /wrong last sequence: 2/);
    // update-with-revision: only against the key's latest revision.
    assert.equal(await kv.update('a', enc.encode('2'), 1), 3);
    await assert.rejects(kv.update('a', enc.encode('stale'), 1), /wrong last sequence: 3/);
    assert.equal(await kv.put('a', enc.encode('3')), 4);

    const keys: string[] = [];
    for await (const k of await kv.keys()) keys.push(k);
    assert.deepEqual(keys.sort(), ['a', 'b']);

    await kv.delete('b');
    assert.equal((await kv.get('b'))?.operation, 'DEL');
    assert.equal(await kv.create('b', enc.encode('again')), 6);

    const history = async (key: string): Promise<string[]> => {
      const out: string[] = [];
      for await (const e of await kv.history({ key })) out.push(show(e));
      return out;
    };
    assert.deepEqual(await history('a'), ['PUT:1@1', 'PUT:2@3', 'PUT:3@4']);
    assert.deepEqual(await history('b'), ['PUT:x@2', 'DEL:@5', 'PUT:again@6']);

    await kv.purge('a');
    assert.deepEqual(await history('a'), ['PURGE:@7']);
    const after: string[] = [];
    for await (const k of await kv.keys()) after.push(k);
    assert.deepEqual(after, ['b']);
    const status = await kv.status();
    assert.deepEqual([status.bucket, status.history, status.values], ['K3', 5, 4]);

    await kv.put('done', enc.encode('!'));
    await watching;
    assert.deepEqual(watched, [
      'a=PUT:1@1',
      'b=PUT:x@2',
      'a=PUT:2@3',
      'a=PUT:3@4',
      'b=DEL:@5',
      'b=PUT:again@6',
      'a=PURGE:@7',
      'done=PUT:!@8',
    ]);

    // TTL: the bucket's max_age; a key's value goes once it is older.
    const ttl = await kvm.create('T3', { ttl: 1000, storage: storage as never });
    assert.equal((await ttl.status()).ttl, 1000);
    await ttl.put('short', enc.encode('lived'));
    assert.equal((await ttl.get('short'))?.string(), 'lived');
    await until('the v3 TTL key expires', async () => (await ttl.get('short')) === null);
    const jsm = await jetstreamManager(nc);
    assert.equal((await jsm.streams.info('KV_T3')).state.messages, 0);
  } finally {
    await nc.close();
  }
}

/** nats v2's `views.kv`: the same calls through the older client. */
export async function kvV2(port: number, storage: Storage): Promise<void> {
  const nc = await connectV2({ servers: url(port) });
  try {
    const js = nc.jetstream();
    const st = storage === 'file' ? StorageType.File : StorageType.Memory;
    const kv = await js.views.kv('K2', { history: 10, storage: st });
    const watched: string[] = [];
    const watcher = await kv.watch({ key: 'w.*' });
    const watching = (async () => {
      for await (const e of watcher) {
        watched.push(`${e.key}=${show(e)}`);
        if (e.operation === 'PURGE') break;
      }
    })();

    assert.equal(await kv.put('w.a', enc.encode('1')), 1);
    const got = (await kv.get('w.a')) as KvEntryV2;
    assert.deepEqual([got.bucket, got.key, show(got)], ['K2', 'w.a', 'PUT:1@1']);
    assert.equal(await kv.get('nothing'), null);
    assert.equal(await kv.create('w.b', enc.encode('x')), 2);
    await assert.rejects(kv.create('w.b', enc.encode('y')), /wrong last sequence: 2/);
    assert.equal(await kv.update('w.a', enc.encode('2'), 1), 3);
    await assert.rejects(kv.update('w.a', enc.encode('z'), 1), /wrong last sequence: 3/);
    await kv.put('other', enc.encode('o'));

    const keys: string[] = [];
    for await (const k of await kv.keys()) keys.push(k);
    assert.deepEqual(keys.sort(), ['other', 'w.a', 'w.b']);
    const filtered: string[] = [];
    for await (const k of await kv.keys('w.*')) filtered.push(k);
    assert.deepEqual(filtered.sort(), ['w.a', 'w.b']);

    await kv.delete('w.b');
    assert.equal((await kv.get('w.b'))?.operation, 'DEL');
    assert.equal(await kv.create('w.b', enc.encode('back')), 6);
    const history: string[] = [];
    for await (const e of await kv.history({ key: 'w.*' })) history.push(`${e.key}=${show(e)}`);
    assert.deepEqual(history, [
      'w.a=PUT:1@1',
      'w.b=PUT:x@2',
      'w.a=PUT:2@3',
      'w.b=DEL:@5',
      'w.b=PUT:back@6',
    ]);
    await kv.purge('w.a');
    await watching;
    assert.deepEqual(watched, [
      'w.a=PUT:1@1',
      'w.b=PUT:x@2',
      'w.a=PUT:2@3',
      'w.b=DEL:@5',
      'w.b=PUT:back@6',
      'w.a=PURGE:@7',
    ]);
    const purged: string[] = [];
    for await (const e of await kv.history({ key: 'w.a' })) purged.push(show(e));
    assert.deepEqual(purged, ['PURGE:@7']);
    const status = await kv.status();
    assert.deepEqual([status.values, status.history], [5, 10]);

    const ttl = await js.views.kv('T2', { ttl: 1000, storage: st });
    assert.equal((await ttl.status()).ttl, 1000);
    await ttl.put('k', enc.encode('v'));
    assert.equal(dec.decode((await ttl.get('k'))!.value), 'v');
    await until('the v2 TTL key expires', async () => (await ttl.get('k')) === null);
  } finally {
    await nc.close();
  }
}

/** @nats-io/obj (v3): a multi-MB object in chunks, info, list, links, delete. */
export async function objV3(port: number, storage: Storage): Promise<void> {
  const nc = await connectV3({ servers: url(port) });
  try {
    const os = await new Objm(nc).create('O3', { storage: storage as never });
    const big = blob(3 * 1024 * 1024 + 17);
    const put = await os.putBlob({ name: 'big.bin', description: 'three MB' }, big);
    // 128 KiB chunks, as the client cuts them.
    assert.deepEqual(
      [put.name, put.size, put.chunks, put.deleted, put.description],
      ['big.bin', big.length, 25, false, 'three MB'],
    );
    assert.match(put.digest, /^SHA-256=/);
    assert.deepEqual(await os.getBlob('big.bin'), big);
    await os.putBlob({ name: 'small.txt' }, enc.encode('hello'));

    const info = await os.info('big.bin');
    assert.deepEqual([info?.size, info?.chunks, info?.digest], [big.length, 25, put.digest]);
    assert.equal(await os.info('nope'), null);

    const link = await os.link('alias', info!);
    assert.deepEqual([link.name, link.options?.link?.name], ['alias', 'big.bin']);
    assert.deepEqual(await os.getBlob('alias'), big);

    const listed = (await os.list()).map((i) => i.name).sort();
    assert.deepEqual(listed, ['alias', 'big.bin', 'small.txt']);

    await os.delete('small.txt');
    assert.equal(await os.getBlob('small.txt'), null);
    assert.deepEqual((await os.list()).map((i) => i.name).sort(), ['alias', 'big.bin']);
    await os.delete('big.bin');
    // The deleted object's chunks are purged: only the meta entries are left.
    const jsm = await jetstreamManager(nc);
    const state = (await jsm.streams.info('OBJ_O3')).state;
    assert.equal(state.messages, 3);
    assert.ok(state.bytes < 4096, `${state.bytes} bytes left after the delete`);
  } finally {
    await nc.close();
  }
}

/** nats v2's `views.os`: the same calls through the older client. */
export async function objV2(port: number, storage: Storage): Promise<void> {
  const nc = await connectV2({ servers: url(port) });
  try {
    const js = nc.jetstream();
    const st = storage === 'file' ? StorageType.File : StorageType.Memory;
    const os = await js.views.os('O2', { storage: st });
    const big = blob(2 * 1024 * 1024 + 5);
    const put = await os.putBlob({ name: 'big', options: { max_chunk_size: 64 * 1024 } }, big);
    assert.deepEqual([put.size, put.chunks], [big.length, 33]);
    assert.deepEqual(await os.getBlob('big'), big);
    const info = await os.info('big');
    assert.deepEqual([info?.name, info?.size, info?.digest], ['big', big.length, put.digest]);
    await os.putBlob({ name: 'note' }, enc.encode('n'));
    await os.link('ln', info!);
    assert.deepEqual(await os.getBlob('ln'), big);
    assert.deepEqual((await os.list()).map((i) => i.name).sort(), ['big', 'ln', 'note']);
    await os.delete('note');
    assert.equal(await os.getBlob('note'), null);
    assert.deepEqual((await os.list()).map((i) => i.name).sort(), ['big', 'ln']);
  } finally {
    await nc.close();
  }
}
