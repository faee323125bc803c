// Timestamps are read from the clock once per publish batch (channel.ts stamp(),
// PublishLane.run): messages published apart in time get timestamps apart in time,
// whether a batch ends with its turn or when io_batch_size fills it, and a channel's
// timestamps never go backwards.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { publish, sleep, withStan } from './stan.js';

for (const ioBatchSize of [1, 1024]) {
  test(`timestamps follow the clock from batch to batch (io_batch_size ${ioBatchSize})`, async () => {
    await withStan({ ioBatchSize }, async ({ connect, streaming }) => {
      const sc = await connect('me');
      const before = Date.now();
      for (let i = 0; i < 3; i++) {
        await publish(sc, 'foo', `m${i}`);
        await sleep(25);
      }
      const after = Date.now();
      const msgs = streaming.channels.get('foo')!.store.msgs;
      const stamps: number[] = [];
      for (let seq = 1; seq <= 3; seq++) {
        const m = await msgs.lookup(seq);
        stamps.push(Number(BigInt(m!.timestamp.toString()) / 1_000_000n));
      }
      // Each read after the previous one's 25 ms wait; all within the test's time (the
      // server's clock is performance.timeOrigin + now(), a few ms from Date.now() at most).
      for (let i = 1; i < 3; i++) {
        assert.ok(stamps[i]! - stamps[i - 1]! >= 20, `stamps ${stamps.join(', ')}`);
      }
      assert.ok(
        stamps[0]! >= before - 50 && stamps[2]! <= after + 50,
        `stamps ${stamps.join(', ')}`,
      );
    });
  });
}
