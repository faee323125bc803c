// The FILE store passes the shared store suite, restart tests included, and counts
// bytes as the reference's file store does (marshaled MsgProto + 40 per message).
import { after } from 'node:test';
import { FileStore } from '../../src/streaming/store/file.js';
import type { Store } from '../../src/streaming/store/index.js';
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
  type: 'FILE',
  mustSurviveRestart: true,
  msgOverhead: 40,
  open: async (options) => openAt(await tempDir(), options),
  reopen: async (store) => {
    const { dir, options } = opened.get(store)!;
    await store.close();
    return openAt(dir, options);
  },
});
