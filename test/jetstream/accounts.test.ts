// JetStream per account: with accounts configured, only those whose configuration
// enables it have it (with their limits), and the others answer "JetStream not enabled
// for account" in each request's response type. The answers were recorded from
// nats-server 2.9.10 with the same accounts (fixtures/accounts.json).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from 'nats';
import { withServer } from '../helpers/server.js';
import { readFixture } from './api-client.js';

interface Recorded {
  user: string;
  subject: string;
  answer: unknown;
}

const BODIES: Record<string, string> = {
  '$JS.API.STREAM.CREATE.S1': '{"name":"S1","storage":"memory"}',
  '$JS.API.STREAM.CREATE.S2': '{"name":"S2","storage":"memory"}',
};

function normalise(v: unknown, key = ''): unknown {
  if (typeof v === 'string')
    return ['created', 'first_ts', 'last_ts'].includes(key) && !v.startsWith('0001') ? '<time>' : v;
  if (Array.isArray(v)) return v.map((x) => normalise(x));
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalise(x, k)]));
  return v;
}

test('accounts with and without JetStream answer as the reference', async () => {
  const recorded = readFixture('accounts.json') as Recorded[];
  await withServer(
    {
      jetstream: true,
      security: {
        accounts: {
          A: {
            users: [{ user: 'a', password: 'a' }],
            jetstream: { maxMemory: 1000000, maxStore: 2000000, maxStreams: 1, maxConsumers: 2 },
          },
          B: { users: [{ user: 'b', password: 'b' }] },
        },
      },
    },
    async (s) => {
      for (const user of ['a', 'b']) {
        const nc = await connect({ servers: `127.0.0.1:${s.port}`, user, pass: user });
        for (const r of recorded.filter((x) => x.user === user)) {
          const m = await nc.request(r.subject, new TextEncoder().encode(BODIES[r.subject] ?? ''));
          const answer = normalise(JSON.parse(new TextDecoder().decode(m.data)));
          assert.deepEqual(answer, r.answer, `${user} ${r.subject}`);
        }
        await nc.close();
      }
    },
  );
});
