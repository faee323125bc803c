// Writes fixtures/stan-ref-file/: a FILE store directory written by the reference
// nats-streaming-server 0.25.3 running writeScenario(), and expected.json, what the
// reference shows once restarted on a copy of it (observe()). Not a test: run by hand
// where the reference binary is (STAN_REF_BIN or /tmp/stan-ref/):
//
//   npx tsc -p tsconfig.json && node dist/test/streaming/file-ref-capture.js
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FIXTURE_DIR,
  observe,
  serveScenario,
  writeScenario,
  type Running,
} from './file-ref-scenario.js';

async function withReference(
  dir: string,
  work: string,
  body: (ref: Running) => Promise<void>,
): Promise<void> {
  const ref = await serveScenario('reference', dir, work);
  try {
    await body(ref);
  } finally {
    await ref.stop();
  }
}

const work = await mkdtemp(join(tmpdir(), 'stan-ref-capture-'));
const data = join(work, 'data');
await withReference(data, work, (ref) => writeScenario(ref.url, ref.http));
const copy = join(work, 'copy');
await cp(data, copy, { recursive: true });
let expected: unknown;
await withReference(copy, work, async (ref) => {
  expected = await observe(ref.url, ref.http);
});
await rm(FIXTURE_DIR, { recursive: true, force: true });
await cp(data, join(FIXTURE_DIR, 'data'), { recursive: true });
await rm(join(FIXTURE_DIR, 'data', '.rootdir.lck'), { force: true });
await writeFile(join(FIXTURE_DIR, 'expected.json'), JSON.stringify(expected, null, 1) + '\n');
await rm(work, { recursive: true, force: true });
process.stdout.write(`wrote ${FIXTURE_DIR}\n`);
