// An in-process range subscription on `<prefix>.>` takes the publishes under its prefix
// from the publisher's read buffer (publish-tap.ts), while routing could reach no one
// else. The streaming layer's `_STAN.pub.<id>.>` is one: every streaming publish went
// through a subject string compared twice, a sublist match, the routing loop and
// delivery's checks before the handler saw its bytes; the tap hands it them at once,
// with the subject and reply strings it would have had.

import type { PublishTap } from './publish-tap.js';
import { Latin1Memo } from './latin1-memo.js';
import type { RangeHandler, Subscription } from './subscription.js';

export class RangeTap implements PublishTap {
  readonly prefix: Buffer;
  readonly tokens: readonly string[];
  private readonly prefixString: string;
  /** The subject's part after the prefix, and the whole subject made from it. */
  private readonly suffixMemo = new Latin1Memo();
  private lastSuffix = '';
  private lastSubject = '';
  private readonly replyMemo = new Latin1Memo();

  /** `sub` is ranged, in-process, on `tokens.join('.') + '.>'`. */
  constructor(
    private readonly sub: Subscription,
    private readonly handler: RangeHandler,
    tokens: readonly string[],
    private readonly failed: (sub: Subscription, err: unknown) => void,
  ) {
    this.tokens = tokens;
    this.prefixString = tokens.join('.') + '.';
    this.prefix = Buffer.from(this.prefixString, 'latin1');
  }

  stands(sub: Subscription): boolean {
    return sub === this.sub;
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
    const sub = this.sub;
    // Gone from the index (the tap leaves with it): nobody takes the message.
    if (sub.closed) return null;
    const suffix = this.suffixMemo.get(b, subjectStart + this.prefix.length, subjectEnd);
    if (suffix !== this.lastSuffix) {
      this.lastSuffix = suffix;
      this.lastSubject = this.prefixString + suffix;
    }
    const reply = replyStart >= 0 ? this.replyMemo.get(b, replyStart, replyEnd) : null;
    try {
      this.handler(this.lastSubject, reply, payload, dataStart, dataEnd);
    } catch (err) {
      this.failed(sub, err);
    }
    return sub;
  }
}

/**
 * The tokens before a final `>` of a subject with no other wildcard (`a.b.>` gives
 * `['a', 'b']`), or null: the subjects a RangeTap can stand for.
 */
export function tapTokens(subject: string): string[] | null {
  const tokens = subject.split('.');
  if (tokens.length < 2 || tokens[tokens.length - 1] !== '>') return null;
  tokens.pop();
  for (const t of tokens) if (t === '' || t === '*' || t === '>') return null;
  return tokens;
}
