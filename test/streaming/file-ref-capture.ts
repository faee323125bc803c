// Writes fixtures/stan-ref-file/: a FILE store directory written by the reference
// nats-streaming-server 0.25.3 running writeScenario(), and expected.json, what the
// reference shows once restarted on a copy of it (observe()). Not a test: run by hand
// where the reference binary is (STAN_REF_BIN or /tmp/stan-ref/):
//
//   npx tsc -p tsconfig.json && node dist/test/streaming/file-ref-capture.js
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/process.js';
import { FIXTURE_DIR, observe, scenarioConfig, writeScenario } from './file-ref-scenario.js';
import { startReference } from './stan-ref.js';

async function runReference(
  dir: string,
  work: string,
  body: (url: string, http: string) => Promise<void>,
): Promise<void> {
  const conf = join(work, `stan-${Date.now()}.conf`);
  await writeFile(conf, scenarioConfig(dir));
  const port = await freePort();
  const mport = await freePort();
  const ref = await startReference(port, ['-m', String(mport), '-sc', conf]);
  try {
    await body(ref.url, `http://127.0.0.1:${mport}`);
  } finally {
    await ref.stop();
  }
}

const work = await mkdtemp(join(tmpdir(), 'stan-ref-capture-'));
const data = join(work, 'data');
await runReference(data, work, writeScenario);
const copy = join(work, 'copy');
await cp(data, copy, { recursive: true });
let expected: unknown;
await runReference(copy, work, async (url, http) => {
  expected = await observe(url, http);
});
await rm(FIXTURE_DIR, { recursive: true, force: true });
await cp(data, join(FIXTURE_DIR, 'data'), { recursive: true });
await rm(join(FIXTURE_DIR, 'data', '.rootdir.lck'), { force: true });
await writeFile(join(FIXTURE_DIR, 'expected.json'), JSON.stringify(expected, null, 1) + '\n');
await rm(work, { recursive: true, force: true });
process.stdout.write(`wrote ${FIXTURE_DIR}\n`);
