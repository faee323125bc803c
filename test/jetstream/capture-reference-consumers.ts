// Records the reference's transcript of the consumer scenario (consumer-cases.ts) as
// test/jetstream/fixtures/consumers.json. Not a test: run it by hand after a build, with
// nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference-consumers.js

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES } from './api-client.js';
import { CONSUMER_CASES } from './consumer-cases.js';
import { runConsumerSteps } from './consumer-transcript.js';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const address = srv.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const port = await freePort();
const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-capture-'));
const ref = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
  stdio: 'ignore',
});
await new Promise((r) => setTimeout(r, 800));
try {
  const out = process.argv[2] ?? join(FIXTURES, 'consumers.json');
  const steps = await runConsumerSteps(port, CONSUMER_CASES);
  writeFileSync(out, JSON.stringify(steps, null, 2) + '\n');
  process.stdout.write(`recorded ${steps.length} steps to ${out}\n`);
} finally {
  ref.kill();
}
