// Queue members in /streaming/channelsz?subs=1 and clientsz?subs=1, field by field
// against the reference's answers along one scenario (fixtures/queue-monitor.json,
// recorded by capture-queue-monitor.ts from nats-streaming-server 0.25.3): a member
// that joins after the group was sent messages shows its own last_sent, a member
// that inherits unacked messages shows the highest it was sent, and so on through
// leave, close, unsubscribe, plain and durable groups. Only inboxes, ids and times
// are compared by type.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from './paths.js';
import { normalise, queueMonitorScenario } from './queue-monitor-scenario.js';
import { withStan } from './stan.js';

interface Step {
  step: string;
  channelsz: unknown;
  clientsz: unknown;
}

const recorded = JSON.parse(
  readFileSync(resolve(repoRoot, 'test', 'streaming', 'fixtures', 'queue-monitor.json'), 'utf8'),
) as Step[];

describe('queue members in streaming monitoring', () => {
  it("matches the reference's channelsz and clientsz at every step", async () => {
    await withStan({}, async (env) => {
      const snaps = await queueMonitorScenario(env.url, env.http, 'test-cluster');
      assert.deepEqual(
        snaps.map((s) => s.step),
        recorded.map((s) => s.step),
      );
      for (let i = 0; i < recorded.length; i++) {
        const want = recorded[i]!;
        const got = snaps[i]!;
        assert.deepEqual(normalise(got.channelsz), want.channelsz, `channelsz: ${want.step}`);
        assert.deepEqual(normalise(got.clientsz), want.clientsz, `clientsz: ${want.step}`);
      }
    });
  });
});
