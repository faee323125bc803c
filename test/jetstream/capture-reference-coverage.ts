// Records the reference's answers to the coverage cases as
// test/jetstream/fixtures/api-coverage.json. Not a test: run it by hand after a build,
// with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/jetstream/capture-reference-coverage.js

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JetStreamCluster } from '../helpers/jetstream-cluster.js';
import { COVERAGE_CASES } from './api-coverage-cases.js';
import { FIXTURES, runCases } from './api-client.js';

// One node: a standalone nats-server -js.
const reference = await JetStreamCluster.start(1);
try {
  const answers = await runCases(reference.nodes[0]!.port, COVERAGE_CASES);
  writeFileSync(join(FIXTURES, 'api-coverage.json'), JSON.stringify(answers, null, 2) + '\n');
  process.stdout.write(`recorded ${answers.length} answers\n`);
} finally {
  await reference.stop();
}
