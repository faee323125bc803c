// An account is a subject space of its own: one subscription index, and the routing
// of each published message through it. Users without accounts live in $G.

import type { Client } from './client.js';
import { deliver } from './delivery.js';
import type { PublishedMessage } from './message.js';
import { Sublist } from '../subjects/sublist.js';
import type { Subscription } from './subscription.js';

export const GLOBAL_ACCOUNT = '$G';

/**
 * Routing beyond the account's own index: stream exports to importers, service
 * imports to exporters and their responses back (src/auth/accounts.ts).
 */
export interface AccountLinks {
  /** Routes m on to linked accounts; returns how many subscriptions received it. */
  route(publisher: Client | null, subject: string, m: PublishedMessage): number;
}

export class Account {
  readonly name: string;
  readonly sublist: Sublist<Subscription>;
  /** Imports and exports; null (the usual case) keeps routing to this index alone. */
  links: AccountLinks | null = null;

  constructor(name: string, options: { sublistCache?: boolean } = {}) {
    this.name = name;
    this.sublist = new Sublist<Subscription>({ cache: options.sublistCache ?? true });
  }

  /**
   * Routes a message to every matching plain subscription and to one member of each
   * queue group; returns how many subscriptions received it. `publisher` is null for
   * messages without a connection of origin.
   */
  route(publisher: Client | null, subject: string, m: PublishedMessage): number {
    const result = this.sublist.match(subject);
    const noEcho = publisher !== null && !publisher.echo;
    let delivered = 0;
    const psubs = result.psubs;
    for (let i = 0; i < psubs.length; i++) {
      const sub = psubs[i]!;
      if (noEcho && sub.client === publisher) continue;
      if (sub.filter !== null && !sub.filter.admit(subject, m)) continue;
      if (deliver(sub, m)) delivered++;
    }
    const qsubs = result.qsubs;
    for (let g = 0; g < qsubs.length; g++) {
      const members = qsubs[g]!;
      const n = members.length;
      // A random start spreads the group's load, as the reference does; the scan
      // skips members that cannot take the message.
      const first = (Math.random() * n) | 0;
      for (let k = 0; k < n; k++) {
        let j = first + k;
        if (j >= n) j -= n;
        const sub = members[j]!;
        if (noEcho && sub.client === publisher) continue;
        if (sub.filter !== null && !sub.filter.admit(subject, m)) continue;
        if (deliver(sub, m)) {
          delivered++;
          break;
        }
      }
    }
    if (this.links !== null) delivered += this.links.route(publisher, subject, m);
    return delivered;
  }
}
