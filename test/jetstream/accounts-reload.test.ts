// Accounts that appear, change or go with a reload get JetStream as their
// configuration says, as the reference's reloadAuthorization does: a new account with
// `jetstream: enabled` (or limits) has it at once, one turned off answers "JetStream
// not enabled for account" (its stream files stay), one turned back on finds its file
// streams again.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { connect, StorageType, type NatsConnection } from 'nats';
import { reloadSecurity, startServer, type RunningServer } from '../../src/index.js';
import type { SecurityOptions } from '../../src/auth/options.js';
import { cleanupDirs, tempDir } from '../streaming/file-fixtures.js';

after(cleanupDirs);

const NOT_ENABLED = {
  type: 'io.nats.jetstream.api.v1.account_info_response',
  error: { code: 503, err_code: 10039, description: 'JetStream not enabled for account' },
};

/** The raw $JS.API.INFO answer in the account of `nc`. */
async function accountInfo(nc: NatsConnection): Promise<unknown> {
  return (await nc.request('$JS.API.INFO', '', { timeout: 2000 })).json();
}

function user(s: RunningServer, name: string): Promise<NatsConnection> {
  return connect({ servers: s.url, user: name, pass: name, reconnect: false });
}

/** Waits until the account of `nc` has JetStream (the reload's work runs after it returns). */
async function untilEnabled(nc: NatsConnection): Promise<void> {
  const end = Date.now() + 15_000;
  for (;;) {
    // No responders (503) until the account's JetStream has started.
    const info = (await accountInfo(nc).catch((err: unknown) => ({ error: err }))) as {
      error?: unknown;
    };
    if (info.error === undefined) return;
    if (Date.now() > end) throw new Error(`JetStream still off: ${JSON.stringify(info)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('accounts added or changed by a reload get JetStream as configured', async () => {
  const only: SecurityOptions = {
    accounts: { A: { users: [{ user: 'a', password: 'a' }], jetstream: true } },
  };
  const s = await startServer({
    host: '127.0.0.1',
    port: 0,
    jetstream: { storeDir: await tempDir() },
    security: only,
  });
  const conns: NatsConnection[] = [];
  try {
    const a = await user(s, 'a');
    conns.push(a);
    const jsmA = await a.jetstreamManager();
    await jsmA.streams.add({ name: 'A1', subjects: ['a.>'], storage: StorageType.File });
    await a.jetstream().publish('a.1', 'kept');

    // B appears with limits, C appears without JetStream, A loses it.
    reloadSecurity(s.server, {
      accounts: {
        A: { users: [{ user: 'a', password: 'a' }] },
        B: { users: [{ user: 'b', password: 'b' }], jetstream: { maxStreams: 1 } },
        C: { users: [{ user: 'c', password: 'c' }] },
      },
    });
    const b = await user(s, 'b');
    const c = await user(s, 'c');
    conns.push(b, c);
    await untilEnabled(b);
    const jsmB = await b.jetstreamManager();
    assert.equal((await jsmB.getAccountInfo()).limits.max_streams, 1);
    await jsmB.streams.add({ name: 'B1', subjects: ['b.>'], storage: StorageType.Memory });
    const ack = await b.jetstream().publish('b.x', 'hello');
    assert.deepEqual([ack.stream, ack.seq], ['B1', 1]);
    await assert.rejects(
      jsmB.streams.add({ name: 'B2', subjects: ['b2.>'], storage: StorageType.Memory }),
      /maximum number of streams reached/,
    );
    assert.deepEqual(await accountInfo(c), NOT_ENABLED);
    assert.deepEqual(await accountInfo(a), NOT_ENABLED);

    // A gets it back: its file stream is found again, with its message.
    reloadSecurity(s.server, only);
    await untilEnabled(a);
    const info = await jsmA.streams.info('A1');
    assert.equal(info.state.messages, 1);
    assert.equal((await jsmA.streams.getMessage('A1', { seq: 1 })).string(), 'kept');
  } finally {
    for (const nc of conns) await nc.close();
    await s.close();
  }
});
