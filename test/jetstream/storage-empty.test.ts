// What STREAM.INFO says of an empty file stream, before and after a restart, as
// nats-server 2.9.10 -js answered the same requests (recorded 2026-11-25, the
// expectations below are its replies): its file store reports first_ts
// "1970-01-01T00:00:00Z" (time.Unix(0, 0)) once removals emptied a stream and after any
// restart of an empty one, and the zero time after a purge; a stream never written
// comes back from a restart with first_seq 1. Memory streams always say the zero time.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { connect, type JetStreamManager, type NatsConnection, StorageType } from 'nats';
import { startServer } from '../../src/index.js';
import { cleanupDirs, tempDir } from '../streaming/file-fixtures.js';

after(cleanupDirs);

const ZERO = '0001-01-01T00:00:00Z';
const EPOCH = '1970-01-01T00:00:00Z';

async function firstOf(jsm: JetStreamManager, name: string): Promise<[number, string, number]> {
  const s = (await jsm.streams.info(name)).state;
  return [s.first_seq, s.first_ts, s.last_seq];
}

async function session(
  dir: string,
  body: (nc: NatsConnection, jsm: JetStreamManager) => Promise<void>,
): Promise<void> {
  const server = await startServer({ host: '127.0.0.1', port: 0, jetstream: { storeDir: dir } });
  const nc = await connect({ servers: server.url, reconnect: false });
  try {
    await body(nc, await nc.jetstreamManager());
  } finally {
    await nc.close();
    await server.close();
  }
}

test("an emptied file stream's first_ts and first_seq, before and after a restart, as the reference", async () => {
  const dir = await tempDir();
  await session(dir, async (nc, jsm) => {
    const js = nc.jetstream();
    const add = (name: string, extra: Record<string, unknown> = {}) =>
      jsm.streams.add({
        name,
        subjects: [name.toLowerCase()],
        storage: StorageType.File,
        ...extra,
      });
    await add('N');
    assert.deepEqual(await firstOf(jsm, 'N'), [0, ZERO, 0]);
    await add('D');
    await js.publish('d');
    await js.publish('d');
    await jsm.streams.deleteMessage('D', 1);
    assert.equal((await firstOf(jsm, 'D'))[0], 2);
    await jsm.streams.deleteMessage('D', 2);
    assert.deepEqual(await firstOf(jsm, 'D'), [3, EPOCH, 2]);
    await add('E');
    await js.publish('e');
    await jsm.streams.deleteMessage('E', 1, false);
    assert.deepEqual(await firstOf(jsm, 'E'), [2, EPOCH, 1]);
    await add('F', { max_msgs_per_subject: 1 });
    await js.publish('f');
    await jsm.streams.purge('F', { filter: 'f' });
    assert.deepEqual(await firstOf(jsm, 'F'), [2, EPOCH, 1]);
    await add('G');
    await js.publish('g');
    await js.publish('g');
    await jsm.streams.purge('G', { seq: 3 });
    assert.deepEqual(await firstOf(jsm, 'G'), [3, ZERO, 2]);
    await add('Q');
    await js.publish('q');
    await jsm.streams.deleteMessage('Q', 1);
    await jsm.streams.purge('Q');
    assert.deepEqual(await firstOf(jsm, 'Q'), [2, ZERO, 1]);
    await add('A', { max_age: 200_000_000 });
    await js.publish('a');
    for (let i = 0; i < 100 && (await firstOf(jsm, 'A'))[0] === 1; i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await firstOf(jsm, 'A'), [2, EPOCH, 1]);
    await jsm.streams.add({ name: 'M', subjects: ['m'], storage: StorageType.Memory });
    await js.publish('m');
    await jsm.streams.deleteMessage('M', 1);
    assert.deepEqual(await firstOf(jsm, 'M'), [2, ZERO, 1]);
  });
  await session(dir, async (_nc, jsm) => {
    assert.deepEqual(await firstOf(jsm, 'N'), [1, EPOCH, 0]);
    assert.deepEqual(await firstOf(jsm, 'D'), [3, EPOCH, 2]);
    assert.deepEqual(await firstOf(jsm, 'E'), [2, EPOCH, 1]);
    assert.deepEqual(await firstOf(jsm, 'F'), [2, EPOCH, 1]);
    assert.deepEqual(await firstOf(jsm, 'G'), [3, EPOCH, 2]);
    assert.deepEqual(await firstOf(jsm, 'Q'), [2, EPOCH, 1]);
    assert.deepEqual(await firstOf(jsm, 'A'), [2, EPOCH, 1]);
  });
});
