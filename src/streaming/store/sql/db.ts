// The SQL store's access to its database, one implementation per `--sql_driver`
// (postgres.ts through `pg`, mysql.ts through `mysql2`). Everything above this file
// writes SQL text with the literals of a SqlDialect and never binds parameters: a
// batch of writes is one multi-statement text, so one round trip whatever it holds
// (bind parameters take one round trip per statement with both clients).

/** The two drivers of the reference (`--sql_driver`). */
export type SqlDriver = 'postgres' | 'mysql';

/**
 * A statement: SQL text, or text with parameters (`$1`... for PostgreSQL), for bulk
 * bytes that are best sent as they are rather than as hex digits.
 */
export type Statement = string | { readonly text: string; readonly values: readonly unknown[] };

/** A message to insert into Messages. */
export interface MessageRow {
  readonly seq: number;
  /** Unix ns as decimal text. */
  readonly timestamp: string;
  readonly data: Uint8Array;
}

/** A row as an array of column values (numbers, bigint columns as decimal text, Buffers). */
export type Row = readonly unknown[];

/** The literals and statement forms that differ between the two databases. */
export interface SqlDialect {
  /** A string literal (any Unicode; NUL refused by PostgreSQL). */
  text(value: string): string;
  /** A bytes literal; NULL for null. */
  bytes(value: Uint8Array | null): string;
  /** The SubsPending column `row` as this database wants it written. */
  readonly rowColumn: string;
  /** What makes an INSERT ignore a row whose primary key exists (`firstKey`: a key column). */
  ignoreDuplicate(firstKey: string): string;
  /** Subscriptions rows (`(id, subid, proto)` tuples): inserted, or their proto replaced. */
  upsertSubs(tuples: readonly string[]): string;
  /**
   * Inserts Messages rows of one channel (rows already there are left as they are),
   * at most `maxRows` rows per INSERT (`--sql_bulk_insert_limit`; 0: no limit).
   */
  insertMessages(channelId: number, rows: readonly MessageRow[], maxRows: number): Statement[];
  /** Subscriptions.lastsent of several rows (`[channel, subid, lastSent]`). */
  updateLastSent(rows: readonly (readonly [number, number, number])[]): string[];
}

/** The lock row was not ours when a fenced write transaction looked at it. */
export class LockLostError extends Error {
  constructor(owner: string) {
    super(`lost store lock (held by ${owner === '' ? 'nobody' : `"${owner}"`})`);
  }
}

export interface SqlDb {
  readonly driver: SqlDriver;
  readonly dialect: SqlDialect;
  /**
   * Runs the statements as one transaction. With `fence`, the transaction first reads
   * the StoreLock row under a share lock and commits only if `fence` owns it (else
   * throws LockLostError): a server that lost the lock writes nothing, and no one can
   * take the lock while the transaction runs.
   */
  write(statements: readonly Statement[], fence?: string): Promise<void>;
  /** A read on the read connections. */
  read(sql: string): Promise<Row[]>;
  /** A transaction on the lock's own connection: `q` runs one statement in it. */
  lockTransaction<T>(body: (q: (sql: string) => Promise<Row[]>) => Promise<T>): Promise<T>;
  end(): Promise<void>;
}

export interface SqlDbOptions {
  readonly source: string;
  /** Connections for reads (catching-up subscribers, recovery). */
  readonly readConnections: number;
}

/** `--sql_driver` as given (the reference accepts exactly these two names). */
export function parseDriver(name: string): SqlDriver | undefined {
  const n = name.toLowerCase();
  if (n === 'postgres' || n === 'postgresql' || n === 'pg') return 'postgres';
  if (n === 'mysql' || n === 'mariadb') return 'mysql';
  return undefined;
}

export async function openDb(driver: SqlDriver, options: SqlDbOptions): Promise<SqlDb> {
  // Each client library is loaded only when its driver is used.
  if (driver === 'postgres') {
    const { openPostgres } = await import('./postgres.js');
    return openPostgres(options);
  }
  const { openMysql } = await import('./mysql.js');
  return openMysql(options);
}

/** Statements joined in chunks of at most `max` characters (a statement alone may exceed it). */
export function chunkStatements(statements: readonly string[], max: number): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  let len = 0;
  for (const s of statements) {
    if (cur.length > 0 && len + s.length + 2 > max) {
      out.push(cur.join(';\n'));
      cur = [];
      len = 0;
    }
    cur.push(s);
    len += s.length + 2;
  }
  if (cur.length > 0) out.push(cur.join(';\n'));
  return out;
}
