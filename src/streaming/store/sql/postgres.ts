// `--sql_driver postgres`, through `pg`. The source is what the reference's driver
// (lib/pq) takes: a URL (`postgres://user:pass@host:port/db?sslmode=disable`) or
// libpq's `key=value` pairs (`host=db port=5432 dbname=stan user=stan sslmode=disable`).
//
// A write batch is one simple-query text: PostgreSQL runs the statements of such a
// text as one implicit transaction, so a batch is one round trip and commits or
// fails whole. A batch with parameters (the bytes of large messages) is several
// queries in an explicit transaction, sent at once on the write connection (pg's
// pipeline mode): one round trip too.
import pg from 'pg';
import { LockLostError, type Row, type SqlDb, type SqlDbOptions } from './db.js';
import { postgresDialect } from './dialect.js';

/** pg's configuration for a lib/pq source (URL or key=value pairs). */
export function postgresConfig(source: string): pg.PoolConfig {
  const s = source.trim();
  if (/^postgres(ql)?:\/\//i.test(s)) return { connectionString: s };
  const out: pg.PoolConfig = {};
  // key=value, values optionally in single quotes with \' and \\ escapes (libpq's rules).
  const re = /\s*([a-zA-Z_]+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|(\S*))/gy;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = re.exec(s)) !== null) {
    end = re.lastIndex;
    const key = m[1]!.toLowerCase();
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!;
    switch (key) {
      case 'host':
        out.host = value;
        break;
      case 'port':
        out.port = Number(value);
        break;
      case 'dbname':
        out.database = value;
        break;
      case 'user':
        out.user = value;
        break;
      case 'password':
        out.password = value;
        break;
      case 'sslmode':
        if (value === 'disable') out.ssl = false;
        else if (value === 'verify-full' || value === 'verify-ca') out.ssl = true;
        else out.ssl = { rejectUnauthorized: false };
        break;
      case 'connect_timeout':
        out.connectionTimeoutMillis = Number(value) * 1000;
        break;
      case 'application_name':
        out.application_name = value;
        break;
      default:
      // Other libpq keys (fallback_application_name, sslcert...) are not needed here.
    }
  }
  if (s.slice(end).trim() !== '') throw new Error(`sql: invalid PostgreSQL source "${source}"`);
  return out;
}

export function openPostgres(options: SqlDbOptions): SqlDb {
  const base = postgresConfig(options.source);
  const pool = (max: number, name: string, pipeline = false): pg.Pool => {
    const p = new pg.Pool({
      ...base,
      max,
      pipeline,
      application_name: base.application_name ?? `wirebus-${name}`,
      connectionTimeoutMillis: base.connectionTimeoutMillis ?? 5000,
      keepAlive: true,
    });
    // An idle connection that breaks (database restarted) is dropped by the pool;
    // the next query opens a new one. Without a listener it would crash the process.
    p.on('error', () => undefined);
    return p;
  };
  const writePool = pool(1, 'write', true);
  const readPool = pool(Math.max(1, options.readConnections), 'read');
  let lockPool: pg.Pool | undefined;
  return {
    driver: 'postgres',
    dialect: postgresDialect,
    async write(statements, fence) {
      if (fence === undefined && statements.every((st) => typeof st === 'string')) {
        // One text: PostgreSQL runs it as one implicit transaction.
        await writePool.query(statements.join(';\n'));
        return;
      }
      // Statements with parameters are queries of their own (the extended protocol):
      // the texts between them go together, all in one explicit transaction.
      const client = await writePool.connect();
      let broken = false;
      if (fence === undefined) {
        // Every query sent before any answer. A failed statement aborts the
        // transaction: those after it fail too and COMMIT rolls back.
        const queries: Promise<unknown>[] = [];
        let texts = ['BEGIN'];
        for (const st of statements) {
          if (typeof st === 'string') {
            texts.push(st);
            continue;
          }
          if (texts.length > 0) queries.push(client.query(texts.join(';\n')));
          queries.push(client.query(st.text, [...st.values]));
          texts = [];
        }
        texts.push('COMMIT');
        queries.push(client.query(texts.join(';\n')));
        const failed = (await Promise.allSettled(queries)).find((r) => r.status === 'rejected');
        client.release(failed !== undefined);
        if (failed !== undefined) throw failed.reason;
        return;
      }
      // Fenced (fault tolerance): the lock row is read first, and the writes go
      // only if this server still owns it.
      try {
        const res = (await client.query(
          'BEGIN; SELECT id FROM StoreLock FOR SHARE',
        )) as unknown as pg.QueryResult<{ id: string }>[];
        const owner = res[1]?.rows[0]?.id ?? '';
        if (owner !== fence) {
          await client.query('ROLLBACK');
          throw new LockLostError(owner);
        }
        let texts: string[] = [];
        const flushTexts = async (): Promise<void> => {
          if (texts.length === 0) return;
          await client.query(texts.join(';\n'));
          texts = [];
        };
        for (const st of statements) {
          if (typeof st === 'string') {
            texts.push(st);
            continue;
          }
          await flushTexts();
          await client.query(st.text, [...st.values]);
        }
        texts.push('COMMIT');
        await flushTexts();
      } catch (err) {
        if (!(err instanceof LockLostError)) {
          broken = true;
          await client.query('ROLLBACK').catch(() => undefined);
        }
        throw err;
      } finally {
        client.release(broken);
      }
    },
    async read(sql) {
      const res = await readPool.query<unknown[]>({ text: sql, rowMode: 'array' });
      return res.rows;
    },
    async lockTransaction(body) {
      lockPool ??= pool(1, 'lock');
      const client = await lockPool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const q = async (sql: string): Promise<Row[]> =>
          (await client.query<unknown[]>({ text: sql, rowMode: 'array' })).rows;
        const out = await body(q);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        broken = true;
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release(broken);
      }
    },
    async end() {
      await Promise.all([writePool.end(), readPool.end(), lockPool?.end()]);
    },
  };
}
