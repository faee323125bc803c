// wirebus against nats-streaming-server on the SQL store, side by side: publish (acked)
// and publish+subscribe through ../shared/bench/stan-compare.sh (stanbench, libnats),
// on PostgreSQL and on MariaDB (`--sql_driver mysql`), each server on a fresh database
// with the reference's tables, both servers measured interleaved in one run.
//
//   npm run build && node dist/bench/sql-compare.js
//
// It starts a private PostgreSQL (fsync on) and MariaDB (log flushed at each commit)
// as the tests do, so commits cost what they cost on a real server. Environment:
//   DRIVERS="postgres mysql"   which drivers to measure
//   OTHER_WIREBUS=path         compare this bin/wirebus (e.g. an older build) instead of
//                              the reference, to measure a change of schema
//   SQL_FLAGS="--sql_no_caching"  more flags for both servers
//   STAN_COMPARE=path          stan-compare.sh of a writable copy of ../shared/bench
//                              (it builds its tools and keeps results beside itself)
//   plus stan-compare.sh's (ROUNDS, ONLY, DURATION, SCALE; defaults 2, "pub pubsub", 8, 1)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { schemaStatements } from '../src/streaming/store/sql/schema.js';
import type { SqlDriver } from '../src/streaming/store/sql/index.js';
import { startMariaDb } from '../test/helpers/mariadb.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { loadInto } from '../test/streaming/sql-databases.js';

const root = resolve(import.meta.dirname, '..', '..');
// ../shared beside the main checkout, two levels up from a worktree under wt/.
const compare =
  process.env.STAN_COMPARE ??
  [resolve(root, '..', 'shared'), resolve(root, '..', '..', 'shared')]
    .map((d) => join(d, 'bench', 'stan-compare.sh'))
    .find((f) => existsSync(f)) ??
  'stan-compare.sh';
const refBin = process.env.STAN_REF_BIN ?? '/tmp/stan-ref/nats-streaming-server';
const other = process.env.OTHER_WIREBUS;
const flags = process.env.SQL_FLAGS ?? '';
const drivers = (process.env.DRIVERS ?? 'postgres mysql').split(/\s+/) as SqlDriver[];
const dir = mkdtempSync(join(tmpdir(), 'wirebus-sqlbench-'));

/** A shell snippet that makes a fresh database $DB and the --sql_source of each server. */
async function database(driver: SqlDriver): Promise<{ make: string; ours: string; ref: string }> {
  if (driver === 'postgres') {
    const pg = await startPostgres({ fsync: true });
    if (typeof pg === 'string') throw new Error(pg);
    const tmpl = await pg.createDatabase();
    await loadInto('postgres', tmpl, []);
    const port = /:(\d+)\//.exec(tmpl)![1]!;
    const name = tmpl.slice(tmpl.lastIndexOf('/') + 1);
    const url = `postgres://postgres@127.0.0.1:${port}/$DB`;
    return {
      make: `DB=b$$; psql -h 127.0.0.1 -p ${port} -U postgres -qc "CREATE DATABASE $DB TEMPLATE ${name}" postgres`,
      ours: url,
      ref: `${url}?sslmode=disable`,
    };
  }
  const m = await startMariaDb({ durable: true });
  if (typeof m === 'string') throw new Error(m);
  const port = /:(\d+)\)/.exec(m.source(''))![1]!;
  const schema = join(dir, 'mysql-schema.sql');
  writeFileSync(schema, schemaStatements('mysql').join(';\n') + ';\n');
  const cli = `mariadb --no-defaults -h127.0.0.1 -P${port} -uroot`;
  const src = `root@tcp(127.0.0.1:${port})/$DB`;
  return {
    make: `DB=b$$; ${cli} -e "CREATE DATABASE $DB" && ${cli} $DB < ${schema}`,
    ours: src,
    ref: src,
  };
}

for (const driver of drivers) {
  const db = await database(driver);
  const wirebus = (bin: string): string =>
    `${db.make} && exec node ${bin} -a 127.0.0.1 -p $PORT -m $MPORT -st SQL` +
    ` --sql_driver ${driver} --sql_source "${db.ours}" ${flags}`;
  const ref =
    other !== undefined
      ? wirebus(other)
      : `${db.make} && exec ${refBin} -a 127.0.0.1 -p $PORT -m $MPORT -st SQL` +
        ` --sql_driver ${driver} --sql_source "${db.ref}" ${flags}`;
  process.stderr.write(`\n## ${driver}\n`);
  spawnSync('bash', [compare, wirebus(join(root, 'bin', 'wirebus')), `wirebus-${driver}`, ref], {
    stdio: 'inherit',
    env: {
      ...process.env,
      REF_LABEL: other !== undefined ? `older-wirebus-${driver}` : `reference-${driver}`,
      ROUNDS: process.env.ROUNDS ?? '2',
      ONLY: process.env.ONLY ?? 'pub pubsub',
      DURATION: process.env.DURATION ?? '8',
    },
  });
}
process.exit(0);
