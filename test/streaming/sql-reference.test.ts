// The reference's SQL data, unchanged, on both drivers:
// - a database written by nats-streaming-server 0.25.3 (the fixtures under
//   fixtures/sql/, captured by sql-fixtures-capture.ts) is served by wirebus: every
//   message by sequence, first/last after limits, the durable and the durable queue
//   group at their acked positions with their pending messages, the clients;
// - a database written by wirebus is served the same by the reference (needs the
//   reference binary: skipped without it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { SqlDriver } from '../../src/streaming/store/sql/index.js';
import { repoRoot } from './paths.js';
import {
  DRIVERS,
  fixtureName,
  loadInto,
  skipWithoutDriver,
  sqlDatabase,
  startSqlReference,
} from './sql-databases.js';
import { checkScenario, LIMITS, writeScenario } from './sql-scenario.js';
import { kill, withStan } from './stan.js';
import { skipWithoutReference } from './stan-reference.js';

function fixture(driver: SqlDriver, noCaching: boolean): string[] {
  const text = readFileSync(
    join(repoRoot, 'test', 'streaming', 'fixtures', 'sql', fixtureName(driver, noCaching)),
    'utf8',
  );
  // mariadb-dump ends each statement with ';', which loadInto adds.
  return text
    .split('\n')
    .filter((l) => l.startsWith('INSERT INTO'))
    .map((l) => l.replace(/;$/, ''));
}

const noRef = skipWithoutReference();

const MODES = [
  { noCaching: false, title: '' },
  { noCaching: true, title: ', --sql_no_caching' },
];

for (const driver of DRIVERS) {
  const skip = await skipWithoutDriver(driver);
  for (const { noCaching, title } of MODES) {
    const options = {
      storeType: 'SQL',
      sqlDriver: driver,
      sqlNoCaching: noCaching,
      limits: LIMITS,
    } as const;
    describe(`SQL data of the reference (${driver}${title})`, { skip }, () => {
      it('a database written by nats-streaming-server is served by wirebus', async () => {
        const db = await sqlDatabase(driver);
        await loadInto(driver, db.source, fixture(driver, noCaching));
        await withStan({ ...options, sqlSource: db.source }, (env) =>
          checkScenario(env.url, env.http),
        );
      });

      it(
        'a database written by wirebus is served by nats-streaming-server',
        { skip: noRef },
        async () => {
          const db = await sqlDatabase(driver);
          const written = await withStan({ ...options, sqlSource: db.source }, (env) =>
            writeScenario(env.url),
          );
          for (const sc of written.live) kill(sc);
          const { ref, url, http } = await startSqlReference(
            driver,
            db.source,
            noCaching ? ['--sql_no_caching'] : [],
          );
          try {
            await checkScenario(url, http);
          } finally {
            await ref.stop();
          }
        },
      );
    });
  }
}
