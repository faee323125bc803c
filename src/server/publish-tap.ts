// A byte-level way past routing for an in-process subscriber whose subjects are unique
// per message. JetStream's ack subjects (`$JS.ACK.<stream>.<consumer>.<five numbers>`)
// differ on every ack: routed as usual, each one costs a subject string, a sublist miss
// (a trie walk, a result and a cache entry) and a second string for the handler. A tap
// takes such publishes from the publisher's read buffer instead, while the account's
// index says that routing could reach nobody else (Account.tapFor).

import type { Subscription } from './subscription.js';

export interface PublishTap {
  /** The subject's first tokens as bytes, dot included (`$JS.ACK.`). */
  readonly prefix: Buffer;
  /** The same tokens, for the index (`['$JS', 'ACK']`). */
  readonly tokens: readonly string[];
  /**
   * Whether the tap stands for `sub` (an in-process subscription it delivers to itself):
   * while every subscription that can match the prefix is one, routing could reach no
   * one else, and the tap takes the prefix's publishes.
   */
  stands(sub: Subscription): boolean;
  /**
   * Takes one publish: its subject is `b[subjectStart, subjectEnd)`, its reply
   * `b[replyStart, replyEnd)` (replyStart < 0 for none), its payload without headers
   * `payload[dataStart, dataEnd)`, none of which may be kept. Returns the subscription
   * that routing would have delivered it to, or null when none matches the subject
   * (nothing was delivered). Called only while the tap stands for every subscription
   * matching the prefix.
   */
  take(
    b: Buffer,
    subjectStart: number,
    subjectEnd: number,
    replyStart: number,
    replyEnd: number,
    payload: Buffer,
    dataStart: number,
    dataEnd: number,
  ): Subscription | null;
}

/** Whether `b[start, end)` begins with `prefix` and goes on past it. */
export function underPrefix(prefix: Buffer, b: Buffer, start: number, end: number): boolean {
  const n = prefix.length;
  if (end - start <= n) return false;
  for (let i = 0; i < n; i++) if (b[start + i] !== prefix[i]) return false;
  return true;
}
