// The SQL store passes the shared store suite, restart tests included, against a
// throwaway PostgreSQL (test/helpers/postgres.ts): one new database per store.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../src/streaming/store/index.js';
import { SqlStore } from '../../src/streaming/store/sql/index.js';
import { skipWithoutPostgres, testPostgres } from '../helpers/postgres.js';
import { storeConformanceSuite, type StoreOpenOptions } from './store-suite.js';
import { msg } from './store-fixtures.js';

const skip = await skipWithoutPostgres();

const opened = new WeakMap<Store, { url: string; options: StoreOpenOptions }>();

function openAt(url: string, options: StoreOpenOptions): Store {
  const store = new SqlStore({
    source: url,
    ...options.hooks,
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  opened.set(store, { url, options });
  return store;
}

async function newDatabase(): Promise<string> {
  const pgOrReason = await testPostgres();
  if (typeof pgOrReason === 'string') throw new Error(pgOrReason);
  return pgOrReason.createDatabase();
}

if (skip === false) {
  storeConformanceSuite({
    name: 'sql',
    mustSurviveRestart: true,
    open: async (options) => openAt(await newDatabase(), options),
    reopen: async (store) => {
      const { url, options } = opened.get(store)!;
      await store.close();
      return openAt(url, options);
    },
  });
} else {
  it('sql store conformance', { skip }, () => undefined);
}

it('sql store: counts bytes as the marshaled MsgProto and reports type SQL', { skip }, async () => {
  const store = openAt(await newDatabase(), {});
  try {
    assert.equal(store.type, 'SQL');
    const { msgs } = store.createChannel('foo');
    const m = msg('foo', 1);
    msgs.store(m);
    assert.deepEqual(store.totals(), { msgs: 1, bytes: m.encoded.length });
    await store.flush();
  } finally {
    await store.close();
  }
});
