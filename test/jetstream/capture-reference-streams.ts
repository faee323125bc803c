// Records the reference's answers to the stream cases (stream-cases.ts) as
// test/jetstream/fixtures/streams.json.
// Not a test: run it by hand after a build, with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference-streams.js

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FIXTURES } from './api-client.js';
import { STREAM_CASES } from './stream-cases.js';
import { runStreamCases } from './stream-client.js';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const address = srv.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const port = await freePort();
const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-streams-'));
const ref = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
  stdio: 'ignore',
});
await sleep(800);
try {
  const answers = await runStreamCases(port, STREAM_CASES);
  writeFileSync(join(FIXTURES, 'streams.json'), JSON.stringify(answers, null, 2) + '\n');
  process.stdout.write(`recorded ${answers.length} answers\n`);
} finally {
  ref.kill();
}
