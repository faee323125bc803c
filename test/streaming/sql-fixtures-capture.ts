// Records the reference's SQL databases as the fixtures of sql-reference.test.ts. Not
// a test: run it by hand after a build, with the reference built (see
// stan-reference.ts), PostgreSQL and MariaDB installed:
//
//   npx tsc -p tsconfig.json && node dist/test/streaming/sql-fixtures-capture.js
//
// For each driver it makes an empty database with the reference's tables, runs the
// reference on it (`-st SQL --sql_driver ...`) through the story of sql-scenario.ts,
// stops it, and keeps the rows as INSERT statements (pg_dump / mariadb-dump) in
// test/streaming/fixtures/sql/<driver>.sql.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SqlDriver } from '../../src/streaming/store/sql/index.js';
import { freePort } from '../helpers/process.js';
import { kill } from './stan.js';
import { STAN_CONFIG, writeScenario } from './sql-scenario.js';
import { loadInto, referenceSource, sqlDatabase } from './sql-databases.js';
import { startReference } from './stan-reference.js';

const out = resolve(import.meta.dirname, '..', '..', '..', 'test', 'streaming', 'fixtures', 'sql');

async function capture(driver: SqlDriver): Promise<void> {
  const db = await sqlDatabase(driver);
  await loadInto(driver, db.source, []);
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-capture-'));
  writeFileSync(join(dir, 'stan.conf'), STAN_CONFIG);
  const port = await freePort();
  const ref = await startReference(
    [
      '-p',
      String(port),
      '-m',
      String(await freePort()),
      '-st',
      'SQL',
      '--sql_driver',
      driver,
      '--sql_source',
      referenceSource(driver, db.source),
      '-sc',
      join(dir, 'stan.conf'),
    ],
    'Streaming Server is ready',
  );
  const written = await writeScenario(`nats://127.0.0.1:${port}`);
  await ref.stop();
  for (const sc of written.live) kill(sc);
  const dump = db.dump();
  const rows = dump.split('\n').filter((l) => l.startsWith('INSERT INTO'));
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, `${driver}.sql`),
    `-- Written by nats-streaming-server 0.25.3 (--sql_driver ${driver}) through the story of\n` +
      `-- test/streaming/sql-scenario.ts; captured by sql-fixtures-capture.ts.\n` +
      rows.join('\n') +
      '\n',
  );
  process.stdout.write(`${driver}: ${rows.length} rows\n`);
}

await capture('postgres');
await capture('mysql');
process.exit(0);
