// Records the reference's /streaming/channelsz?subs=1 and clientsz?subs=1 along the
// queue-member scenario (queue-monitor-scenario.ts) as fixtures/queue-monitor.json.
// Not a test: run it by hand after a build, with the reference streaming server
// built at /tmp/stan-ref/nats-streaming-server (or $STAN_REF_BIN):
//
//   npx tsc -p tsconfig.json && node dist/test/streaming/capture-queue-monitor.js
//   npx prettier --write test/streaming/fixtures/queue-monitor.json

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort } from '../helpers/process.js';
import { repoRoot } from './paths.js';
import { normalise, queueMonitorScenario } from './queue-monitor-scenario.js';
import { sleep } from './stan.js';

const bin = process.env.STAN_REF_BIN ?? '/tmp/stan-ref/nats-streaming-server';

async function main(): Promise<void> {
  const port = await freePort();
  const http = await freePort();
  const ref = spawn(
    bin,
    ['-a', '127.0.0.1', '-p', String(port), '-m', String(http), '-st', 'MEMORY'],
    {
      stdio: 'ignore',
    },
  );
  const base = `http://127.0.0.1:${http}`;
  try {
    for (let i = 0; i < 100; i++) {
      try {
        if ((await fetch(base + '/streaming/serverz')).status === 200) break;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    const snaps = await queueMonitorScenario(`nats://127.0.0.1:${port}`, base, 'test-cluster');
    const out = snaps.map((s) => ({
      step: s.step,
      channelsz: normalise(s.channelsz),
      clientsz: normalise(s.clientsz),
    }));
    const file = resolve(repoRoot, 'test', 'streaming', 'fixtures', 'queue-monitor.json');
    writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
    console.log(`wrote ${file} (${out.length} steps)`);
  } finally {
    ref.kill();
  }
}

await main();
