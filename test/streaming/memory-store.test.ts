// The memory store passes the shared store suite, and counts bytes as the reference's
// memory store does (the marshaled MsgProto).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { nowNanos } from '../../src/streaming/protocol/index.js';
import { MemoryStore, makeStoredMsg, storezLimits } from '../../src/streaming/store/index.js';
import { storeConformanceSuite } from './store-suite.js';

storeConformanceSuite({
  name: 'memory',
  mustSurviveRestart: false,
  open: ({ limits, hooks }) =>
    Promise.resolve(new MemoryStore({ ...hooks, ...(limits === undefined ? {} : { limits }) })),
});

it('memory store: 10 × "msg-0".."msg-9" on foo make 240 bytes, as the reference reports', () => {
  const store = new MemoryStore();
  const { msgs } = store.createChannel('foo');
  for (let i = 0; i < 10; i++) {
    msgs.store(makeStoredMsg(i + 1, nowNanos(), 'foo', '', Buffer.from(`msg-${i}`)));
  }
  assert.deepEqual(store.totals(), { msgs: 10, bytes: 240 });
  assert.equal(store.type, 'MEMORY');
  assert.deepEqual(storezLimits(store.limits), {
    max_channels: 100,
    max_msgs: 1000000,
    max_bytes: 1024000000,
    max_age: 0,
    max_subscriptions: 1000,
    max_inactivity: 0,
  });
  void store.close();
});

it('memory store: refuses the fault-tolerance lock', async () => {
  const store = new MemoryStore();
  await assert.rejects(store.tryExclusiveLock(), { code: 'NOT_SUPPORTED' });
  await store.close();
});
