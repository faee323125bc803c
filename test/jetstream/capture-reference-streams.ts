// Records the reference's answers to the stream cases (stream-cases.ts) as
// test/jetstream/fixtures/streams.json.
// Not a test: run it by hand after a build, with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference-streams.js

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../helpers/process.js';
import { FIXTURES } from './api-client.js';
import { DOMAIN, DOMAIN_CASES, STREAM_CASES, type StreamCase } from './stream-cases.js';
import { runStreamCases } from './stream-client.js';

/** nats-server -js on a free port with a fresh store (and the domain, if one is given). */
async function reference(domain: string): Promise<{ port: number; ref: ChildProcess }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-streams-'));
  const conf = join(dir, 'server.conf');
  writeFileSync(
    conf,
    `listen: "127.0.0.1:${port}"\njetstream { store_dir: "${dir}"${domain === '' ? '' : `, domain: ${domain}`} }\n`,
  );
  const ref = spawn('nats-server', ['-c', conf], { stdio: 'ignore' });
  await sleep(800);
  return { port, ref };
}

async function record(file: string, cases: readonly StreamCase[], domain: string): Promise<void> {
  const { port, ref } = await reference(domain);
  try {
    const answers = await runStreamCases(port, cases);
    writeFileSync(join(FIXTURES, file), JSON.stringify(answers, null, 2) + '\n');
    process.stdout.write(`recorded ${answers.length} answers in ${file}\n`);
  } finally {
    ref.kill();
  }
}

await record('streams.json', STREAM_CASES, '');
await record('streams-domain.json', DOMAIN_CASES, DOMAIN);
