// The stream rules give the reference's answers, request by request and byte for byte in
// their JSON's field order (test/jetstream/fixtures/streams.json and streams-domain.json,
// recorded from nats-server 2.9.10 -js by capture-reference-streams.ts), on a server with
// a store directory so that file streams are files.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { withServer } from '../helpers/server.js';
import { readFixture } from './api-client.js';
import { DOMAIN, DOMAIN_CASES, STREAM_CASES, type StreamCase } from './stream-cases.js';
import { runStreamCases, type StreamAnswer } from './stream-client.js';

async function replay(
  fixture: string,
  cases: readonly StreamCase[],
  domain: string,
): Promise<void> {
  const expected = readFixture(fixture) as StreamAnswer[];
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-streams-'));
  try {
    await withServer({ jetstream: { storeDir: dir, domain } }, async (s) => {
      const answers = await runStreamCases(s.port, cases);
      assert.equal(answers.length, expected.length);
      for (let i = 0; i < answers.length; i++) {
        if (cases[i]!.refusedHere === true) {
          // The reference made a mirror or a source here; wirebus refuses them for now.
          const type = (expected[i]!.body as { type: string }).type;
          assert.deepEqual(answers[i]!.body, {
            type,
            error: { code: 500, err_code: 10052, description: 'stream configuration invalid' },
          });
          continue;
        }
        // Compared as text so that the order of every object's fields counts too.
        assert.equal(
          JSON.stringify(answers[i], null, 1),
          JSON.stringify(expected[i], null, 1),
          `step ${i}: ${expected[i]!.name}`,
        );
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the stream rules answer as the reference's, in its field order", async () => {
  await replay('streams.json', STREAM_CASES, '');
});

test('in a JetStream domain, PubAcks and stream answers as the reference writes them', async () => {
  await replay('streams-domain.json', DOMAIN_CASES, DOMAIN);
});
