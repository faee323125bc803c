// /subsz (alias /subscriptionsz): the subscription index's statistics, summed over
// accounts, and with `subs=1` the subscriptions themselves, optionally only those a
// message on the literal subject `test` would reach (server/monitor.go Subsz).

import type { Server } from '../server/server.js';
import type { Subscription } from '../server/subscription.js';
import { isValidLiteralSubject, subjectMatches } from '../subjects/validate.js';
import { nowMs, rfc3339 } from './format.js';
import { json, type MonitorHandler } from './http.js';
import { BadRequest, queryBool, queryInt } from './query.js';

/** The reference's DefaultSubListSize. */
export const DEFAULT_SUB_LIST_SIZE = 1024;

export interface SubszOptions {
  subs: boolean;
  offset: number;
  limit: number;
  /** A literal subject; '' for no filter. */
  test: string;
  /** One account's subscriptions; '' for all. */
  acc: string;
}

export function subszOptions(q: URLSearchParams): SubszOptions {
  const subs = queryBool(q, 'subs');
  let offset = queryInt(q, 'offset');
  let limit = queryInt(q, 'limit');
  const test = q.get('test') ?? '';
  if (offset < 0) offset = 0;
  if (limit <= 0) limit = DEFAULT_SUB_LIST_SIZE;
  if (test !== '' && !isValidLiteralSubject(test)) {
    throw new BadRequest(`invalid test subject, must be valid publish subject: ${test}`);
  }
  return { subs, offset, limit, test, acc: q.get('acc') ?? '' };
}

/** Statistics of every account's index (or one account's), combined as SublistStats.add. */
export function sublistStats(server: Server, acc: string): Record<string, number> {
  let subs = 0;
  let cache = 0;
  let inserts = 0;
  let removes = 0;
  let matches = 0;
  let hits = 0;
  let maxFanout = 0;
  let totalFanout = 0;
  for (const a of server.accounts.values()) {
    if (acc !== '' && a.name !== acc) continue;
    const s = a.sublist.stats();
    subs += s.numSubscriptions;
    cache += s.numCache;
    inserts += s.numInserts;
    removes += s.numRemoves;
    matches += s.numMatches;
    hits += Math.round(s.cacheHitRate * s.numMatches);
    if (s.maxFanout > maxFanout) maxFanout = s.maxFanout;
    totalFanout += Math.round(s.avgFanout * s.numCache);
  }
  return {
    num_subscriptions: subs,
    num_cache: cache,
    num_inserts: inserts,
    num_removes: removes,
    num_matches: matches,
    cache_hit_rate: matches > 0 ? hits / matches : 0,
    max_fanout: maxFanout,
    avg_fanout: cache > 0 ? totalFanout / cache : 0,
  };
}

export function subsz(server: Server, o: SubszOptions): Record<string, unknown> {
  const stats = sublistStats(server, o.acc);
  // Without a list the reference writes the statistics alone, and so it does when
  // the list turns out empty.
  if (!o.subs) return stats;
  const details: Record<string, unknown>[] = [];
  const end = o.offset + o.limit;
  let seen = 0;
  for (const a of server.accounts.values()) {
    if (o.acc !== '' && a.name !== o.acc) continue;
    a.sublist.forEach((s: Subscription) => {
      if (o.test !== '' && !subjectMatches(o.test, s.subject)) return;
      const i = seen++;
      if (i < o.offset || i >= end) return;
      const d: Record<string, unknown> = { account: a.name, subject: s.subject };
      if (s.queue !== null && s.queue !== '') d.qgroup = s.queue;
      d.sid = s.sid;
      d.msgs = s.delivered;
      if (s.max > 0) d.max = s.max;
      d.cid = s.client.cid;
      details.push(d);
    });
  }
  if (details.length === 0) return stats;
  return {
    server_id: server.id,
    now: rfc3339(nowMs()),
    ...stats,
    // The reference's `total` is the length of the page it returns.
    total: details.length,
    offset: o.offset,
    limit: o.limit,
    subscriptions_list: details,
  };
}

export function subszHandler(server: Server): MonitorHandler {
  return (req) => json(subsz(server, subszOptions(req.query)), req.query);
}
