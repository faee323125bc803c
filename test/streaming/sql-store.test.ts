// The SQL store passes the shared store suite, restart tests included, on both of
// the reference's drivers: PostgreSQL (test/helpers/postgres.ts) and MySQL, here
// MariaDB (test/helpers/mariadb.ts); one new database per store.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../src/streaming/store/index.js';
import { SqlStore, type SqlDriver } from '../../src/streaming/store/sql/index.js';
import { skipWithoutMariaDb, testMariaDb } from '../helpers/mariadb.js';
import { skipWithoutPostgres, testPostgres } from '../helpers/postgres.js';
import { storeConformanceSuite, type StoreOpenOptions } from './store-suite.js';
import { msg, sub } from './store-fixtures.js';

const opened = new WeakMap<Store, { url: string; options: StoreOpenOptions }>();

for (const driver of ['postgres', 'mysql'] as const) {
  const skip = driver === 'postgres' ? await skipWithoutPostgres() : await skipWithoutMariaDb();
  driverTests(driver, skip);
}

async function newDatabase(driver: SqlDriver): Promise<string> {
  if (driver === 'postgres') {
    const pgOrReason = await testPostgres();
    if (typeof pgOrReason === 'string') throw new Error(pgOrReason);
    return pgOrReason.createDatabase();
  }
  const dbOrReason = await testMariaDb();
  if (typeof dbOrReason === 'string') throw new Error(dbOrReason);
  return dbOrReason.createDatabase();
}

function driverTests(driver: SqlDriver, skip: string | false): void {
  function openAt(url: string, options: StoreOpenOptions): Store {
    const store = new SqlStore({
      driver,
      source: url,
      ...options.hooks,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    });
    opened.set(store, { url, options });
    return store;
  }

  if (skip === false) {
    storeConformanceSuite({
      name: `sql (${driver})`,
      type: 'SQL',
      mustSurviveRestart: true,
      storeWideSubIds: true,
      open: async (options) => openAt(await newDatabase(driver), options),
      reopen: async (store) => {
        const { url, options } = opened.get(store)!;
        await store.close();
        return openAt(url, options);
      },
    });
  } else {
    it(`sql store conformance (${driver})`, { skip }, () => undefined);
  }

  it(
    `sql store (${driver}): strings and bytes of any kind survive a restart`,
    { skip },
    async () => {
      const url = await newDatabase(driver);
      const odd = `it's a \\ back'slash \\x00 "quoted" ünïcødé 🚀 $$ $1 ;--`;
      const store = openAt(url, {});
      let reopened: Store | undefined;
      try {
        store.addClient({
          id: odd,
          hbInbox: odd,
          connID: Buffer.from([0, 1, 2, 255, 39, 92]),
          protocol: 1,
          pingInterval: 5,
          pingMaxOut: 3,
        });
        const ch = store.createChannel('a.b');
        ch.subs.create({ ...sub(), durableName: odd, inbox: odd, qGroup: `${odd}:${odd}` });
        ch.msgs.store({ ...msg('a.b', 1), encoded: Buffer.from([0, 39, 92, 255]) });
        await store.flush();
        await store.close();
        reopened = openAt(url, {});
        await reopened.recover();
        const [client] = [...reopened.clients()];
        assert.equal(client!.id, odd);
        assert.deepEqual(Buffer.from(client!.connID), Buffer.from([0, 1, 2, 255, 39, 92]));
        const again = reopened.lookupChannel('a.b')!;
        const [s] = [...again.subs.all()];
        assert.equal(s!.record.durableName, odd);
        assert.equal(s!.record.qGroup, `${odd}:${odd}`);
        const m = await again.msgs.lookup(1);
        assert.deepEqual(Buffer.from(m!.encoded), Buffer.from([0, 39, 92, 255]));
      } finally {
        await (reopened ?? store).close();
      }
    },
  );

  it(
    `sql store (${driver}): old messages are read back from the database, with read-ahead`,
    { skip },
    async () => {
      const store = openAt(await newDatabase(driver), {});
      try {
        const { msgs } = store.createChannel('foo');
        for (let seq = 1; seq <= 6000; seq++) msgs.store(msg('foo', seq));
        await store.flush();
        // The oldest ones left memory after the commit: these lookups are queries.
        const first = msgs.lookup(1);
        assert.ok(first instanceof Promise);
        const concurrent = await Promise.all([first, msgs.lookup(2), msgs.lookup(700)]);
        assert.deepEqual(
          concurrent.map((m) => m?.sequence),
          [1, 2, 700],
        );
        for (let seq = 1; seq <= 6000; seq++) {
          const m = await msgs.lookup(seq);
          assert.equal(m?.sequence, seq);
          assert.equal(Buffer.from(m.encoded).includes(`payload-${seq}`), true);
        }
      } finally {
        await store.close();
      }
    },
  );

  it(
    `sql store (${driver}): messages dropped by limits across batches come back from the first kept one`,
    { skip },
    async () => {
      const url = await newDatabase(driver);
      const store = openAt(url, { limits: { maxMsgs: 10 } });
      let reopened: Store | undefined;
      try {
        const { msgs } = store.createChannel('foo');
        for (let seq = 1; seq <= 10; seq++) msgs.store(msg('foo', seq));
        await store.flush();
        for (let seq = 11; seq <= 13; seq++) msgs.store(msg('foo', seq));
        await store.flush();
        assert.equal(msgs.firstSequence, 4);
        await store.close();
        reopened = openAt(url, { limits: { maxMsgs: 10 } });
        await reopened.recover();
        const again = reopened.lookupChannel('foo')!.msgs;
        assert.equal(again.firstSequence, 4);
        assert.equal(again.lastSequence, 13);
        assert.equal(again.count, 10);
        assert.equal(await again.lookup(3), undefined);
        assert.equal((await again.lookup(4))?.sequence, 4);
        assert.equal((await again.lookup(13))?.sequence, 13);
        assert.equal(again.bytes, msgs.bytes);
      } finally {
        await (reopened ?? store).close();
      }
    },
  );
}
