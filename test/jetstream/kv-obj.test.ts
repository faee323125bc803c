// The key-value and object stores through nats.js v3 (@nats-io/kv, @nats-io/obj) and
// nats v2's views, on memory and file streams: the scenarios of kv-obj-cases.ts.

import { after, describe, test } from 'node:test';
import { withServer } from '../helpers/server.js';
import { cleanupDirs, tempDir } from '../streaming/file-fixtures.js';
import { kvV2, kvV3, objV2, objV3, type Storage } from './kv-obj-cases.js';

after(cleanupDirs);

async function onServer(
  storage: Storage,
  scenario: (port: number, storage: Storage) => Promise<void>,
): Promise<void> {
  const jetstream = storage === 'file' ? { storeDir: await tempDir() } : true;
  await withServer({ jetstream }, (s) => scenario(s.port, storage));
}

for (const storage of ['memory', 'file'] as const) {
  describe(`key-value and object stores on ${storage} streams`, () => {
    test('@nats-io/kv: put, get, create, update, delete, purge, history, watch, keys, TTL', () =>
      onServer(storage, kvV3));
    test('nats v2 views.kv: the same calls', () => onServer(storage, kvV2));
    test('@nats-io/obj: a 3 MB object in chunks, info, list, link, delete', () =>
      onServer(storage, objV3));
    test('nats v2 views.os: a 2 MB object in 64 KiB chunks, info, list, link, delete', () =>
      onServer(storage, objV2));
  });
}
