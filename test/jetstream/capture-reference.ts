// Records the reference's answers to the API cases as test/jetstream/fixtures/api.json,
// to the storage cases as fixtures/storage.json, to the snapshot and restore
// scenario as fixtures/snapshot.json and the DIRECT.GET transcript as
// fixtures/direct-get.json.
// Not a test: run it by hand after a build, with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference.js

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_CASES } from './api-cases.js';
import { runDirectGet } from './direct-get-transcript.js';
import { FIXTURES as fixtures, runCases } from './api-client.js';
import { withReference } from './reference-server.js';
import { runSnapshotScenario } from './snapshot-scenario.js';
import { STORAGE_CASES } from './storage-cases.js';

await withReference(async (port) => {
  const answers = await runCases(port, API_CASES);
  mkdirSync(fixtures, { recursive: true });
  writeFileSync(join(fixtures, 'api.json'), JSON.stringify(answers, null, 2) + '\n');
  const storage = await runCases(port, STORAGE_CASES);
  writeFileSync(join(fixtures, 'storage.json'), JSON.stringify(storage, null, 2) + '\n');
  const snapshot = await runSnapshotScenario(port);
  writeFileSync(join(fixtures, 'snapshot.json'), JSON.stringify(snapshot, null, 2) + '\n');
  const direct = await runDirectGet(port);
  writeFileSync(join(fixtures, 'direct-get.json'), JSON.stringify(direct, null, 2) + '\n');
  process.stdout.write(
    `recorded ${answers.length} + ${storage.length} + ${snapshot.length} answers\n`,
  );
});
