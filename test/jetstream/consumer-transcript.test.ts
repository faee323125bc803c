// The consumer scenario (consumer-cases.ts) gives the reference's transcript, step by
// step: create refusals and updates, pull status lines with their headers, pushed and
// pulled messages with their ack subjects and headers, AckSync replies, advisories and
// metrics, and CONSUMER.INFO's counters after each kind of event
// (fixtures/consumers.json, recorded from nats-server 2.9.10 -js by
// capture-reference-consumers.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withServer } from '../helpers/server.js';
import { readFixture } from './api-client.js';
import { CONSUMER_CASES } from './consumer-cases.js';
import { runConsumerSteps, type StepRecord } from './consumer-transcript.js';

test('consumers answer, deliver and count as the reference, step by step', async () => {
  const expected = readFixture('consumers.json') as StepRecord[];
  await withServer({ jetstream: true }, async (s) => {
    const got = await runConsumerSteps(s.port, CONSUMER_CASES);
    assert.equal(got.length, expected.length);
    for (let i = 0; i < got.length; i++)
      assert.deepEqual(got[i], expected[i], `step ${i}: ${expected[i]!.name}`);
  });
});
