// A FILE catch-up reads the log back in blocks whose buffers are filled again once the
// store lets a block go (file-read.ts, releaseBlock): they are lent, so whatever keeps
// a delivered message past the call that sends it copies it (payloads of 16 KiB and
// more, which an outbound queue holds by reference; src/server/shared-read.ts). Here
// the subscriber stops reading while the whole backlog is sent, so its connection
// holds every message while block after block is read, dropped and refilled; each
// message must still arrive with its own bytes.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { cleanupDirs, tempDir } from './file-fixtures.js';
import {
  StartPosition,
  sleep,
  socketOf,
  subscribe,
  withStan,
  withTimeout,
  type Stan,
  type StanMessage,
} from './stan.js';

after(cleanupDirs);

// Sizes on both sides of ZERO_COPY_MIN (16 KiB): copied into the outbound block, or
// queued by reference.
const SIZES = [100, 20_000, 1000, 40_000, 5000];
const N = 400;

/** Message i's payload: its own bytes throughout, so a refilled buffer shows. */
function payload(i: number): Buffer {
  const b = Buffer.alloc(SIZES[i % SIZES.length]!);
  for (let j = 0; j < b.length; j++) b[j] = (i * 31 + j) & 0xff;
  return b;
}

async function publishAll(sc: Stan, subject: string): Promise<void> {
  for (let i = 0; i < N; i++) {
    await new Promise<void>((resolve, reject) => {
      sc.publish(subject, payload(i), (err) => (err ? reject(err) : resolve()));
    });
  }
}

describe('file store: read blocks lent to a catch-up', () => {
  it('a subscriber that reads nothing while the backlog is sent gets every byte', async () => {
    const dir = await tempDir();
    await withStan(
      {
        storeType: 'FILE',
        dir,
        // Blocks of 64 KiB and a cache of 64 KiB: the catch-up reads ~100 blocks.
        fileOptions: { readBufferSize: 64 * 1024, cacheBytes: 64 * 1024 },
      },
      async ({ connect }) => {
        const pub = await connect('publisher');
        await publishAll(pub, 'lent');
        const sc = await connect('reader');
        const got: StanMessage[] = [];
        let done!: () => void;
        const all = new Promise<void>((resolve) => (done = resolve));
        const r = await subscribe(
          sc,
          'lent',
          sc
            .subscriptionOptions()
            .setStartAt(StartPosition.FIRST)
            .setDurableName('d')
            .setMaxInFlight(N)
            .setAckWait(60_000)
            .setManualAckMode(true),
          undefined,
          (m) => {
            got.push(m);
            m.ack();
            if (got.length === N) done();
          },
        );
        socketOf(sc).pause();
        await sleep(500);
        socketOf(sc).resume();
        await withTimeout(all, `${N} messages`, 20_000).catch((err: unknown) => {
          throw new Error(`${String(err)}; got ${got.length}, error ${String(r.error)}`);
        });
        for (let i = 0; i < N; i++) {
          const m = got[i]!;
          assert.equal(m.getSequence(), i + 1);
          assert.ok(Buffer.from(m.getRawData()).equals(payload(i)), `message ${i + 1}'s bytes`);
        }
      },
      { maxPending: 64 * 1024 * 1024 },
    );
  });
});
