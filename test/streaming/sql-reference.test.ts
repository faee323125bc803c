// The reference's SQL data, unchanged, on both drivers:
// - a database written by nats-streaming-server 0.25.3 (the fixtures under
//   fixtures/sql/, captured by sql-fixtures-capture.ts) is served by wirebus: every
//   message by sequence, first/last after limits, the durable and the durable queue
//   group at their acked positions with their pending messages, the clients;
// - a database written by wirebus is served the same by the reference (needs the
//   reference binary: skipped without it).
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { SqlDriver } from '../../src/streaming/store/sql/index.js';
import { freePort } from '../helpers/process.js';
import { repoRoot } from './paths.js';
import {
  DRIVERS,
  loadInto,
  referenceSource,
  skipWithoutDriver,
  sqlDatabase,
} from './sql-databases.js';
import { checkScenario, LIMITS, STAN_CONFIG, writeScenario } from './sql-scenario.js';
import { kill, withStan } from './stan.js';
import { skipWithoutReference, startReference } from './stan-reference.js';

function fixture(driver: SqlDriver): string[] {
  const text = readFileSync(
    join(repoRoot, 'test', 'streaming', 'fixtures', 'sql', `${driver}.sql`),
    'utf8',
  );
  // mariadb-dump ends each statement with ';', which loadInto adds.
  return text
    .split('\n')
    .filter((l) => l.startsWith('INSERT INTO'))
    .map((l) => l.replace(/;$/, ''));
}

const noRef = skipWithoutReference();

for (const driver of DRIVERS) {
  const skip = await skipWithoutDriver(driver);
  describe(`SQL data of the reference (${driver})`, { skip }, () => {
    it('a database written by nats-streaming-server is served by wirebus', async () => {
      const db = await sqlDatabase(driver);
      await loadInto(driver, db.source, fixture(driver));
      await withStan(
        { storeType: 'SQL', sqlDriver: driver, sqlSource: db.source, limits: LIMITS },
        (env) => checkScenario(env.url, env.http),
      );
    });

    it(
      'a database written by wirebus is served by nats-streaming-server',
      { skip: noRef },
      async () => {
        const db = await sqlDatabase(driver);
        const written = await withStan(
          { storeType: 'SQL', sqlDriver: driver, sqlSource: db.source, limits: LIMITS },
          (env) => writeScenario(env.url),
        );
        for (const sc of written.live) kill(sc);
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
            referenceSource(driver, db.source),
            '-sc',
            join(dir, 'stan.conf'),
          ],
          'Streaming Server is ready',
        );
        try {
          await checkScenario(`nats://127.0.0.1:${port}`, `http://127.0.0.1:${http}`);
        } finally {
          await ref.stop();
        }
      },
    );
  });
}
