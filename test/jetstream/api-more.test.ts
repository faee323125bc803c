// More API requests get the reference's answers (fixtures/api-more.json, recorded from
// nats-server 2.9.10 -js by capture-reference-more.ts): the clustered-only requests on a
// single server, paging, MSG.GET/MSG.DELETE/PURGE corners, bad names, absurd numbers and
// wrong types, ACCOUNT.PURGE deleting the account's streams; and a few answers byte for
// byte, with Go's escapes of `<`, `>` and `&`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withServer } from '../helpers/server.js';
import { MORE_API_CASES } from './api-cases-more.js';
import { readFixture, runCases, type Answer } from './api-client.js';
import { runRawSteps } from './api-raw.js';

const expected = readFixture('api-more.json') as { answers: Answer[]; raw: string[] };

test("more $JS.API answers are the reference's, request by request", async () => {
  await withServer({ jetstream: true }, async (s) => {
    const answers = await runCases(s.port, MORE_API_CASES);
    assert.equal(answers.length, expected.answers.length);
    for (let i = 0; i < answers.length; i++) {
      assert.deepEqual(answers[i], expected.answers[i], `step ${i}: ${expected.answers[i]!.name}`);
    }
  });
});

test("API answers and the audit advisory are the reference's bytes, Go's escapes included", async () => {
  await withServer({ jetstream: true }, async (s) => {
    const raw = await runRawSteps(s.port);
    assert.deepEqual(raw, expected.raw);
  });
});
