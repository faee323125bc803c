// This server's interest, as the other servers must know it: per account, how many
// local subscriptions there are on each subject (plain) and on each subject and
// queue group. A plain subject is announced when its count goes from 0 to 1 and
// withdrawn when it falls back to 0; a queue group is announced with its count as
// weight at every change, so that the other servers spread a group's messages by
// member counts (the reference's updateRouteSubscriptionMap).

/** One line of interest to send to the routes. */
export interface InterestChange {
  readonly account: string;
  readonly subject: string;
  readonly queue: string | null;
  /** The new count: 0 withdraws the interest (RS-), otherwise RS+ (with it as weight). */
  readonly count: number;
}

interface Entry {
  readonly subject: string;
  readonly queue: string | null;
  count: number;
}

export class Interest {
  /** Per account name, by `subject` or `subject queue`. */
  private readonly accounts = new Map<string, Map<string, Entry>>();

  /** Applies a local subscription's arrival (+1) or departure (-1); returns what to announce. */
  update(
    account: string,
    subject: string,
    queue: string | null,
    delta: number,
  ): InterestChange | null {
    let entries = this.accounts.get(account);
    if (entries === undefined) {
      if (delta <= 0) return null;
      entries = new Map();
      this.accounts.set(account, entries);
    }
    const key = queue === null ? subject : subject + ' ' + queue;
    const e = entries.get(key);
    if (e === undefined) {
      if (delta <= 0) return null;
      entries.set(key, { subject, queue, count: delta });
      return { account, subject, queue, count: delta };
    }
    e.count += delta;
    if (e.count <= 0) {
      entries.delete(key);
      if (entries.size === 0) this.accounts.delete(account);
      return { account, subject, queue, count: 0 };
    }
    // A plain subject that stays wanted changes nothing for the other servers.
    return queue === null ? null : { account, subject, queue, count: e.count };
  }

  /** Every current interest, for a route that just registered. */
  *all(): Generator<InterestChange> {
    for (const [account, entries] of this.accounts) {
      for (const e of entries.values()) {
        yield { account, subject: e.subject, queue: e.queue, count: e.count };
      }
    }
  }
}

/**
 * `RS+ acc subject [queue weight]` or `RS- acc subject [queue]` with CRLF. Account
 * names are text (UTF-8); subjects and queues are kept as their bytes (latin1).
 */
export function interestLine(c: InterestChange): Buffer {
  let tail = ' ' + c.subject;
  if (c.queue !== null) tail += ' ' + c.queue + (c.count > 0 ? ' ' + String(c.count) : '');
  return Buffer.concat([
    Buffer.from((c.count > 0 ? 'RS+ ' : 'RS- ') + c.account, 'utf8'),
    Buffer.from(tail + '\r\n', 'latin1'),
  ]);
}
