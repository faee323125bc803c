// Every $JS.API request type nats-server 2.9.10 serves has a recorded reference answer
// that wirebus gives again: the coverage cases (fixtures/api-coverage.json) here, and a
// check that the recorded sequences together (api.json, api-more.json, storage.json,
// api-coverage.json, the snapshot and DIRECT.GET transcripts) send each type at least
// once. And ACCOUNT.PURGE of an account with file streams: its directory goes too.

import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { connect, StorageType } from 'nats';
import { withServer } from '../helpers/server.js';
import { API_CASES } from './api-cases.js';
import { MORE_API_CASES } from './api-cases-more.js';
import { COVERAGE_CASES, REFERENCE_API_SUBJECTS } from './api-coverage-cases.js';
import { readFixture, runCases, type Answer } from './api-client.js';
import { STORAGE_CASES } from './storage-cases.js';
import { cleanupDirs, tempDir } from '../streaming/file-fixtures.js';

after(cleanupDirs);

/** A reference subject pattern as a regular expression: `*` one token, `>` the rest. */
function pattern(subject: string): RegExp {
  const tokens = subject.split('.').map((t) => (t === '*' ? '[^.]+' : t === '>' ? '.+' : t));
  return new RegExp('^' + tokens.join('\\.').replace(/\$/g, '\\$') + '$');
}

/** Types answered by scenarios recorded elsewhere, not by a list of cases. */
const RECORDED_ELSEWHERE: Record<string, () => boolean> = {
  // fixtures/snapshot.json: the snapshot and restore scenario's responses.
  '$JS.API.STREAM.SNAPSHOT.*': () =>
    JSON.stringify(readFixture('snapshot.json')).includes('stream_snapshot_response'),
  '$JS.API.STREAM.RESTORE.*': () =>
    JSON.stringify(readFixture('snapshot.json')).includes('stream_restore_response'),
  // fixtures/direct-get.json: the DIRECT.GET transcript, both forms.
  '$JS.API.DIRECT.GET.*': () =>
    JSON.stringify(readFixture('direct-get.json')).includes('by sequence'),
  '$JS.API.DIRECT.GET.*.>': () =>
    JSON.stringify(readFixture('direct-get.json')).includes('subject form'),
};

test('every request type of the reference is in a recorded sequence', () => {
  const sent = [...API_CASES, ...MORE_API_CASES, ...STORAGE_CASES, ...COVERAGE_CASES].map(
    (c) => c.subject,
  );
  const missing = REFERENCE_API_SUBJECTS.filter((s) => {
    const elsewhere = RECORDED_ELSEWHERE[s];
    if (elsewhere !== undefined) return !elsewhere();
    const re = pattern(s);
    // The create forms overlap: CREATE.* must be met by a subject of exactly 5 tokens.
    return !sent.some((subject) => re.test(subject));
  });
  assert.deepEqual(missing, []);
});

test("the rest of the API's request types get the reference's answers", async () => {
  const expected = readFixture('api-coverage.json') as Answer[];
  await withServer({ jetstream: true }, async (s) => {
    const answers = await runCases(s.port, COVERAGE_CASES);
    assert.equal(answers.length, expected.length);
    for (let i = 0; i < answers.length; i++) {
      assert.deepEqual(answers[i], expected[i], `step ${i}: ${expected[i]!.name}`);
    }
  });
});

test("ACCOUNT.PURGE deletes the account's file streams and its directory, as the reference", async () => {
  const dir = await tempDir();
  await withServer({ jetstream: { storeDir: dir } }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'F1', subjects: ['f1'], storage: StorageType.File });
      await jsm.streams.add({ name: 'F2', subjects: ['f2'], storage: StorageType.File });
      await nc.jetstream().publish('f1', new Uint8Array(10));
      const accountDir = join(dir, 'jetstream', '$G');
      assert.deepEqual(readdirSync(join(accountDir, 'streams')).sort(), ['F1', 'F2']);
      const reply = await nc.request('$JS.API.ACCOUNT.PURGE.$G');
      assert.deepEqual(reply.json(), {
        type: 'io.nats.jetstream.api.v1.account_purge_response',
        initiated: true,
      });
      assert.equal(existsSync(accountDir), false);
      assert.deepEqual(await jsm.streams.names().next(), []);
      // The account goes on: a new file stream is created in a new directory.
      await jsm.streams.add({ name: 'F3', subjects: ['f3'], storage: StorageType.File });
      assert.equal((await nc.jetstream().publish('f3', new Uint8Array(1))).seq, 1);
      assert.deepEqual(readdirSync(join(accountDir, 'streams')), ['F3']);
    } finally {
      await nc.close();
    }
  });
});
