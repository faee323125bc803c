// Accounts that appear, change or go with a reload get JetStream as their
// configuration says, as the reference's reloadAuthorization does: a new account with
// `jetstream: enabled` (or limits) has it at once, one turned off answers "JetStream
// not enabled for account" (its stream files stay), one turned back on finds its file
// streams again.

import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { connect, StorageType, type NatsConnection } from 'nats';
import { reloadSecurity, startServer, type RunningServer } from '../../src/index.js';
import type { SecurityOptions } from '../../src/auth/options.js';
import { cleanupDirs, tempDir } from '../streaming/file-fixtures.js';
import { freePort, startWirebus } from '../helpers/process.js';

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

test('bin/wirebus: an account added to the config file has JetStream after SIGHUP', async () => {
  const dir = await tempDir();
  const conf = join(dir, 'wirebus.conf');
  const port = await freePort();
  const account = (name: string): string =>
    `${name}: { users: [{user: ${name}, password: ${name}}], jetstream: enabled }`;
  writeFileSync(conf, `accounts: {\n  ${account('a')}\n}\n`);
  const w = await startWirebus(port, [
    '-c',
    conf,
    '-js',
    '-sd',
    join(dir, 'store'),
    '--ports_file_dir',
    dir,
  ]);
  try {
    writeFileSync(conf, `accounts: {\n  ${account('a')}\n  ${account('b')}\n}\n`);
    // The signals are trapped in the same turn as the ports file is written, after
    // "Server is ready": a SIGHUP before that would end the process.
    const portsFile = join(dir, `wirebus_${w.child.pid!}.ports`);
    const end = Date.now() + 15_000;
    while (!existsSync(portsFile)) {
      if (Date.now() > end) throw new Error(`no ports file:\n${w.log()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Once trapped, a SIGHUP more is harmless (the same file again): signal until the
    // reload is logged, however slow a loaded machine is.
    for (let i = 0; !w.log().includes('Reloaded server configuration'); i++) {
      if (Date.now() > end) throw new Error(`no reload:\n${w.log()}`);
      if (i % 25 === 0) w.child.kill('SIGHUP');
      await new Promise((r) => setTimeout(r, 20));
    }
    let b: NatsConnection | undefined;
    while (b === undefined) {
      b = await connect({ port, user: 'b', pass: 'b', reconnect: false }).catch(() => undefined);
      if (b === undefined) {
        if (Date.now() > end) throw new Error(`user b never admitted:\n${w.log()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    try {
      await untilEnabled(b);
      const jsm = await b.jetstreamManager();
      await jsm.streams.add({ name: 'B', subjects: ['b.>'], storage: StorageType.File });
      assert.equal((await b.jetstream().publish('b.1', 'x')).seq, 1);
    } finally {
      await b.close();
    }
  } finally {
    await w.stop();
  }
});
