// A new database on either test server (PostgreSQL or MariaDB), as the tests that
// run the same thing on both drivers need it: its source for wirebus and for the
// reference, loading rows into it, dumping it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { schemaStatements } from '../../src/streaming/store/sql/schema.js';
import type { SqlDriver } from '../../src/streaming/store/sql/index.js';
import { clientOptions, skipWithoutMariaDb, testMariaDb } from '../helpers/mariadb.js';
import { skipWithoutPostgres, testPostgres } from '../helpers/postgres.js';
import { freePort } from '../helpers/process.js';
import { STAN_CONFIG } from './sql-scenario.js';
import { startReference, type RefProcess } from './stan-reference.js';

export const DRIVERS: readonly SqlDriver[] = ['postgres', 'mysql'];

export function skipWithoutDriver(driver: SqlDriver): Promise<string | false> {
  return driver === 'postgres' ? skipWithoutPostgres() : skipWithoutMariaDb();
}

/** The file under fixtures/sql/ of the reference's rows for `driver` (and `--sql_no_caching`). */
export function fixtureName(driver: SqlDriver, noCaching: boolean): string {
  return `${driver}${noCaching ? '-no-caching' : ''}.sql`;
}

export interface TestDatabase {
  /** What wirebus's --sql_source takes. */
  readonly source: string;
  /** Its rows as INSERT statements (pg_dump / mariadb-dump). */
  dump(): string;
}

export async function sqlDatabase(driver: SqlDriver): Promise<TestDatabase> {
  if (driver === 'postgres') {
    const p = await testPostgres();
    if (typeof p === 'string') throw new Error(p);
    const source = await p.createDatabase();
    return {
      source,
      dump: () =>
        execFileSync('pg_dump', ['--data-only', '--inserts', '--column-inserts', source], {
          encoding: 'utf8',
        }),
    };
  }
  const m = await testMariaDb();
  if (typeof m === 'string') throw new Error(m);
  const source = await m.createDatabase();
  const { host, port, database } = clientOptions(source);
  return {
    source,
    dump: () =>
      execFileSync(
        'mariadb-dump',
        [
          '--no-defaults',
          `-h${host}`,
          `-P${port}`,
          '-uroot',
          '--no-create-info',
          '--skip-extended-insert',
          '--complete-insert',
          '--hex-blob',
          '--compact',
          database!,
        ],
        { encoding: 'utf8' },
      ),
  };
}

/** The same database as the reference's drivers want it (lib/pq wants TLS unless told). */
export function referenceSource(driver: SqlDriver, source: string): string {
  return driver === 'postgres' ? `${source}?sslmode=disable` : source;
}

/** Creates the reference's tables in the database and runs `statements` there. */
export async function loadInto(
  driver: SqlDriver,
  source: string,
  statements: readonly string[],
): Promise<void> {
  const all = [...schemaStatements(driver), ...statements];
  if (driver === 'postgres') {
    const client = new pg.Client({ connectionString: source });
    await client.connect();
    try {
      await client.query(all.join(';\n'));
    } finally {
      await client.end();
    }
    return;
  }
  const conn = await mysql.createConnection({ ...clientOptions(source), multipleStatements: true });
  try {
    await conn.query(all.join(';\n'));
  } finally {
    await conn.end();
  }
}

/** Runs one query on the database; rows as objects. */
export async function queryDb(
  driver: SqlDriver,
  source: string,
  sql: string,
): Promise<Record<string, unknown>[]> {
  if (driver === 'postgres') {
    const client = new pg.Client({ connectionString: source });
    await client.connect();
    try {
      return (await client.query(sql)).rows as Record<string, unknown>[];
    } finally {
      await client.end();
    }
  }
  const conn = await mysql.createConnection(clientOptions(source));
  try {
    const [rows] = await conn.query(sql);
    return rows as Record<string, unknown>[];
  } finally {
    await conn.end();
  }
}

export interface SqlReference {
  readonly ref: RefProcess;
  readonly url: string;
  readonly http: string;
}

/**
 * The reference serving the database at `source` (wirebus's form), with the
 * per-channel limits of sql-scenario.ts and `extra` arguments (--sql_no_caching...).
 */
export async function startSqlReference(
  driver: SqlDriver,
  source: string,
  extra: readonly string[] = [],
): Promise<SqlReference> {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-ref-'));
  writeFileSync(join(dir, 'stan.conf'), STAN_CONFIG);
  const port = await freePort();
  const http = await freePort();
  const ref = await startReference(
    [
      '-p',
      String(port),
      '-m',
      String(http),
      '-st',
      'SQL',
      '--sql_driver',
      driver,
      '--sql_source',
      referenceSource(driver, source),
      '-sc',
      join(dir, 'stan.conf'),
      ...extra,
    ],
    'Streaming Server is ready',
  );
  return { ref, url: `nats://127.0.0.1:${port}`, http: `http://127.0.0.1:${http}` };
}
