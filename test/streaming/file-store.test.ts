// The FILE store passes the shared store suite, restart tests included, and counts
// bytes as the reference's file store does (marshaled MsgProto + 40 per message).
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { nowNanos } from '../../src/streaming/protocol/index.js';
import { FileStore } from '../../src/streaming/store/file.js';
import { makeStoredMsg, storezLimits, type Store } from '../../src/streaming/store/index.js';
import { storeConformanceSuite, type StoreOpenOptions } from './store-suite.js';
import { cleanupDirs, tempDir } from './file-fixtures.js';

after(cleanupDirs);

const opened = new WeakMap<Store, { dir: string; options: StoreOpenOptions }>();

async function openAt(dir: string, options: StoreOpenOptions): Promise<Store> {
  const store = new FileStore({
    dir,
    ...options.hooks,
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  opened.set(store, { dir, options });
  await store.recover();
  return store;
}

storeConformanceSuite({
  name: 'file',
  mustSurviveRestart: true,
  msgOverhead: 40,
  open: async (options) => openAt(await tempDir(), options),
  reopen: async (store) => {
    const { dir, options } = opened.get(store)!;
    await store.close();
    return openAt(dir, options);
  },
});

it('file store: 10 × "msg-0".."msg-9" on foo make 640 bytes, as the reference reports', async () => {
  const store = new FileStore({ dir: await tempDir() });
  await store.recover();
  const { msgs } = store.createChannel('foo');
  for (let i = 0; i < 10; i++) {
    msgs.store(makeStoredMsg(i + 1, nowNanos(), 'foo', '', Buffer.from(`msg-${i}`)));
  }
  assert.deepEqual(store.totals(), { msgs: 10, bytes: 640 });
  assert.equal(store.type, 'FILE');
  assert.deepEqual(storezLimits(store.limits), {
    max_channels: 100,
    max_msgs: 1000000,
    max_bytes: 1024000000,
    max_age: 0,
    max_subscriptions: 1000,
    max_inactivity: 0,
  });
  await store.close();
});
