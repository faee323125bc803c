// Records the reference's transcript of the consumer scenario (consumer-cases.ts) as
// test/jetstream/fixtures/consumers.json (or the file named as the first argument). Not a
// test: run it by hand after a build, with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference-consumers.js

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from './api-client.js';
import { CONSUMER_CASES } from './consumer-cases.js';
import { runConsumerSteps } from './consumer-transcript.js';
import { withReference } from './reference-server.js';

await withReference(async (port) => {
  const out = process.argv[2] ?? join(FIXTURES, 'consumers.json');
  const steps = await runConsumerSteps(port, CONSUMER_CASES);
  writeFileSync(out, JSON.stringify(steps, null, 2) + '\n');
  process.stdout.write(`recorded ${steps.length} steps to ${out}\n`);
});
