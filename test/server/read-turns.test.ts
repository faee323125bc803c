// A read of a plain connection marks the start of its turn without a setImmediate:
// a client that waits for each answer (a request, a KV get) sends one read per turn,
// and Server.turn()'s immediate used to cost each of them an Immediate, its async
// context and a run of the immediate queue.

import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { test } from 'node:test';
import { C0, RawClient } from '../helpers/raw.js';
import { withServer } from '../helpers/server.js';

test('a client waiting for each answer costs no setImmediate per read', async () => {
  await withServer({}, async (s) => {
    const c = await RawClient.open(s.port);
    await c.exchange(C0 + 'SUB q 1\r\nPING\r\n');
    let immediates = 0;
    const hook = createHook({
      init(_id, type) {
        if (type === 'Immediate') immediates++;
      },
    }).enable();
    const rounds = 200;
    try {
      for (let i = 0; i < rounds; i++) {
        const got = await c.exchange(`PUB q 2\r\nhi\r\nPING\r\n`);
        assert.equal(got, 'MSG q 1 2\r\nhi\r\nPONG\r\n');
      }
    } finally {
      hook.disable();
      c.close();
    }
    // Before: one per read (200). The client's own socket and timers may use a few.
    assert.ok(immediates < rounds / 10, `${immediates} immediates in ${rounds} round trips`);
  });
});
