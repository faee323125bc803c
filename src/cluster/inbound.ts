// A message that came over a route goes to this server's own subscribers only: in a
// full mesh every server hears from the publisher's server directly, so forwarding
// it again would deliver it twice (the reference's one-hop rule). Queue groups get
// it only when the sending server chose this one for them (the names in RMSG), and
// then a local member takes it. Two exceptions to local-only: a service import's
// response, which the account's imports route back to the requester, and a queue
// message no local member could take (the member left while the message was on its
// way): as the reference's processMsgResults, it goes on to another server's member
// of the group rather than being dropped.

import type { Account } from '../server/account.js';
import { deliver } from '../server/delivery.js';
import type { PublishedMessage } from '../server/message.js';
import type { RouteSink, Subscription } from '../server/subscription.js';

/** Delivers to local subscriptions; returns how many received the message. */
export function deliverRouted(
  account: Account,
  subject: string,
  m: PublishedMessage,
  queues: readonly string[] | null,
): number {
  const result = account.sublist.match(subject);
  let delivered = 0;
  const psubs = result.psubs;
  for (let i = 0; i < psubs.length; i++) {
    const sub = psubs[i]!;
    if (sub.route !== null) continue;
    if (sub.shadow !== null && !sub.shadow.fromRoutes) continue;
    if (sub.filter !== null && !sub.filter.admit(subject, m)) continue;
    if (deliver(sub, m)) delivered++;
  }
  // A response to a service request made here: the imports route it back to the
  // requester's account (only this server knows the way).
  if (account.links !== null && subject.startsWith('_R_.')) {
    delivered += account.links.route(null, subject, m);
  }
  if (queues === null) return delivered;
  // Routes a queue message goes on to, if any, and the frame of their marks.
  let routes: RouteSink | null = null;
  let frame = 0;
  const qsubs = result.qsubs;
  for (let g = 0; g < qsubs.length; g++) {
    const members = qsubs[g]!;
    const name = members[0]?.queue;
    if (name == null || !queues.includes(name)) continue;
    const n = members.length;
    const first = (Math.random() * n) | 0;
    let taken = false;
    for (let k = 0; k < n; k++) {
      let j = first + k;
      if (j >= n) j -= n;
      const sub = members[j]!;
      // Another server's member: that server was not chosen, this one was.
      if (sub.route !== null) continue;
      if (sub.filter !== null && !sub.filter.admit(subject, m)) continue;
      if (deliver(sub, m)) {
        delivered++;
        taken = true;
        break;
      }
    }
    if (taken) continue;
    // The first other server's member, in the group's order, as the reference picks it.
    const other = firstRouteMember(members);
    if (other === null) continue;
    const sink = other.route!;
    if (routes === null) frame = sink.open();
    sink.mark(frame, name);
    routes = sink;
  }
  if (routes !== null) delivered += routes.send(frame, account, subject, m);
  return delivered;
}

function firstRouteMember(members: readonly Subscription[]): Subscription | null {
  for (let i = 0; i < members.length; i++) if (members[i]!.route !== null) return members[i]!;
  return null;
}
