// Every API request of the recorded sequence gets the reference's answer: the same JSON
// (types, fields, error codes and texts), the same status lines and headers, with times,
// ids and generated names normalised (test/jetstream/fixtures/api.json, recorded from
// nats-server 2.9.10 -js by capture-reference.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withServer } from '../helpers/server.js';
import { API_CASES } from './api-cases.js';
import { readFixture, runCases, type Answer } from './api-client.js';

test("the $JS.API answers are the reference's, request by request", async () => {
  const expected = readFixture('api.json') as Answer[];
  await withServer({ jetstream: true }, async (s) => {
    const answers = await runCases(s.port, API_CASES);
    assert.equal(answers.length, expected.length);
    for (let i = 0; i < answers.length; i++) {
      assert.deepEqual(answers[i], expected[i], `step ${i}: ${expected[i]!.name}`);
    }
  });
});
