// /jsz's query as nats-server 2.9.10 reads it, with the same two accounts, stream and
// consumer (recorded from it): `acc` naming a JetStream account picks it alone, else
// `accounts` (implied by `streams` and `consumers`) picks all, sorted by name from
// `offset` on, `limit` of them; empty details are left out (Go's omitempty); `config`
// adds the configs; bad values are a 400 with strconv's text, decoded in the reference's
// order; strings carry Go's escapes of `<`, `>` and `&`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from 'nats';
import { withServer } from '../helpers/server.js';

interface Detail {
  name: string;
  stream_detail?: {
    name: string;
    config?: unknown;
    consumer_detail?: { name: string; config?: unknown }[];
  }[];
}

/** Which accounts, streams and consumers a /jsz answer details, and whether with configs. */
function picked(body: { account_details?: Detail[] }): unknown {
  return (
    body.account_details?.map((a) => [
      a.name,
      a.stream_detail?.map((s) => [
        s.name,
        s.config !== undefined,
        s.consumer_detail?.map((c) => [c.name, c.config !== undefined]) ?? null,
      ]) ?? null,
    ]) ?? null
  );
}

/** Query → what the reference detailed with the same accounts and streams. */
const EXPECTED: [string, unknown][] = [
  ['?accounts=true&offset=1', [['B', null]]],
  ['?accounts=1&offset=2', null],
  ['?acc=B&consumers=true', [['B', null]]],
  ['?acc=A&consumers=true', [['A', [['S1', false, [['d1', false]]]]]]],
  ['?acc=A&consumers=true&config=true', [['A', [['S1', true, [['d1', true]]]]]]],
  ['?acc=A&streams=true', [['A', [['S1', false, null]]]]],
  ['?acc=ZZ', null],
  ['?acc=ZZ&accounts=true&offset=1', [['B', null]]],
  ['?streams=t&offset=1', [['B', null]]],
  ['?leader-only=true', null],
];

const BAD: [string, string][] = [
  ['?offset=x', `Error decoding int for 'offset': strconv.Atoi: parsing "x": invalid syntax`],
  [
    '?limit=99999999999999999999',
    `Error decoding int for 'limit': strconv.Atoi: parsing "99999999999999999999": value out of range`,
  ],
  [
    '?config=maybe&accounts=yes',
    `Error decoding boolean for 'accounts': strconv.ParseBool: parsing "yes": invalid syntax`,
  ],
];

test("/jsz's query picks accounts, streams and consumers as the reference's", async () => {
  const accounts = {
    A: { users: [{ user: 'a', password: 'a' }], jetstream: true },
    B: { users: [{ user: 'b', password: 'b' }], jetstream: true },
  };
  await withServer({ jetstream: true, httpPort: -1, security: { accounts } }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}`, user: 'a', pass: 'a' });
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({
      name: 'S1',
      subjects: ['a.>'],
      storage: 'memory' as never,
      description: 'x<y',
    });
    await nc.jetstream().publish('a.b');
    await jsm.consumers.add('S1', { durable_name: 'd1' });
    await nc.close();
    const base = `http://127.0.0.1:${s.httpPort}/jsz`;
    for (const [q, want] of EXPECTED) {
      const r = await fetch(base + q);
      assert.equal(r.status, 200, q);
      assert.deepEqual(picked((await r.json()) as { account_details?: Detail[] }), want, q);
    }
    const text = await (await fetch(`${base}?acc=A&config=true&streams=true`)).text();
    assert.ok(text.includes('"description": "x\\u003cy"'), text);
    assert.ok(text.includes('"a.\\u003e"'), text);
    for (const [q, message] of BAD) {
      const r = await fetch(base + q);
      assert.equal(r.status, 400, q);
      assert.ok((await r.text()).includes(JSON.stringify(message).slice(1, -1)), q);
    }
  });
});
