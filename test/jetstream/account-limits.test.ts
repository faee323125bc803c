// An account's JetStream limits from a config file, under the reference's names for them
// (memory, disk, streams, consumers, max_bytes, mem_max_stream_bytes,
// disk_max_stream_bytes, max_ack_pending), and what they refuse: the same answers as
// nats-server 2.9.10 with the same file (fixtures/account-limits.json).

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort, startWirebus } from '../helpers/process.js';
import { LIMITS_CASES, LIMITS_CONF, LIMITS_USER } from './account-limits-cases.js';
import { readFixture, runCases, type Answer } from './api-client.js';

test("an account's JetStream limits from the config file answer as the reference", async () => {
  const expected = readFixture('account-limits.json') as Answer[];
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-limits-'));
  const conf = join(dir, 'limits.conf');
  writeFileSync(conf, LIMITS_CONF);
  const p = await startWirebus(await freePort(), ['-js', '-sd', dir, '-c', conf]);
  try {
    const answers = await runCases(p.port, LIMITS_CASES, LIMITS_USER);
    assert.equal(answers.length, expected.length);
    for (let i = 0; i < answers.length; i++)
      assert.deepEqual(answers[i], expected[i], `step ${i}: ${expected[i]!.name}`);
  } finally {
    await p.stop();
  }
});
