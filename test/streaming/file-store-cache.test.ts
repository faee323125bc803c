// The FILE store's read cache under limits: what limits remove leaves the cache at
// once, so a channel held at its limits keeps at most its limits' worth of messages
// in memory however many pass through it (issue 19: memory flat under eviction).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FileStore } from '../../src/streaming/store/file.js';
import { FileMsgStore } from '../../src/streaming/store/file-msgs.js';
import type { FileStoreOptions } from '../../src/streaming/store/file-options.js';
import type { StoredMsg } from '../../src/streaming/store/index.js';
import { assertSameMsg, msg } from './store-fixtures.js';
import { cleanupDirs, tempDir } from './file-fixtures.js';
import { isSmallInteger } from '../helpers/v8-natives.js';

after(cleanupDirs);

async function open(dir: string, options: Omit<FileStoreOptions, 'dir'>): Promise<FileStore> {
  const store = new FileStore({ dir, ...options });
  await store.recover();
  return store;
}

function msgsOf(store: FileStore, channel: string): FileMsgStore {
  const ch = store.lookupChannel(channel) ?? store.createChannel(channel);
  assert.ok(ch.msgs instanceof FileMsgStore);
  return ch.msgs;
}

/** Stores `from..to`, flushing every `batch` messages; returns the last `keep`. */
async function publish(
  store: FileStore,
  channel: string,
  from: number,
  to: number,
  keep: number,
): Promise<StoredMsg[]> {
  const msgs = msgsOf(store, channel);
  const kept: StoredMsg[] = [];
  for (let seq = from; seq <= to; seq++) {
    const m = msg(channel, seq);
    msgs.store(m);
    if (seq > to - keep) kept.push(m);
    if (seq % 500 === 0) await store.flush();
  }
  await store.flush();
  return kept;
}

function payloadBytes(msgs: readonly StoredMsg[]): number {
  let n = 0;
  for (const m of msgs) n += m.encoded.length;
  return n;
}

