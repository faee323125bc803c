// `--sql_bulk_insert_limit` as the reference applies it (stores/sqlstore.go): messages
// go to the database in INSERT statements of at most that many rows; a limit below
// 5, or `--sql_no_caching`, leaves it off. wirebus's own default (no limit: one INSERT
// per batch, up to 4 MB of messages) is kept when it is off.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nowNanos } from '../../src/streaming/protocol/index.js';
import { makeStoredMsg, type Store } from '../../src/streaming/store/index.js';
import type { MessageRow, Statement } from '../../src/streaming/store/sql/db.js';
import { mysqlDialect, postgresDialect } from '../../src/streaming/store/sql/dialect.js';
import { insertRowsLimit, SqlStore } from '../../src/streaming/store/sql/index.js';
import { DRIVERS, queryDb, skipWithoutDriver, sqlDatabase } from './sql-databases.js';
import { assertBodies } from './store-fixtures.js';

/** Rows one INSERT of insertMessages() writes, whatever form it took. */
function rowsOf(s: Statement): number {
  if (typeof s === 'string') return s.match(/\(\d+,\d+,\d+,\d+,/g)?.length ?? 0;
  // PostgreSQL: the sequences as an array parameter; MySQL: 5 parameters a row.
  if (s.text.includes('unnest')) return String(s.values[1]).split(',').length;
  return s.values.length / 5;
}

function rows(n: number, size: number): MessageRow[] {
  return Array.from({ length: n }, (_, i) => ({
    seq: i + 1,
    timestamp: String(1_700_000_000_000_000_000n + BigInt(i)),
    data: Buffer.alloc(size, i),
  }));
}

it('sql_bulk_insert_limit applies from 5 on and not with --sql_no_caching', () => {
  assert.equal(insertRowsLimit(0, false), 0);
  assert.equal(insertRowsLimit(-3, false), 0);
  assert.equal(insertRowsLimit(4, false), 0);
  assert.equal(insertRowsLimit(5, false), 5);
  assert.equal(insertRowsLimit(1000, false), 1000);
  assert.equal(insertRowsLimit(1000, true), 0);
});

it('INSERTs hold at most the limit of rows, in both forms of both dialects', () => {
  for (const [name, dialect] of [
    ['postgres', postgresDialect],
    ['mysql', mysqlDialect],
  ] as const) {
    // 100 B rows are literals in the text, 1 KiB rows are sent as bytes.
    for (const size of [100, 1024]) {
      const all = rows(23, size);
      const limited = dialect.insertMessages(7, all, 5);
      const counts = limited.map(rowsOf);
      assert.ok(
        counts.every((c) => c >= 1 && c <= 5),
        `${name} ${size} B: ${counts.join(' ')}`,
      );
      assert.equal(
        counts.reduce((a, b) => a + b, 0),
        23,
        `${name} ${size} B`,
      );
      const unlimited = dialect.insertMessages(7, all, 0).map(rowsOf);
      assert.equal(
        unlimited.reduce((a, b) => a + b, 0),
        23,
      );
      assert.ok(unlimited.length < limited.length, `${name} ${size} B`);
    }
  }
});

for (const driver of DRIVERS) {
  const skip = await skipWithoutDriver(driver);
  describe(`sql_bulk_insert_limit (${driver})`, { skip }, () => {
    it('every message is stored and comes back, small and large', async () => {
      const db = await sqlDatabase(driver);
      const open = (): Store => new SqlStore({ driver, source: db.source, bulkInsertLimit: 5 });
      const body = (seq: number): Buffer => Buffer.alloc(seq % 2 === 0 ? 1500 : 40, seq);
      const store = open();
      let reopened: Store | undefined;
      try {
        const { msgs } = store.createChannel('bulk');
        // One batch (one turn of the event loop), then a second one.
        for (let seq = 1; seq <= 23; seq++) {
          msgs.store(makeStoredMsg(seq, nowNanos(), 'bulk', '', body(seq)));
        }
        await store.flush();
        for (let seq = 24; seq <= 30; seq++) {
          msgs.store(makeStoredMsg(seq, nowNanos(), 'bulk', '', body(seq)));
        }
        await store.close();
        const [count] = await queryDb(driver, db.source, 'SELECT COUNT(*) AS n FROM Messages');
        assert.equal(Number(count!.n), 30);
        reopened = open();
        await reopened.recover();
        await assertBodies(reopened.lookupChannel('bulk')!.msgs, 'bulk', 30, body);
      } finally {
        await (reopened ?? store).close();
      }
    });
  });
}
