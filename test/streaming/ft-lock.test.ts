// The fault-tolerance lock of the SQL store, without servers: one holder at a time,
// a clean close frees it at once, a dead holder's lock is taken once stale, and a
// store that lost the lock can write nothing (fencing in every transaction).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { SqlStore } from '../../src/streaming/store/sql/index.js';
import { skipWithoutPostgres, testPostgres } from '../helpers/postgres.js';
import { msg, sleep } from './store-fixtures.js';

const skip = await skipWithoutPostgres();
const timing = { leaseMs: 600, refreshMs: 100 };

async function database(): Promise<string> {
  const p = await testPostgres();
  if (typeof p === 'string') throw new Error(p);
  return p.createDatabase();
}

/** Store `a`, which records why it lost the lock, and a connection to look and meddle. */
async function holderAndAdmin(
  source: string,
): Promise<{ a: SqlStore; lost: string[]; admin: pg.Client }> {
  const lost: string[] = [];
  const a = new SqlStore({
    source,
    lockOwner: 'a',
    lockTiming: timing,
    onLockLost: (why) => lost.push(why),
  });
  const admin = new pg.Client({ connectionString: source });
  await admin.connect();
  return { a, lost, admin };
}

describe('SQL store fault-tolerance lock', { skip }, () => {
  it('one holder at a time; a clean close frees it at once', async () => {
    const source = await database();
    const a = new SqlStore({ source, lockOwner: 'a', lockTiming: timing });
    const b = new SqlStore({ source, lockOwner: 'b', lockTiming: timing });
    try {
      assert.equal(await a.tryExclusiveLock(), true);
      assert.equal(await a.tryExclusiveLock(), true);
      assert.equal(await b.tryExclusiveLock(), false);
      // Kept alive by a's refreshes: still not stale well past the lease.
      await sleep(1000);
      assert.equal(await b.tryExclusiveLock(), false);
      await a.close();
      assert.equal(await b.tryExclusiveLock(), true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a dead holder's lock is taken once its tick stopped moving for the lease", async () => {
    const source = await database();
    const b = new SqlStore({ source, lockOwner: 'b', lockTiming: timing });
    const admin = new pg.Client({ connectionString: source });
    await admin.connect();
    try {
      // Make the tables (b's first try), then a row as a killed server leaves it.
      assert.equal(await b.tryExclusiveLock(), true);
      await b.close();
      await admin.query("UPDATE StoreLock SET id = 'dead', tick = 7");
      const c = new SqlStore({ source, lockOwner: 'c', lockTiming: timing });
      try {
        assert.equal(await c.tryExclusiveLock(), false);
        await sleep(timing.leaseMs / 2);
        assert.equal(await c.tryExclusiveLock(), false);
        await sleep(timing.leaseMs / 2 + 50);
        assert.equal(await c.tryExclusiveLock(), true);
        const rows = await admin.query('SELECT id, tick FROM StoreLock');
        assert.equal((rows.rows[0] as { id: string }).id, 'c');
      } finally {
        await c.close();
      }
    } finally {
      await admin.end();
      await b.close();
    }
  });

  it('a holder whose lock was taken is told and can no longer write', async () => {
    const source = await database();
    const { a, lost, admin } = await holderAndAdmin(source);
    try {
      assert.equal(await a.tryExclusiveLock(), true);
      const foo = a.createChannel('foo');
      foo.msgs.store(msg('foo', 1));
      await a.flush();
      // Another server stole it (as after a freeze of a longer than the lease).
      await admin.query("UPDATE StoreLock SET id = 'b', tick = 1");
      foo.msgs.store(msg('foo', 2));
      await assert.rejects(a.flush(), /lost store lock/);
      await sleep(300);
      assert.ok(lost.length > 0, 'a was told it lost the lock');
      const rows = await admin.query('SELECT seq FROM Messages');
      assert.deepEqual(rows.rows, [{ seq: '1' }]);
    } finally {
      await admin.end();
      await a.close();
    }
  });

  it('a holder that cannot refresh gives the lock up before it may be taken', async () => {
    const { a, lost, admin } = await holderAndAdmin(await database());
    try {
      assert.equal(await a.tryExclusiveLock(), true);
      // Block a's refreshes (as a slow or unreachable database would): hold the row.
      await admin.query('BEGIN');
      await admin.query('SELECT * FROM StoreLock FOR UPDATE');
      await sleep(timing.leaseMs);
      assert.match(lost[0] ?? '', /could not refresh/);
      await admin.query('ROLLBACK');
      // Even with the row free again, a store that gave the lock up writes nothing.
      await admin.query("UPDATE StoreLock SET id = 'c'");
      a.createChannel('foo').msgs.store(msg('foo', 1));
      await assert.rejects(a.flush(), /lost store lock/);
    } finally {
      await admin.end();
      await a.close();
    }
  });
});
