// Delivery: writing MSG lines into a subscriber's outbound block, per message and
// in bytes out per message, without sockets (the block is rewound each batch).

import { Server } from '../src/server/server.js';
import { InternalMessage } from '../src/server/message.js';
import { deliver } from '../src/server/delivery.js';
import { Subscription } from '../src/server/subscription.js';
import { putBytes } from '../src/server/outbound.js';
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
  // Gone, or the ranged subscription's tap below would stand aside for it.
  client.removeSubscription(sub);
  results.push(...rangedBenchmarks(server, ms));
  results.push(...copyBenchmarks(ms));
  return results;
}

/**
 * A ranged in-process subscription on `_STAN.pub.x.>` (the streaming layer's publish
 * subscription), reached by routing (match, routing loop, delivery) and by its tap,
 * which takes a publish from the publisher's read buffer (range-tap.ts). Neither row
 * has the publisher's own checks of onMsg, which the tap also skips.
 */
function rangedBenchmarks(server: Server, ms: number): BenchResult[] {
  const client = server.createInternalClient('bench');
  let got = 0;
  const sub = server.subscribeInternalRange(client, '_STAN.pub.x.>', (s, r, _b, start, end) => {
    if (s.length + (r?.length ?? 0) + end - start > 0) got++;
  });
  const subject = '_STAN.pub.x.bench.pub.128.19241.1795538514690';
  const reply = '_STAN.acks.QmnUhwNVYbMnqZhfQh4vrF';
  const m = new InternalMessage().set(subject, reply, null, Buffer.alloc(128, 120));
  const line = Buffer.from(`PUB ${subject} ${reply} 128\r\n`, 'latin1');
  const subjectStart = 4;
  const subjectEnd = subjectStart + subject.length;
  const replyStart = subjectEnd + 1;
  const replyEnd = replyStart + reply.length;
  const payload = Buffer.alloc(128, 120);
  const account = client.account;
  const results = [
    measure(
      'route in-process, ranged wildcard sub',
      ms,
      1000,
      () => {
        account.route(null, subject, m);
      },
      'the streaming publish subscription: match, routing, delivery, 128 B',
    ),
    measure(
      'tap in-process, ranged wildcard sub',
      ms,
      1000,
      () => {
        const tap = account.tapFor(line, subjectStart, subjectEnd);
        if (tap === null) throw new Error('no tap for a ranged subscription on a prefix');
        tap.take(line, subjectStart, subjectEnd, replyStart, replyEnd, payload, 0, 128);
      },
      'the same, taken from the read buffer: tapFor + take',
    ),
  ];
  if (got === 0) throw new Error('the ranged subscriber got nothing');
  client.removeSubscription(sub);
  return results;
}

/** putBytes of a 128 B range (a streaming payload into its slab) against Buffer.copy. */
function copyBenchmarks(ms: number): BenchResult[] {
  const src = Buffer.alloc(64 * 1024, 7);
  const dst = Buffer.allocUnsafe(1024 * 1024);
  let from = 0;
  let to = 0;
  const step = (copy: (at: number, start: number) => void) => (): void => {
    copy(to, from);
    to += 131;
    if (to > dst.length - 256) to = 0;
    from += 333;
    if (from > src.length - 256) from &= 1023;
  };
  return [
    measure(
      'putBytes 128 B range',
      ms,
      1000,
      step((at, start) => putBytes(dst, at, src, start, start + 128)),
      'a view and TypedArray set',
    ),
    measure(
      'Buffer.copy 128 B range',
      ms,
      1000,
      step((at, start) => src.copy(dst, at, start, start + 128)),
      'what putBytes did for ranges',
    ),
  ];
}
