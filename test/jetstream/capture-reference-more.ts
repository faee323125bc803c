// Records the reference's answers to MORE_API_CASES as test/jetstream/fixtures/api-more.json,
// with the exact bytes of the RAW_STEPS answers beside them. Not a test: run it by hand
// after a build, with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference-more.js

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/process.js';
import { MORE_API_CASES } from './api-cases-more.js';
import { FIXTURES, runCases } from './api-client.js';
import { runRawSteps } from './api-raw.js';

async function main(): Promise<void> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-capture-'));
  const ref = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, 800));
  try {
    const answers = await runCases(port, MORE_API_CASES);
    const raw = await runRawSteps(port);
    const text = JSON.stringify({ answers, raw }, null, 2) + '\n';
    writeFileSync(join(FIXTURES, 'api-more.json'), text);
    process.stdout.write(`recorded ${answers.length} + ${raw.length} answers\n`);
  } finally {
    ref.kill();
  }
}

await main();
