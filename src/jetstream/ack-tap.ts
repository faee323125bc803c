// An account's JetStream acks, taken from the publisher's bytes (src/server/publish-tap.ts):
// `$JS.ACK.<stream>.<consumer>.<dc>.<sseq>.<dseq>.<ts>.<pending>` is unique per message,
// so routing it the usual way costs a subject string, a sublist miss and a second string
// per ack. The tap finds the consumer from the subject's bytes (the last one found is
// remembered: acks come in runs for one consumer) and hands it the rest in place.

import type { Client } from '../server/client.js';
import type { PublishTap } from '../server/publish-tap.js';
import type { Subscription } from '../server/subscription.js';
import { Consumer } from './consumer.js';
import type { Stream } from './stream.js';

const PREFIX = '$JS.ACK.';
const DOT = 0x2e;

export class AckTap implements PublishTap {
  readonly prefix = Buffer.from(PREFIX, 'latin1');
  readonly tokens = ['$JS', 'ACK'];
  /** `<stream>.<consumer>` of the last consumer found, and that consumer. */
  private lastKey = Buffer.allocUnsafe(64);
  private lastKeyLen = -1;
  private last: Consumer | null = null;

  constructor(
    private readonly owner: Client,
    private readonly streams: ReadonlyMap<string, Stream>,
  ) {}

  /**
   * A consumer's own ack subscription, `$JS.ACK.<stream>.<consumer>.>`: not a stream's
   * subscription on such subjects (a stream may store acks), nor anyone else's.
   */
  stands(sub: Subscription): boolean {
    if (sub.client !== this.owner || sub.internal === null || sub.max !== 0) return false;
    const t = sub.subject.split('.');
    if (t.length !== 5 || t[4] !== '>') return false;
    const consumer = this.streams.get(t[2]!)?.consumers.get(t[3]!);
    return consumer instanceof Consumer && consumer.acksOn(sub);
  }

  take(
    b: Buffer,
    subjectStart: number,
    subjectEnd: number,
    replyStart: number,
    replyEnd: number,
    payload: Buffer,
    dataStart: number,
    dataEnd: number,
  ): Subscription | null {
    const keyStart = subjectStart + PREFIX.length;
    // `<stream>.<consumer>.` and at least one token after it, none of them empty: what
    // the consumer's subscription `$JS.ACK.<stream>.<consumer>.>` matches (the consumer
    // checks the tokens after it as it reads them).
    let streamEnd = -1;
    let keyEnd = -1;
    for (let i = keyStart; i < subjectEnd; i++) {
      if (b[i] !== DOT) continue;
      if (streamEnd < 0) {
        streamEnd = i;
      } else {
        keyEnd = i;
        break;
      }
    }
    if (streamEnd <= keyStart || keyEnd <= streamEnd + 1 || keyEnd === subjectEnd - 1) return null;
    const consumer = this.find(b, keyStart, streamEnd, keyEnd);
    if (consumer === null) return null;
    return consumer.takeAck(
      b,
      keyEnd + 1,
      subjectEnd,
      replyStart,
      replyEnd,
      payload,
      dataStart,
      dataEnd,
    );
  }

  private find(b: Buffer, keyStart: number, streamEnd: number, keyEnd: number): Consumer | null {
    const len = keyEnd - keyStart;
    const last = this.last;
    if (last !== null && !last.closed && len === this.lastKeyLen) {
      const key = this.lastKey;
      let same = true;
      for (let i = 0; i < len; i++) {
        if (key[i] !== b[keyStart + i]) {
          same = false;
          break;
        }
      }
      if (same) return last;
    }
    const stream = this.streams.get(b.toString('latin1', keyStart, streamEnd));
    const found = stream?.consumers.get(b.toString('latin1', streamEnd + 1, keyEnd));
    if (!(found instanceof Consumer) || found.closed) return null;
    if (len > this.lastKey.length) this.lastKey = Buffer.allocUnsafe(len);
    b.copy(this.lastKey, 0, keyStart, keyEnd);
    this.lastKeyLen = len;
    this.last = found;
    return found;
  }
}
