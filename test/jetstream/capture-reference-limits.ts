// Records the reference's answers to LIMITS_CASES, asked as the user of an account with
// every JetStream limit, as test/jetstream/fixtures/account-limits.json. Not a test: run
// it by hand after a build, with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference-limits.js

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/process.js';
import { LIMITS_CASES, LIMITS_CONF, LIMITS_USER } from './account-limits-cases.js';
import { FIXTURES, runCases } from './api-client.js';

async function main(): Promise<void> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-capture-'));
  const conf = join(dir, 'limits.conf');
  writeFileSync(conf, LIMITS_CONF);
  const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, '-c', conf];
  const ref = spawn('nats-server', args, { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 800));
  try {
    const answers = await runCases(port, LIMITS_CASES, LIMITS_USER);
    const text = JSON.stringify(answers, null, 2) + '\n';
    writeFileSync(join(FIXTURES, 'account-limits.json'), text);
    process.stdout.write(`recorded ${answers.length} answers\n`);
  } finally {
    ref.kill();
  }
}

await main();
