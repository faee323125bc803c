// Delivery: writing MSG lines into a subscriber's outbound block, per message and
// in bytes out per message, without sockets (the block is rewound each batch).

import { Server } from '../src/server/server.js';
import { InternalMessage } from '../src/server/message.js';
import { deliver } from '../src/server/delivery.js';
import { Subscription } from '../src/server/subscription.js';
import { measure, type BenchResult } from './timing.js';

export function deliveryBenchmarks(ms: number): BenchResult[] {
  const server = new Server({ quiet: true });
  const results: BenchResult[] = [];
  for (const size of [16, 128, 1024]) {
    const client = server.createInternalClient('bench');
    // An internal client has no socket: MSG lines accumulate in its block, which
    // the loop rewinds so memory stays flat.
    const sub = new Subscription(client, 'bench.subject', null, '1');
    const m = new InternalMessage().set(
      'bench.subject',
      '_INBOX.reply',
      null,
      Buffer.alloc(size, 120),
    );
    const before = client.out.queued;
    deliver(sub, m);
    const bytesPerMsg = client.out.queued - before;
    let count = 0;
    results.push(
      measure(
        `deliver MSG ${size}B`,
        ms,
        1000,
        () => {
          deliver(sub, m);
          if (++count === 256) {
            client.out.discard();
            client.out.pos = 0;
            count = 0;
          }
        },
        `${bytesPerMsg} bytes out per message`,
      ),
    );
  }
  // An in-process subscriber on a wildcard (the streaming layer's publish
  // subscription): subject and reply strings per message, or reused when the bytes
  // repeat (Latin1Memo).
  const client = server.createInternalClient('bench');
  let got = 0;
  const sub = server.subscribeInternal(client, '_STAN.pub.x.>', null, (s, r) => {
    if (s.length + (r?.length ?? 0) > 0) got++;
  });
  sub.borrows = true;
  const m = new InternalMessage().set(
    '_STAN.pub.x.orders',
    '_STAN.acks.QmnUhwNVYbMnqZhfQh4vrF',
    null,
    Buffer.alloc(128, 120),
  );
  results.push(
    measure(
      'deliver in-process, wildcard sub',
      ms,
      1000,
      () => {
        deliver(sub, m);
      },
      'subject and reply strings, 128 B',
    ),
  );
  if (got === 0) throw new Error('the in-process subscriber got nothing');
  return results;
}
