// The SQL literals and statement forms of each database (see SqlDialect), apart
// from the client libraries so that the store can write SQL before it connects.
import type { SqlDialect, SqlDriver } from './db.js';
import { hex } from './literal.js';

export const postgresDialect: SqlDialect = {
  // E'...' (escape syntax) means the same whatever standard_conforming_strings says.
  text(value) {
    if (value.includes('\0')) throw new Error('a NUL character cannot be stored in PostgreSQL');
    return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
  },
  // E'\\x...' is the text \x..., bytea's hex input form.
  bytes(value) {
    return value === null ? 'NULL' : `E'\\\\x${hex(value)}'`;
  },
  rowColumn: 'row',
  ignoreDuplicate: () => 'ON CONFLICT DO NOTHING',
  upsertSubs(tuples) {
    return (
      `INSERT INTO Subscriptions (id, subid, proto) VALUES ${tuples.join(',')}` +
      ' ON CONFLICT (id, subid) DO UPDATE SET proto = EXCLUDED.proto'
    );
  },
  updateLastSent(rows) {
    if (rows.length === 0) return [];
    const values = rows.map(([c, s, l]) => `(${c},${s}::bigint,${l}::bigint)`).join(',');
    return [
      `UPDATE Subscriptions AS s SET lastsent = v.l FROM (VALUES ${values}) AS v(c, i, l)` +
        ' WHERE s.id = v.c AND s.subid = v.i',
    ];
  },
};

export const mysqlDialect: SqlDialect = {
  // Hex literals read the same whatever sql_mode says about backslashes. They are
  // binary strings: stored as the UTF-8 bytes they are, and compared byte for byte
  // with a column of any character set (a utf8mb4 literal cannot be compared with a
  // latin1 column, the default of many servers).
  text: (value) => `X'${Buffer.from(value, 'utf8').toString('hex')}'`,
  bytes: (value) => (value === null ? 'NULL' : `X'${hex(value)}'`),
  rowColumn: '`row`',
  ignoreDuplicate: (firstKey) => `ON DUPLICATE KEY UPDATE ${firstKey} = ${firstKey}`,
  upsertSubs(tuples) {
    return (
      `INSERT INTO Subscriptions (id, subid, proto) VALUES ${tuples.join(',')}` +
      ' ON DUPLICATE KEY UPDATE proto = VALUES(proto)'
    );
  },
  updateLastSent(rows) {
    return rows.map(
      ([c, s, l]) => `UPDATE Subscriptions SET lastsent = ${l} WHERE id = ${c} AND subid = ${s}`,
    );
  },
};

export function dialectOf(driver: SqlDriver): SqlDialect {
  return driver === 'postgres' ? postgresDialect : mysqlDialect;
}