describe('file store: read cache under limits', () => {
  it('max_msgs: the cache holds no more than the channel keeps', async () => {
    const dir = await tempDir();
    const store = await open(dir, { sliceMaxMsgs: 250, limits: { maxMsgs: 1000 } });
    const kept = await publish(store, 'foo', 1, 20_000, 1000);
    const msgs = msgsOf(store, 'foo');
    assert.equal(msgs.firstSequence, 19_001);
    assert.equal(msgs.lastSequence, 20_000);
    assert.ok(msgs.cached.msgs <= 1000, `cache holds ${msgs.cached.msgs} messages`);
    assert.ok(msgs.cached.msgs > 0);
    assert.ok(msgs.cached.bytes <= payloadBytes(kept), `cache holds ${msgs.cached.bytes} B`);
    for (const m of kept) assertSameMsg(await msgs.lookup(m.sequence), m);
    assert.equal(await msgs.lookup(19_000), undefined);
    await store.close();
  });

  it('max_bytes (whole slices removed at once): nothing removed stays cached', async () => {
    const dir = await tempDir();
    const store = await open(dir, { sliceMaxMsgs: 100, limits: { maxBytes: 20_000 } });
    await publish(store, 'foo', 1, 10_000, 0);
    const msgs = msgsOf(store, 'foo');
    assert.ok(msgs.count < 10_000 && msgs.count > 0);
    assert.ok(msgs.cached.msgs <= msgs.count, `${msgs.cached.msgs} cached of ${msgs.count}`);
    assert.ok(msgs.cached.bytes <= msgs.bytes);
    for (let seq = msgs.firstSequence; seq <= msgs.lastSequence; seq++) {
      assert.equal((await msgs.lookup(seq))?.sequence, seq);
    }
    await store.close();
  });

  it('without limits the cache stays within cacheBytes', async () => {
    const dir = await tempDir();
    const store = await open(dir, { cacheBytes: 4096 });
    const kept = await publish(store, 'foo', 1, 3000, 3000);
    const msgs = msgsOf(store, 'foo');
    const largest = Math.max(...kept.map((m) => m.encoded.length));
    assert.ok(msgs.cached.bytes <= 4096 + largest, `cache holds ${msgs.cached.bytes} B`);
    // The rest is read back from disk.
    for (const seq of [1, 1500, 3000]) assertSameMsg(await msgs.lookup(seq), kept[seq - 1]!);
    await store.close();
  });

  it('a backlog is read back whole, block after block, the next two read ahead', async () => {
    const dir = await tempDir();
    // Small blocks (a few records each) over several slices: reads ahead cross slices.
    const store = await open(dir, { cacheBytes: 4096, readBufferSize: 1024, sliceMaxMsgs: 250 });
    const kept = await publish(store, 'foo', 1, 1200, 1200);
    const msgs = msgsOf(store, 'foo');
    const first = msgs.lookup(1);
    assert.ok(first instanceof Promise, 'message 1 is read from disk');
    assertSameMsg(await first, kept[0]!);
    // The block of message 1 is held, and the two after it are read or being read.
    assert.equal(msgs.readBlocks, 3);
    for (let seq = 2; seq <= 1200; seq++) {
      const m = msgs.lookup(seq);
      assertSameMsg(m instanceof Promise ? await m : m, kept[seq - 1]!);
    }
    await store.close();
  });

  it('deliveries take the bytes where the cache or a block holds them, ranges as small integers', async () => {
    const dir = await tempDir();
    const store = await open(dir, { cacheBytes: 4096, readBufferSize: 1024, sliceMaxMsgs: 250 });
    const kept = await publish(store, 'foo', 1, 1200, 1200);
    const msgs = msgsOf(store, 'foo');
    let fromDisk = 0;
    for (let seq = 1; seq <= 1200; seq++) {
      let buf = msgs.bytesOf(seq);
      if (buf === null) {
        // Neither holds it: lookup() reads its block, which holds it from then on.
        fromDisk++;
        await msgs.lookup(seq);
        buf = msgs.bytesOf(seq);
      }
      assert.ok(buf instanceof Buffer, `message ${seq}`);
      // A heap number here would turn the delivery path's offsets into doubles.
      const { rangeStart: start, rangeEnd: end } = msgs;
      assert.ok(isSmallInteger(start) && isSmallInteger(end), `range of ${seq}`);
      assert.deepEqual(buf.subarray(start, end), kept[seq - 1]!.encoded);
    }
    assert.ok(fromDisk > 0 && fromDisk < 1200, `${fromDisk} read from disk`);
    assert.equal(msgs.bytesOf(1201), undefined);
    await store.close();
  });

  it('many channels share one total: four times cacheBytes for the whole store', async () => {
    const dir = await tempDir();
    const store = await open(dir, { cacheBytes: 4096 });
    const channels = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'];
    let largest = 0;
    for (const ch of channels) {
      const kept = await publish(store, ch, 1, 500, 500);
      for (const m of kept) largest = Math.max(largest, m.encoded.length);
    }
    let total = 0;
    for (const ch of channels) total += msgsOf(store, ch).cached.bytes;
    // A channel keeps at least the message it stored last.
    assert.ok(total <= 4 * 4096 + channels.length * largest, `the caches hold ${total} B`);
    await store.close();
  });

  it('after a restart, limits go on removing from slices whose index was not loaded', async () => {
    const dir = await tempDir();
    const options = { sliceMaxMsgs: 100, limits: { maxMsgs: 1000 } };
    let store = await open(dir, options);
    await publish(store, 'foo', 1, 1000, 0);
    await store.close();
    store = await open(dir, options);
    const kept = await publish(store, 'foo', 1001, 3500, 1000);
    const msgs = msgsOf(store, 'foo');
    assert.deepEqual([msgs.firstSequence, msgs.lastSequence, msgs.count], [2501, 3500, 1000]);
    assert.ok(msgs.cached.msgs <= 1000);
    await store.close();
    store = await open(dir, options);
    const again = msgsOf(store, 'foo');
    for (const m of kept) assertSameMsg(await again.lookup(m.sequence), m);
    await store.close();
  });
});
