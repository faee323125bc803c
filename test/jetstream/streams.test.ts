// The stream rules give the reference's answers, request by request and byte for byte in
// their JSON's field order (test/jetstream/fixtures/streams.json, recorded from
// nats-server 2.9.10 -js by capture-reference-streams.ts), on a server with a store
// directory so that file streams are files.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { withServer } from '../helpers/server.js';
import { readFixture } from './api-client.js';
import { STREAM_CASES } from './stream-cases.js';
import { runStreamCases, type StreamAnswer } from './stream-client.js';

test("the stream rules answer as the reference's, in its field order", async () => {
  const expected = readFixture('streams.json') as StreamAnswer[];
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-streams-'));
  try {
    await withServer({ jetstream: { storeDir: dir } }, async (s) => {
      const answers = await runStreamCases(s.port, STREAM_CASES);
      assert.equal(answers.length, expected.length);
      for (let i = 0; i < answers.length; i++) {
        if (STREAM_CASES[i]!.refusedHere === true) {
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
});
