// Channel names on the FILE store, where a channel is a directory named after it.
// The answers are the reference's (nats-streaming-server 0.25.3, -st FILE, recorded
// with the same requests): a name with `/` is refused before the store is asked
// (util.IsChannelNameValid), so nothing outside the root is ever created; other
// characters go into the directory name as they are (`\`, `+`); what the file system
// refuses comes back as Go's `mkdir <path>: <errno text>`.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../helpers/process.js';
import { cleanupDirs, tempDir } from './file-fixtures.js';
import { skipWithoutReference, startReference } from './stan-reference.js';
import {
  StartPosition,
  closeStan,
  connect,
  publish,
  subscribe,
  subscribeError,
  withStan,
  type Stan,
} from './stan.js';

after(cleanupDirs);

const LONG = 'x'.repeat(300);
const ACCEPTED = ['a\\b', 'lost+found', 'ok.chan'];

/**
 * What the reference answered, for a store rooted at `root`. A publish on a subject
 * with an empty token (`..`) gets no answer from either server (the NATS layer drops
 * it): null, only its subscribe is checked.
 */
function refusals(root: string): [name: string, publish: string | null, subscribe: string][] {
  return [
    ['a/b', 'stan: invalid publish request', 'stan: invalid subject'],
    ['/abs', 'stan: invalid publish request', 'stan: invalid subject'],
    ['a/.b', 'stan: invalid publish request', 'stan: invalid subject'],
    ['a/../../escape', null, 'stan: invalid subject'],
    ...(
      [
        ['a\0b', 'invalid argument'],
        [LONG, 'file name too long'],
        ['server.dat', 'not a directory'],
        ['clients.dat', 'not a directory'],
      ] as const
    ).map(([name, why]): [string, string, string] => {
      const text = `mkdir ${root}/${name}: ${why}`;
      return [name, text, text];
    }),
  ];
}

async function publishError(sc: Stan, channel: string): Promise<string> {
  try {
    await publish(sc, channel, 'x');
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  throw new Error(`publish on ${JSON.stringify(channel)} unexpectedly acknowledged`);
}

async function readAll(sc: Stan, channel: string): Promise<string[]> {
  const opts = sc.subscriptionOptions().setStartAt(StartPosition.FIRST);
  const r = await subscribe(sc, channel, opts);
  await r.waitFor(1);
  return r.msgs.map((m) => String(m.getData()));
}

describe('channel names on the FILE store', () => {
  it('get the reference answers: `/` refused, other characters kept, file system errors as Go words them', async () => {
    const root = join(await tempDir(), 'data');
    await withStan({ storeType: 'FILE', dir: root }, async ({ connect: open }) => {
      const sc = await open('names');
      for (const [name, pub, sub] of refusals(root)) {
        if (pub !== null) assert.equal(await publishError(sc, name), pub, JSON.stringify(name));
        const opts = sc.subscriptionOptions();
        assert.equal(await subscribeError(sc, name, opts), sub, JSON.stringify(name));
      }
      for (const name of ACCEPTED) await publish(sc, name, `on ${name}`);
    });
    const entries = (await readdir(root)).filter((e) => !e.startsWith('.'));
    assert.deepEqual(entries.sort(), ['clients.dat', 'server.dat', ...ACCEPTED].sort());
    // Restarted on the directory: the channels come back under their names.
    await withStan({ storeType: 'FILE', dir: root }, async ({ connect: open }) => {
      const sc = await open('again');
      for (const name of ACCEPTED) assert.deepEqual(await readAll(sc, name), [`on ${name}`]);
    });
  });

  it(
    'the reference serves the channels wirebus stored under such names',
    { skip: skipWithoutReference() },
    async () => {
      const root = join(await tempDir(), 'data');
      await withStan({ storeType: 'FILE', dir: root }, async ({ connect: open }) => {
        const sc = await open('names');
        for (const name of ACCEPTED) await publish(sc, name, `on ${name}`);
      });
      const port = await freePort();
      const args = ['-a', '127.0.0.1', '-p', String(port), '-cid', 'test-cluster'];
      const ref = await startReference(
        [...args, '-st', 'FILE', '--dir', root],
        'Streaming Server is ready',
      );
      try {
        const sc = await connect(`nats://127.0.0.1:${port}`, 'test-cluster', 'ref');
        for (const name of ACCEPTED) assert.deepEqual(await readAll(sc, name), [`on ${name}`]);
        await closeStan(sc);
      } finally {
        await ref.stop();
      }
    },
  );
});
