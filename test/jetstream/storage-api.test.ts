// A memory stream and a file stream answer the storage cases (storage-cases.ts) as the
// reference did (fixtures/storage.json, recorded from nats-server 2.9.10 -js by
// capture-reference.ts). Where the reference's two stores disagree, both of wirebus's
// answer as the right one did; its byte count is the only figure that differs by store.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { cleanupDirs, tempDir } from '../streaming/file-fixtures.js';
import { withServer } from '../helpers/server.js';
import { readFixture, runCases, type Answer } from './api-client.js';
import { STORAGE_CASES, names, type StoreKind } from './storage-cases.js';

after(cleanupDirs);

/** One store's recorded answer, as the other store's stream would have given it. */
function asStore(a: Answer, from: StoreKind, to: StoreKind): Answer {
  const f = names(from);
  const t = names(to);
  const text = JSON.stringify(a)
    .replaceAll(`"${f.stream}"`, `"${t.stream}"`)
    .replaceAll(`"${f.prefix}`, `"${t.prefix}`)
    .replaceAll(`"storage":"${from}"`, `"storage":"${to}"`)
    .replaceAll(`${from}: `, `${to}: `);
  return JSON.parse(text) as Answer;
}

/** Drops state.bytes: each store counts a message's bytes its own way. */
function withoutBytes(a: Answer): Answer {
  const copy = structuredClone(a);
  const body = copy.body as { state?: { bytes?: number } } | null;
  if (body !== null && typeof body === 'object' && body.state !== undefined)
    delete body.state.bytes;
  return copy;
}

test("memory and file streams give the reference's storage answers", async () => {
  const recorded = readFixture('storage.json') as Answer[];
  assert.equal(recorded.length, STORAGE_CASES.length);
  const half = STORAGE_CASES.length / 2;
  const dir = await tempDir();
  await withServer({ jetstream: { storeDir: dir } }, async (s) => {
    const answers = await runCases(s.port, STORAGE_CASES);
    for (let i = 0; i < answers.length; i++) {
      const c = STORAGE_CASES[i]!;
      const kind: StoreKind = i < half ? 'memory' : 'file';
      const other: StoreKind = kind === 'memory' ? 'file' : 'memory';
      if (c.sameAs === undefined || c.sameAs === kind) {
        assert.deepEqual(answers[i], recorded[i], `step ${i}: ${c.name}`);
        continue;
      }
      // The reference's other store was right here: its answer, renamed.
      const twin = recorded[kind === 'memory' ? i + half : i - half]!;
      assert.deepEqual(
        withoutBytes(answers[i]!),
        withoutBytes(asStore(twin, other, kind)),
        `step ${i}: ${c.name} (as the reference's ${other} store)`,
      );
    }
  });
});
