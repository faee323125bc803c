// The SQL store passes the shared store suite, restart tests included, on both of
// the reference's drivers: PostgreSQL (test/helpers/postgres.ts) and MySQL, here
// MariaDB (test/helpers/mariadb.ts); one new database per store.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { nowNanos } from '../../src/streaming/protocol/index.js';
import { makeStoredMsg, type Store } from '../../src/streaming/store/index.js';
import { SqlStore, type SqlDriver } from '../../src/streaming/store/sql/index.js';
import { skipWithoutMariaDb, testMariaDb } from '../helpers/mariadb.js';
import { skipWithoutPostgres, testPostgres } from '../helpers/postgres.js';
import { storeConformanceSuite, type StoreOpenOptions } from './store-suite.js';
import { queryDb } from './sql-databases.js';
import { assertBodies, msg, sub } from './store-fixtures.js';

const opened = new WeakMap<Store, { url: string; options: StoreOpenOptions }>();

for (const driver of ['postgres', 'mysql'] as const) {
  const skip = driver === 'postgres' ? await skipWithoutPostgres() : await skipWithoutMariaDb();
  driverTests(driver, skip, false);
}
// --sql_no_caching changes how pending sequences are written: the suite again.
driverTests('postgres', await skipWithoutPostgres(), true);

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

function driverTests(driver: SqlDriver, skip: string | false, noCaching: boolean): void {
  const mode = noCaching ? `${driver}, no caching` : driver;
  function openAt(url: string, options: StoreOpenOptions): Store {
    const store = new SqlStore({
      driver,
      noCaching,
      source: url,
      ...options.hooks,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    });
    opened.set(store, { url, options });
    return store;
  }

  if (skip === false) {
    storeConformanceSuite({
      name: `sql (${mode})`,
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
    it(`sql store conformance (${mode})`, { skip }, () => undefined);
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
    `sql store (${mode}): old messages are read back from the database, with read-ahead`,
    { skip },
    async () => {
      const store = openAt(await newDatabase(driver), {});
      try {
        const { msgs } = store.createChannel('foo');
        for (let seq = 1; seq <= 40_000; seq++) msgs.store(msg('foo', seq));
        await store.flush();
        // The last batch stays in memory (subscribers are about to get it) ...
        assert.ok(!(msgs.lookup(1) instanceof Promise));
        msgs.store(msg('foo', 40_001));
        await store.flush();
        // ... until the next one commits: then the oldest ones (beyond the channel's
        // 32,768 messages kept) left memory, and these lookups are queries.
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
    `sql store (${mode}): messages dropped by limits across batches come back from the first kept one`,
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

  it(
    `sql store (${mode}): pending sequences are rows as the reference writes them`,
    { skip },
    async () => {
      const url = await newDatabase(driver);
      const store = openAt(url, {});
      let reopened: Store | undefined;
      try {
        const foo = store.createChannel('foo');
        for (let seq = 1; seq <= 4; seq++) foo.msgs.store(msg('foo', seq));
        const s = foo.subs.create(sub({ durableName: 'd', isDurable: true }));
        for (const seq of [1, 2, 3, 4]) foo.subs.addPending(s.id, seq);
        foo.subs.ack(s.id, 2);
        await store.close();
        const rows = await queryDb(
          driver,
          url,
          'SELECT seq, pending FROM SubsPending ORDER BY seq',
        );
        if (noCaching) {
          assert.deepEqual(
            rows.map((r) => Number(r.seq)),
            [1, 3, 4],
          );
        } else {
          // One row per batch, its sequences as a JSON list (the reference's caching rows).
          assert.deepEqual(
            rows.map((r) => Number(r.seq)),
            [0],
          );
          assert.equal(String(rows[0]!.pending), '[1,3,4]');
        }
        reopened = openAt(url, {});
        await reopened.recover();
        const again = reopened.lookupChannel('foo')!;
        assert.deepEqual([...again.subs.get(s.id)!.pending].sort(), [1, 3, 4]);
        // An ack rewrites (or deletes) the row it is in.
        again.subs.ack(s.id, 3);
        await reopened.close();
        const left = await queryDb(
          driver,
          url,
          'SELECT seq, pending FROM SubsPending ORDER BY seq',
        );
        if (noCaching)
          assert.deepEqual(
            left.map((r) => Number(r.seq)),
            [1, 4],
          );
        else assert.equal(String(left[0]!.pending), '[1,4]');
      } finally {
        await (reopened ?? store).close();
      }
    },
  );

  it(`sql store (${mode}): refuses a database of the former wb_* schema`, { skip }, async () => {
    const url = await newDatabase(driver);
    await queryDb(driver, url, 'CREATE TABLE wb_schema_version (version integer NOT NULL)');
    const store = openAt(url, {});
    try {
      await assert.rejects(store.recover(), /tables of an older wirebus \(wb_\*\)/);
    } finally {
      await store.close();
    }
  });

  it(
    `sql store (${mode}): large messages (sent as bytes, not literals) come back whole`,
    { skip },
    async () => {
      const url = await newDatabase(driver);
      const store = openAt(url, {});
      let reopened: Store | undefined;
      const body = (seq: number): Buffer => {
        const b = Buffer.alloc(900 + (seq % 50));
        for (let i = 0; i < b.length; i++) b[i] = (seq * 7 + i * 13) & 0xff;
        return b;
      };
      try {
        const { msgs } = store.createChannel('big');
        // 300 rows: prepared statements of 256, 32, 8 and 4 rows on MySQL.
        for (let seq = 1; seq <= 300; seq++) {
          msgs.store(makeStoredMsg(seq, nowNanos(), 'big', '', body(seq)));
        }
        await store.close();
        reopened = openAt(url, {});
        await reopened.recover();
        await assertBodies(reopened.lookupChannel('big')!.msgs, 'big', 300, body);
      } finally {
        await (reopened ?? store).close();
      }
    },
  );
}
