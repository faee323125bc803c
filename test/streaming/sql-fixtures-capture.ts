// Records the reference's SQL databases as the fixtures of sql-reference.test.ts. Not
// a test: run it by hand after a build, with the reference built (see
// stan-reference.ts), PostgreSQL and MariaDB installed:
//
//   npx tsc -p tsconfig.json && node dist/test/streaming/sql-fixtures-capture.js [--no-caching]
//
// For each driver it makes an empty database with the reference's tables, runs the
// reference on it (`-st SQL --sql_driver ...`) through the story of sql-scenario.ts,
// stops it, and keeps the rows as INSERT statements (pg_dump / mariadb-dump) in
// test/streaming/fixtures/sql/<driver>.sql; with --no-caching the reference runs with
// `--sql_no_caching` (a statement per message, a SubsPending row per pending
// sequence) and the rows go to <driver>-no-caching.sql.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { SqlDriver } from '../../src/streaming/store/sql/index.js';
import { kill } from './stan.js';
import { writeScenario } from './sql-scenario.js';
import { fixtureName, loadInto, sqlDatabase, startSqlReference } from './sql-databases.js';

const out = resolve(import.meta.dirname, '..', '..', '..', 'test', 'streaming', 'fixtures', 'sql');

async function capture(driver: SqlDriver, noCaching: boolean): Promise<void> {
  const db = await sqlDatabase(driver);
  await loadInto(driver, db.source, []);
  const { ref, url } = await startSqlReference(
    driver,
    db.source,
    noCaching ? ['--sql_no_caching'] : [],
  );
  const written = await writeScenario(url);
  await ref.stop();
  for (const sc of written.live) kill(sc);
  const dump = db.dump();
  const rows = dump.split('\n').filter((l) => l.startsWith('INSERT INTO'));
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, fixtureName(driver, noCaching)),
    `-- Written by nats-streaming-server 0.25.3 (--sql_driver ${driver}` +
      `${noCaching ? ' --sql_no_caching' : ''}) through the story of\n` +
      `-- test/streaming/sql-scenario.ts; captured by sql-fixtures-capture.ts.\n` +
      rows.join('\n') +
      '\n',
  );
  process.stdout.write(`${driver}: ${rows.length} rows\n`);
}

const noCaching = process.argv.includes('--no-caching');
await capture('postgres', noCaching);
await capture('mysql', noCaching);
process.exit(0);
