// Records the reference's answers to the coverage cases as
// test/jetstream/fixtures/api-coverage.json. Not a test: run it by hand after a build,
// with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference-coverage.js

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/process.js';
import { COVERAGE_CASES } from './api-coverage-cases.js';
import { FIXTURES, runCases } from './api-client.js';

const port = await freePort();
const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-capture-'));
const ref = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
  stdio: 'ignore',
});
await new Promise((r) => setTimeout(r, 800));
try {
  const answers = await runCases(port, COVERAGE_CASES);
  writeFileSync(join(FIXTURES, 'api-coverage.json'), JSON.stringify(answers, null, 2) + '\n');
  process.stdout.write(`recorded ${answers.length} answers\n`);
} finally {
  ref.kill();
  rmSync(dir, { recursive: true, force: true });
}
