// A throwaway PostgreSQL for the SQL store and fault-tolerance tests: a private
// cluster (initdb into a temporary directory, a free port, its socket in that
// directory) started once per test process and removed when it exits. Set
// WIREBUS_TEST_PG to a connection string (a role allowed to CREATE DATABASE) to use
// a server of your own instead; the tests that stop the database are then skipped.
//
// Running as root (CI, containers) the cluster runs as the `postgres` user that
// Debian's package creates: PostgreSQL refuses to run as root.

import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './process.js';

export interface TestPostgres {
  /** A connection string for `database`. */
  url(database: string): string;
  /** A new empty database; returns its connection string. */
  createDatabase(): Promise<string>;
  /** Whether stop()/start() work (false for a server given by WIREBUS_TEST_PG). */
  readonly controllable: boolean;
  /** Stops the server at once, as a crash would (`pg_ctl stop -m immediate`). */
  stop(): void;
  /** Starts it again on the same port and data. */
  start(): void;
}

let cached: Promise<TestPostgres | string> | undefined;

/**
 * The test PostgreSQL of this process, or the reason there is none (tests print it
 * and skip: a machine without PostgreSQL must say so instead of passing silently).
 */
export function testPostgres(): Promise<TestPostgres | string> {
  cached ??= open();
  return cached;
}

/** For `it(..., { skip })`: the reason, printed once, or false when PostgreSQL runs. */
export async function skipWithoutPostgres(): Promise<string | false> {
  const pgOrReason = await testPostgres();
  if (typeof pgOrReason !== 'string') return false;
  // CI installs PostgreSQL (.ci/run): there, not running the SQL tests is a failure.
  if (process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false') {
    throw new Error(`CI must run the SQL tests, but: ${pgOrReason}`);
  }
  process.stderr.write(`# SKIPPED SQL tests: ${pgOrReason}\n`);
  return pgOrReason;
}

let counter = 0;

function open(): Promise<TestPostgres | string> {
  const given = process.env.WIREBUS_TEST_PG;
  if (given !== undefined && given !== '') return Promise.resolve(external(given));
  return startPostgres({ fsync: false });
}

/**
 * A new private cluster (not the cached one). `fsync: true` for benchmarks, where
 * commits must cost what they cost on a real server.
 */
export async function startPostgres(options: { fsync: boolean }): Promise<TestPostgres | string> {
  const bin = findBinDir();
  if (bin === undefined) {
    return 'no PostgreSQL found (install Debian\'s "postgresql" package, or set WIREBUS_TEST_PG)';
  }
  return startCluster(bin, options.fsync);
}

function external(base: string): TestPostgres {
  const url = (database: string): string => {
    const u = new URL(base);
    u.pathname = `/${database}`;
    return u.toString();
  };
  return {
    url,
    createDatabase: () => createDatabase(base, url),
    controllable: false,
    stop: () => {
      throw new Error('WIREBUS_TEST_PG: the server cannot be stopped by the tests');
    },
    start: () => undefined,
  };
}

async function createDatabase(admin: string, url: (db: string) => string): Promise<string> {
  const name = `wirebus_${process.pid}_${Date.now().toString(36)}_${++counter}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return url(name);
}

/** initdb's folder: on PATH, else Debian's /usr/lib/postgresql/<newest>/bin. */
function findBinDir(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir !== '' && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) {
      return dir;
    }
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0]!, 'bin') : undefined;
}

async function startCluster(bin: string, fsync: boolean): Promise<TestPostgres | string> {
  const asRoot = process.getuid?.() === 0;
  let owner: { uid: number; gid: number } | undefined;
  if (asRoot) {
    try {
      const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
      owner = { uid, gid };
    } catch {
      return 'running as root and there is no "postgres" user to run PostgreSQL as';
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-pg-'));
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  const port = await freePort();
  // As the postgres user when root; `runuser` keeps the environment, so no PGDATA leaks.
  const run = (cmd: string, args: string[]): ReturnType<typeof spawnSync> => {
    const full = join(bin, cmd);
    return asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', full, ...args], { encoding: 'utf8' })
      : spawnSync(full, args, { encoding: 'utf8' });
  };
  const init = run('initdb', [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return `initdb failed: ${String(init.stderr)}`;
  }
  // Tests run with fsync off: they crash wirebus processes, never the machine, and
  // commit visibility (what they check) does not depend on it.
  const serverOptions = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses='127.0.0.1'",
    ...(fsync ? [] : ['-c fsync=off', '-c full_page_writes=off']),
    '-c max_connections=200',
  ].join(' ');
  const start = (): void => {
    const r = run('pg_ctl', [
      '-D',
      data,
      '-l',
      join(dir, 'log'),
      '-o',
      serverOptions,
      '-w',
      'start',
    ]);
    if (r.status !== 0) throw new Error(`pg_ctl start failed: ${String(r.stderr)}`);
  };
  const stop = (): void => {
    run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  };
  try {
    start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return String(err);
  }
  process.once('exit', () => {
    stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = (database: string): string => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    url,
    createDatabase: () => createDatabase(url('postgres'), url),
    controllable: true,
    stop,
    start,
  };
}
