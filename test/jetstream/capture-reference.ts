// Records the reference's answers to the API cases as test/jetstream/fixtures/api.json,
// to the storage cases as fixtures/storage.json, to the snapshot and restore
// scenario as fixtures/snapshot.json and the DIRECT.GET transcript as
// fixtures/direct-get.json.
// Not a test: run it by hand after a build, with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference.js

import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_CASES } from './api-cases.js';
import { runDirectGet } from './direct-get-transcript.js';
import { FIXTURES as fixtures, runCases } from './api-client.js';
import { runSnapshotScenario } from './snapshot-scenario.js';
import { STORAGE_CASES } from './storage-cases.js';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const address = srv.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function main(): Promise<void> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-capture-'));
  const ref = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, 800));
  try {
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
  } finally {
    ref.kill();
  }
}

await main();
