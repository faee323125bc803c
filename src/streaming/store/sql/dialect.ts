// The SQL literals and statement forms of each database (see SqlDialect), apart
// from the client libraries so that the store can write SQL before it connects.
import type { MessageRow, SqlDialect, SqlDriver, Statement } from './db.js';
import { hex, int } from './literal.js';

/** Average message size from which PostgreSQL gets the bytes as a binary parameter. */
const BINARY_FROM_BYTES = 512;

/** Rows of one prepared MySQL INSERT at most (a power of two; 5 placeholders a row, of 65,535). */
const MYSQL_ROWS_MAX = 1024;

/** Bytes of messages in one INSERT at most. */
const INSERT_MAX_BYTES = 4 * 1024 * 1024;

/** A bytea literal: E'\\x...' is the text \x..., bytea's hex input form. */
function pgBytes(value: Uint8Array): string {
  return `E'\\\\x${hex(value)}'`;
}

/** Rows cut where their bytes reach INSERT_MAX_BYTES or their number `maxRows` (0: no limit). */
function chunks(rows: readonly MessageRow[], maxRows: number): MessageRow[][] {
  const out: MessageRow[][] = [];
  let cur: MessageRow[] = [];
  let bytes = 0;
  for (const r of rows) {
    cur.push(r);
    bytes += r.data.length;
    if (bytes >= INSERT_MAX_BYTES || cur.length === maxRows) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

export const postgresDialect: SqlDialect = {
  // E'...' (escape syntax) means the same whatever standard_conforming_strings says.
  text(value) {
    if (value.includes('\0')) throw new Error('a NUL character cannot be stored in PostgreSQL');
    return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
  },
  bytes: (value) => (value === null ? 'NULL' : pgBytes(value)),
  rowColumn: 'row',
  ignoreDuplicate: () => 'ON CONFLICT DO NOTHING',
  // Large messages: their bytes as one binary parameter (pg sends a Buffer as it
  // is), cut into rows by offsets; as hex literals they would cost twice the bytes
  // and their parsing. Small ones: a VALUES list of literals, which keeps the batch
  // one simple query (a batch with a parameter is a pipelined transaction of several
  // queries: one round trip still, but more messages for the server to parse).
  insertMessages(channelId, rows, maxRows) {
    return chunks(rows, maxRows).map((part): Statement => {
      let bytes = 0;
      for (const r of part) bytes += r.data.length;
      if (bytes < BINARY_FROM_BYTES * part.length) {
        return (
          'INSERT INTO Messages (id, seq, timestamp, size, data) VALUES ' +
          part
            .map(
              (r) =>
                `(${channelId},${int(r.seq)},${r.timestamp},${r.data.length},${pgBytes(r.data)})`,
            )
            .join(',') +
          ' ON CONFLICT DO NOTHING'
        );
      }
      const offsets: number[] = [];
      const sizes: number[] = [];
      let at = 1;
      for (const r of part) {
        offsets.push(at);
        sizes.push(r.data.length);
        at += r.data.length;
      }
      return {
        text:
          'INSERT INTO Messages (id, seq, timestamp, size, data)' +
          ' SELECT $1::int, u.s, u.t, u.z, substring($6::bytea FROM u.o FOR u.z)' +
          ' FROM unnest($2::bigint[], $3::bigint[], $4::int[], $5::int[]) AS u(s, t, z, o)' +
          ' ON CONFLICT DO NOTHING',
        values: [
          channelId,
          `{${part.map((r) => int(r.seq)).join(',')}}`,
          `{${part.map((r) => r.timestamp).join(',')}}`,
          `{${sizes.join(',')}}`,
          `{${offsets.join(',')}}`,
          Buffer.concat(part.map((r) => r.data)),
        ],
      };
    });
  },
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
  // Small messages: a VALUES list of hex literals, which keeps the batch one text and
  // one round trip. Large ones: prepared statements, where mysql2 sends the bytes as
  // they are (hex doubles them and MySQL parses every digit). Statements hold 2^k rows,
  // so that a few prepared statements serve every batch.
  insertMessages(channelId, rows, maxRows) {
    const out: Statement[] = [];
    const preparedMax = maxRows > 0 ? Math.min(MYSQL_ROWS_MAX, maxRows) : MYSQL_ROWS_MAX;
    for (const part of chunks(rows, maxRows)) {
      let bytes = 0;
      for (const r of part) bytes += r.data.length;
      if (bytes < BINARY_FROM_BYTES * part.length) {
        out.push(
          'INSERT INTO Messages (id, seq, timestamp, size, data) VALUES ' +
            part
              .map(
                (r) =>
                  `(${channelId},${int(r.seq)},${r.timestamp},${r.data.length},X'${hex(r.data)}')`,
              )
              .join(',') +
            ' ON DUPLICATE KEY UPDATE seq = seq',
        );
        continue;
      }
      let at = 0;
      while (at < part.length) {
        let n = MYSQL_ROWS_MAX;
        while (n > part.length - at || n > preparedMax) n >>= 1;
        const values: unknown[] = [];
        for (const r of part.slice(at, at + n)) {
          values.push(channelId, r.seq, r.timestamp, r.data.length, r.data);
        }
        out.push({
          text:
            'INSERT INTO Messages (id, seq, timestamp, size, data) VALUES ' +
            Array.from({ length: n }, () => '(?,?,?,?,?)').join(',') +
            ' ON DUPLICATE KEY UPDATE seq = seq',
          values,
        });
        at += n;
      }
    }
    return out;
  },
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
