// The memory store passes the shared store suite (which checks that it counts bytes
// as the reference's memory store does: the marshaled MsgProto).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../src/streaming/store/index.js';
import { storeConformanceSuite } from './store-suite.js';

storeConformanceSuite({
  name: 'memory',
  type: 'MEMORY',
  mustSurviveRestart: false,
  open: ({ limits, hooks }) =>
    Promise.resolve(new MemoryStore({ ...hooks, ...(limits === undefined ? {} : { limits }) })),
});

it('memory store: refuses the fault-tolerance lock', async () => {
  const store = new MemoryStore();
  await assert.rejects(store.tryExclusiveLock(), { code: 'NOT_SUPPORTED' });
  await store.close();
});
