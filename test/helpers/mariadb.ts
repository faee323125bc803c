// A throwaway MariaDB for the SQL store tests on `--sql_driver mysql`: a private
// server (mariadb-install-db into a temporary directory, a free port, its socket in
// that directory) started once per test process and removed when it exits. Set
// WIREBUS_TEST_MYSQL to a source of your own instead (go-sql-driver form,
// `user:pass@tcp(host:port)/`, a user allowed to CREATE DATABASE); the tests that stop
// the database are then skipped.
//
// Running as root (CI, containers) the server runs as the `mysql` user that Debian's
// package creates (`--user=mysql`), as its init scripts do.

import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { mysqlConfig } from '../../src/streaming/store/sql/mysql.js';
import { freePort } from './process.js';

export interface TestMariaDb {
  /** A go-sql-driver source for `database` (what wirebus and the reference take). */
  source(database: string): string;
  /** A new empty database; returns its source. */
  createDatabase(): Promise<string>;
  /** Whether stop()/start() work (false for a server given by WIREBUS_TEST_MYSQL). */
  readonly controllable: boolean;
  /** Kills the server at once, as a crash would. */
  stop(): void;
  /** Starts it again on the same port and data; resolves once it takes connections. */
  start(): Promise<void>;
}

let cached: Promise<TestMariaDb | string> | undefined;

/** The test MariaDB of this process, or the reason there is none. */
export function testMariaDb(): Promise<TestMariaDb | string> {
  cached ??= open();
  return cached;
}

/** For `it(..., { skip })`: the reason, printed once, or false when MariaDB runs. */
export async function skipWithoutMariaDb(): Promise<string | false> {
  const dbOrReason = await testMariaDb();
  if (typeof dbOrReason !== 'string') return false;
  // CI installs MariaDB (.ci/run): there, not running the MySQL tests is a failure.
  if (process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false') {
    throw new Error(`CI must run the MySQL tests, but: ${dbOrReason}`);
  }
  process.stderr.write(`# SKIPPED MySQL tests: ${dbOrReason}\n`);
  return dbOrReason;
}

let counter = 0;

function open(): Promise<TestMariaDb | string> {
  const given = process.env.WIREBUS_TEST_MYSQL;
  if (given !== undefined && given !== '') return Promise.resolve(external(given));
  return startMariaDb({ durable: false });
}

function external(base: string): TestMariaDb {
  const source = (database: string): string => base.replace(/\/[^/]*$/, `/${database}`);
  return {
    source,
    createDatabase: () => createDatabase(source('')),
    controllable: false,
    stop: () => {
      throw new Error('WIREBUS_TEST_MYSQL: the server cannot be stopped by the tests');
    },
    start: () => Promise.resolve(),
  };
}

/**
 * Connection options of mysql2 for a source as wirebus reads it (its own parser), as
 * root unless the source names a user, and without a database for the admin source.
 */
export function clientOptions(source: string): mysql.ConnectionOptions {
  const { database, ...rest } = mysqlConfig(source);
  return { user: 'root', ...rest, ...(database === '' ? {} : { database }) };
}

async function createDatabase(admin: string): Promise<string> {
  const name = `wirebus_${process.pid}_${Date.now().toString(36)}_${++counter}`;
  const conn = await mysql.createConnection(clientOptions(admin));
  try {
    await conn.query(`CREATE DATABASE ${name}`);
  } finally {
    await conn.end();
  }
  return admin.replace(/\/[^/]*$/, `/${name}`);
}

function findBinary(names: readonly string[]): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin'];
  for (const name of names) {
    for (const dir of dirs) {
      if (dir !== '' && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  return undefined;
}

/**
 * A new private server (not the cached one). `durable: true` for benchmarks, where a
 * commit must cost what it costs on a real server (the log flushed at each commit).
 */
export async function startMariaDb(options: { durable: boolean }): Promise<TestMariaDb | string> {
  const server = findBinary(['mariadbd', 'mysqld']);
  const install = findBinary(['mariadb-install-db', 'mysql_install_db']);
  if (server === undefined || install === undefined) {
    return 'no MariaDB found (install Debian\'s "mariadb-server" package, or set WIREBUS_TEST_MYSQL)';
  }
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-maria-'));
  if (asRoot) {
    try {
      const uid = Number(execFileSync('id', ['-u', 'mysql']).toString().trim());
      const gid = Number(execFileSync('id', ['-g', 'mysql']).toString().trim());
      chownSync(dir, uid, gid);
    } catch {
      rmSync(dir, { recursive: true, force: true });
      return 'running as root and there is no "mysql" user to run MariaDB as';
    }
  }
  const user = asRoot ? ['--user=mysql'] : [];
  const data = join(dir, 'data');
  const init = spawnSync(
    install,
    [
      '--no-defaults',
      `--datadir=${data}`,
      ...user,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ],
    { encoding: 'utf8' },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return `mariadb-install-db failed: ${init.stderr}`;
  }
  const port = await freePort();
  const args = [
    '--no-defaults',
    `--datadir=${data}`,
    ...user,
    `--socket=${join(dir, 'sock')}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--pid-file=${join(dir, 'pid')}`,
    `--log-error=${join(dir, 'err.log')}`,
    '--skip-log-bin',
    '--max-connections=300',
    '--innodb-buffer-pool-size=64M',
    // Debian's packaged configuration (which --no-defaults leaves out) says the same.
    '--character-set-server=utf8mb4',
    '--collation-server=utf8mb4_general_ci',
    // Tests crash wirebus processes, never the machine: the log need not reach the disk
    // at each commit, only the server (visibility is what they check).
    `--innodb-flush-log-at-trx-commit=${options.durable ? 1 : 2}`,
  ];
  let child: ChildProcess | undefined;
  const admin = `root@tcp(127.0.0.1:${port})/`;
  const start = async (): Promise<void> => {
    child = spawn(server, args, { stdio: 'ignore' });
    child.unref();
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const conn = await mysql.createConnection(clientOptions(admin));
        await conn.end();
        return;
      } catch (err) {
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`MariaDB did not start: ${String(err)}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const stop = (): void => {
    if (child?.pid !== undefined && child.exitCode === null) child.kill('SIGKILL');
    child = undefined;
  };
  try {
    await start();
  } catch (err) {
    stop();
    rmSync(dir, { recursive: true, force: true });
    return String(err);
  }
  process.once('exit', () => {
    stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const source = (database: string): string => `root@tcp(127.0.0.1:${port})/${database}`;
  return {
    source,
    createDatabase: () => createDatabase(admin),
    controllable: true,
    stop,
    start: async () => {
      // The killed server's files must be released before a new one opens them.
      await new Promise((r) => setTimeout(r, 200));
      await start();
    },
  };
}
