// `--sql_driver mysql` (MySQL or MariaDB), through `mysql2`. The source is what the
// reference's driver (go-sql-driver/mysql) takes: `user:password@tcp(host:port)/db`,
// `user@unix(/run/mysqld/mysqld.sock)/db`, with `?params` ignored; a `mysql://` URL
// works too.
//
// A write batch is `START TRANSACTION; ...; COMMIT` sent as one multi-statement text
// (one round trip), split only where it would exceed the server's max_allowed_packet.
// MySQL stops at a failing statement and leaves the transaction open: the connection
// rolls back before it is reused.
import mysql from 'mysql2/promise';
import { chunkStatements, LockLostError, type Row, type SqlDb, type SqlDbOptions } from './db.js';
import { mysqlDialect } from './dialect.js';
import { str } from './literal.js';

/** mysql2's connection options for a go-sql-driver DSN or a mysql:// URL. */
export function mysqlConfig(source: string): mysql.PoolOptions {
  const s = source.trim();
  if (/^mysql:\/\//i.test(s)) return { uri: s };
  const slash = s.lastIndexOf('/');
  if (slash < 0) throw new Error(`sql: invalid MySQL source "${source}" (no "/dbname")`);
  const head = s.slice(0, slash);
  const database = s.slice(slash + 1).split('?')[0]!;
  const at = head.lastIndexOf('@');
  const userInfo = at < 0 ? '' : head.slice(0, at);
  const net = at < 0 ? head : head.slice(at + 1);
  const out: mysql.PoolOptions = { database };
  if (userInfo !== '') {
    const colon = userInfo.indexOf(':');
    out.user = colon < 0 ? userInfo : userInfo.slice(0, colon);
    if (colon >= 0) out.password = userInfo.slice(colon + 1);
  }
  const m = /^(\w+)(?:\((.*)\))?$/.exec(net);
  if (net === '' || m === null) {
    if (net !== '') throw new Error(`sql: invalid MySQL source "${source}"`);
    out.host = '127.0.0.1';
    out.port = 3306;
  } else if (m[1] === 'unix') {
    out.socketPath = m[2] ?? '/tmp/mysql.sock';
  } else if (m[1] === 'tcp' || m[1] === 'tcp6' || m[1] === 'tcp4') {
    const addr = m[2] ?? '127.0.0.1:3306';
    const i = addr.lastIndexOf(':');
    const host = i < 0 ? addr : addr.slice(0, i);
    out.host = host.replace(/^\[(.*)\]$/, '$1');
    out.port = i < 0 ? 3306 : Number(addr.slice(i + 1));
  } else {
    throw new Error(`sql: unsupported MySQL network "${m[1]}" in "${source}"`);
  }
  return out;
}

export function openMysql(options: SqlDbOptions): SqlDb {
  const base = mysqlConfig(options.source);
  const pool = (max: number): mysql.Pool => {
    const p = mysql.createPool({
      ...base,
      connectionLimit: max,
      multipleStatements: true,
      // BIGINT columns as decimal text: timestamps in ns exceed 2^53.
      supportBigNumbers: true,
      bigNumberStrings: true,
      charset: 'utf8mb4',
      connectTimeout: 5000,
      enableKeepAlive: true,
    });
    p.on('connection', (conn) => {
      // A connection that breaks later must not crash the process.
      conn.on('error', () => undefined);
    });
    return p;
  };
  const writePool = pool(1);
  const readPool = pool(Math.max(1, options.readConnections));
  let lockPool: mysql.Pool | undefined;
  let maxText = 0;

  const rows = (res: unknown): Row[] => (Array.isArray(res) ? (res as Row[]) : []);

  return {
    driver: 'mysql',
    dialect: mysqlDialect,
    async write(statements, fence) {
      const conn = await writePool.getConnection();
      let broken = false;
      try {
        if (maxText === 0) {
          const [r] = await conn.query({ sql: 'SELECT @@max_allowed_packet', rowsAsArray: true });
          // Room for the protocol's own bytes; never more than 16 MB per round trip.
          maxText = Math.min(Number(rows(r)[0]?.[0] ?? 4 << 20) - 4096, 16 << 20);
        }
        // Texts go together (as few round trips as the packet size allows); a
        // prepared statement (large messages) takes a round trip of its own.
        let texts: string[] = ['START TRANSACTION'];
        if (fence !== undefined) texts.push('SELECT id FROM StoreLock LOCK IN SHARE MODE');
        let first = true;
        const flushTexts = async (): Promise<void> => {
          for (const chunk of chunkStatements(texts, maxText)) {
            const [res] = await conn.query({ sql: chunk, rowsAsArray: true });
            if (first && fence !== undefined) {
              // Results of START TRANSACTION, then of the SELECT.
              const sel = Array.isArray(res) ? (res as unknown[])[1] : undefined;
              const owner = str(rows(sel)[0]?.[0]);
              if (owner !== fence) {
                await conn.query('ROLLBACK');
                throw new LockLostError(owner);
              }
            }
            first = false;
          }
          texts = [];
        };
        for (const st of statements) {
          if (typeof st === 'string') {
            texts.push(st);
            continue;
          }
          await flushTexts();
          await conn.execute(st.text, [...st.values] as mysql.ExecuteValues);
        }
        texts.push('COMMIT');
        await flushTexts();
      } catch (err) {
        if (!(err instanceof LockLostError)) {
          broken = true;
          await conn.query('ROLLBACK').catch(() => undefined);
        }
        throw err;
      } finally {
        if (broken) conn.destroy();
        else conn.release();
      }
    },
    async read(sql) {
      const [res] = await readPool.query({ sql, rowsAsArray: true });
      return rows(res);
    },
    async lockTransaction(body) {
      lockPool ??= pool(1);
      const conn = await lockPool.getConnection();
      let broken = false;
      try {
        await conn.query('START TRANSACTION');
        const q = async (sql: string): Promise<Row[]> => {
          const [res] = await conn.query({ sql, rowsAsArray: true });
          return rows(res);
        };
        const out = await body(q);
        await conn.query('COMMIT');
        return out;
      } catch (err) {
        broken = true;
        await conn.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        if (broken) conn.destroy();
        else conn.release();
      }
    },
    async end() {
      await Promise.all([writePool.end(), readPool.end(), lockPool?.end()]);
    },
  };
}
