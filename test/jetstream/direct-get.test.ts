// DIRECT.GET answers byte for byte as the reference wrote them (fixtures/direct-get.json,
// recorded from nats-server 2.9.10 -js by capture-reference.ts), on memory and file
// streams: the header block a KV get's answer carries, the statuses, the silences.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { cleanupDirs, tempDir } from '../streaming/file-fixtures.js';
import { withServer } from '../helpers/server.js';
import { readFixture } from './api-client.js';
import { normaliseReply, runDirectGet, type DirectGetStep } from './direct-get-transcript.js';

after(cleanupDirs);

test("DIRECT.GET writes the reference's bytes", async () => {
  const recorded = readFixture('direct-get.json') as DirectGetStep[];
  const dir = await tempDir();
  const got = await withServer({ jetstream: { storeDir: dir } }, (s) => runDirectGet(s.port));
  assert.deepEqual(got, recorded);
});

test('the normalised transcript checks the sizes it hides', () => {
  const ok = 'HMSG r.1 2 18 21\r\nNATS/1.0\r\nA: b\r\n\r\nabc\r\n';
  assert.equal(normaliseReply(ok), 'HMSG r.1 2 <hdr> <total>\r\nNATS/1.0\r\nA: b\r\n\r\nabc\r\n');
  assert.throws(() => normaliseReply('HMSG r.1 2 17 21\r\nNATS/1.0\r\nA: b\r\n\r\nabc\r\n'));
});
