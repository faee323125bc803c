// Per-user publish and subscribe permissions, as the reference's `permissions`
// block (and a user JWT's pub/sub/resp claims). A user's lists are compiled once
// into subject tries; each connection then keeps its own small caches: the last 128
// publish decisions (the reference's maxPermCacheSize), the reply subjects it may
// answer under allow_responses, and a deny filter for wildcard subscriptions that
// reach into a denied subject.

import { goQuote } from '../protocol/errors.js';
import type { PermissionChecks } from '../server/client.js';
import type { PublishedMessage } from '../server/message.js';
import type { DeliveryFilter } from '../server/subscription.js';
import { Sublist, type Indexed } from '../subjects/sublist.js';
import { isSubset, subjectsIntersect } from '../subjects/relations.js';
import { hasWildcard, isValidSubject } from '../subjects/validate.js';

/** allow: null means everything is allowed (deny still applies); [] allows nothing. */
export interface SubjectPermission {
  readonly allow?: readonly string[] | null;
  readonly deny?: readonly string[] | null;
}

/** allow_responses: reply to a received message's reply subject up to max times within expires. */
export interface ResponsePermission {
  /** Responses per reply subject; negative for no limit. */
  max: number;
  /** Milliseconds the permission lasts; negative for no limit. */
  expires: number;
}

export interface PermissionsConfig {
  readonly publish?: SubjectPermission | null;
  readonly subscribe?: SubjectPermission | null;
  /** allow_responses; absent or null for none. */
  readonly responses?: ResponsePermission | null;
}

/** The reference's DEFAULT_ALLOW_RESPONSE_MAX_MSGS and _EXPIRATION. */
export const DEFAULT_RESPONSE_MAX = 1;
export const DEFAULT_RESPONSE_EXPIRES = 2 * 60 * 1000;

/** The reference keeps 128 publish decisions per connection. */
const PUB_CACHE_MAX = 128;
const PUB_CACHE_PRUNE = 32;
/** Delivery-time deny decisions kept per connection (the reference's maxDenyPermCacheSize). */
const DENY_CACHE_MAX = 256;
/** Tracked reply subjects before the expired ones are swept (replyPermLimit). */
const REPLY_LIMIT = 4096;

class Entry implements Indexed {
  constructor(
    readonly subject: string,
    readonly queue: string | null,
  ) {}
}

/** `"foo.> grp"` is subject foo.> limited to queue grp; anything else is a plain subject. */
export function splitSubjectQueue(text: string): { subject: string; queue: string | null } {
  const parts = text.trim().split(/\s+/);
  if (parts.length === 2) return { subject: parts[0]!, queue: parts[1]! };
  return { subject: text, queue: null };
}

/** The reference's checkPermSubjectArray: an error message, or null when every entry is usable. */
export function checkPermissionSubject(text: string): string | null {
  if (isValidSubject(text, true)) return null;
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 2) return `subject ${goQuote(text)} is not a valid subject`;
  if (!isValidSubject(parts[0]!, true))
    return `subject ${goQuote(parts[0]!)} is not a valid subject`;
  return null;
}

function trie(list: readonly string[], withQueues: boolean): Sublist<Entry> {
  const s = new Sublist<Entry>();
  for (const text of list) {
    const { subject, queue } = withQueues
      ? splitSubjectQueue(text)
      : { subject: text, queue: null };
    s.insert(new Entry(subject, queue));
  }
  return s;
}

/** One user's permissions, compiled once and shared by all of its connections. */
export class CompiledPermissions {
  readonly pubAllow: Sublist<Entry> | null;
  readonly pubDeny: Sublist<Entry> | null;
  readonly subAllow: Sublist<Entry> | null;
  readonly subDeny: Sublist<Entry> | null;
  /** Subscribe deny subjects (without queue entries), for the delivery filter. */
  readonly denySubjects: readonly string[];
  readonly responses: ResponsePermission | null;

  constructor(config: PermissionsConfig) {
    const responses = config.responses ?? null;
    let pubAllow = config.publish?.allow ?? null;
    const pubDeny = config.publish?.deny ?? null;
    // As the reference: allow_responses without a publish allow list turns off the
    // blanket allow, so such a user may publish only its responses.
    if (responses !== null && pubAllow === null) pubAllow = [];
    this.pubAllow = pubAllow !== null ? trie(pubAllow, false) : null;
    this.pubDeny = pubDeny !== null && pubDeny.length > 0 ? trie(pubDeny, false) : null;
    const subAllow = config.subscribe?.allow ?? null;
    const subDeny = config.subscribe?.deny ?? null;
    // The reference: an empty subscribe allow list means no allow list at all.
    this.subAllow = subAllow !== null && subAllow.length > 0 ? trie(subAllow, true) : null;
    this.subDeny = subDeny !== null && subDeny.length > 0 ? trie(subDeny, true) : null;
    this.denySubjects = (subDeny ?? [])
      .map((d) => splitSubjectQueue(d))
      .filter((d) => d.queue === null)
      .map((d) => d.subject);
    this.responses = responses;
  }

  /** True when the permissions restrict nothing (then a connection gets no checks at all). */
  get empty(): boolean {
    return (
      this.pubAllow === null &&
      this.pubDeny === null &&
      this.subAllow === null &&
      this.subDeny === null &&
      this.responses === null
    );
  }
}

interface ReplyPermit {
  /** ms since epoch when the reply subject was received. */
  readonly t: number;
  n: number;
}

/** One connection's view of its user's permissions, with its caches. */
export class ClientPermissions implements PermissionChecks {
  readonly p: CompiledPermissions;
  private readonly pubCache = new Map<string, boolean>();
  /** Reply subjects this connection received and may publish to (allow_responses). */
  readonly replies: Map<string, ReplyPermit> | null;
  private denyFilter: SubscriptionFilter | null = null;
  private replyFilter: SubscriptionFilter | null = null;

  constructor(p: CompiledPermissions) {
    this.p = p;
    this.replies = p.responses === null ? null : new Map();
  }

  checkPublish(subject: string): string | null {
    const p = this.p;
    if (p.pubAllow === null && p.pubDeny === null) return null;
    const cached = this.pubCache.get(subject);
    if (cached !== undefined) return cached ? null : publishViolation(subject);
    let allowed = true;
    if (p.pubAllow !== null) allowed = p.pubAllow.match(subject).psubs.length > 0;
    if (allowed && p.pubDeny !== null) allowed = p.pubDeny.match(subject).psubs.length === 0;
    if (!allowed && this.replies !== null) {
      // Not cached: whether a reply is allowed changes with every response.
      return this.replyAllowed(subject) ? null : publishViolation(subject);
    }
    const cache = this.pubCache;
    cache.set(subject, allowed);
    if (cache.size > PUB_CACHE_MAX) {
      // Maps iterate in insertion order: the oldest decisions go first.
      let n = PUB_CACHE_PRUNE;
      for (const key of cache.keys()) {
        cache.delete(key);
        if (--n === 0) break;
      }
    }
    return allowed ? null : publishViolation(subject);
  }

  private replyAllowed(subject: string): boolean {
    const replies = this.replies!;
    const permit = replies.get(subject);
    if (permit === undefined) return false;
    const resp = this.p.responses!;
    permit.n++;
    if (resp.max > 0 && permit.n > resp.max) {
      replies.delete(subject);
      return false;
    }
    if (resp.expires > 0 && Date.now() - permit.t > resp.expires) {
      replies.delete(subject);
      return false;
    }
    return true;
  }

  /** Called at delivery of a message with a reply subject (allow_responses). */
  noteReply(reply: string): void {
    const replies = this.replies!;
    replies.set(reply, { t: Date.now(), n: 0 });
    if (replies.size > REPLY_LIMIT) {
      const expires = this.p.responses!.expires;
      const now = Date.now();
      for (const [key, permit] of replies) {
        if (expires > 0 && now - permit.t > expires) replies.delete(key);
      }
    }
  }

  /** The reference's canSubscribe, with its text when denied. */
  checkSubscribe(subject: string, queue: string | null): string | null {
    const p = this.p;
    let allowed = true;
    if (p.subAllow !== null) {
      const r = p.subAllow.match(subject);
      allowed = r.psubs.length > 0;
      // An allow entry with a queue admits that queue (a pattern is fine) only.
      if (queue !== null && r.qsubs.length > 0) allowed = queueMatches(queue, r.qsubs);
    }
    if (allowed && p.subDeny !== null) {
      const r = p.subDeny.match(subject);
      allowed = r.psubs.length === 0;
      if (queue !== null && r.qsubs.length > 0) allowed = !queueMatches(queue, r.qsubs);
    }
    if (allowed) return null;
    return queue === null
      ? `Permissions Violation for Subscription to ${goQuote(subject)}`
      : `Permissions Violation for Subscription to ${goQuote(subject)} using queue ${goQuote(queue)}`;
  }

  /**
   * A subscription needs checks at delivery only when it is a wildcard reaching into
   * a denied subject, or when its user answers requests under allow_responses.
   */
  deliveryFilter(subject: string): DeliveryFilter | null {
    const deny =
      hasWildcard(subject) && this.p.denySubjects.some((d) => subjectsIntersect(d, subject));
    if (deny) {
      this.denyFilter ??= new SubscriptionFilter(this, true);
      return this.denyFilter;
    }
    if (this.replies !== null) {
      this.replyFilter ??= new SubscriptionFilter(this, false);
      return this.replyFilter;
    }
    return null;
  }
}

function publishViolation(subject: string): string {
  return `Permissions Violation for Publish to ${goQuote(subject)}`;
}

function queueMatches(queue: string, qsubs: readonly (readonly Entry[])[]): boolean {
  for (const members of qsubs) {
    const name = members[0]?.queue;
    if (name === undefined || name === null) continue;
    // A queue name may itself be a pattern, but a literal match comes first.
    if (queue === name || (hasWildcard(name) && isSubset(queue, name))) return true;
  }
  return false;
}

/** Checks one delivery against the connection's subscribe deny list, and notes replies. */
class SubscriptionFilter implements DeliveryFilter {
  private readonly cache = new Map<string, boolean>();

  constructor(
    private readonly perms: ClientPermissions,
    private readonly checkDeny: boolean,
  ) {}

  admit(subject: string, m: PublishedMessage): boolean {
    if (this.checkDeny && this.denied(subject)) return false;
    if (this.perms.replies !== null && m.replyStart >= 0) {
      this.perms.noteReply(m.argBuf.toString('latin1', m.replyStart, m.replyEnd));
    }
    return true;
  }

  private denied(subject: string): boolean {
    const cached = this.cache.get(subject);
    if (cached !== undefined) return cached;
    const deny = this.perms.p.subDeny!.match(subject).psubs.length > 0;
    if (this.cache.size >= DENY_CACHE_MAX) this.cache.clear();
    this.cache.set(subject, deny);
    return deny;
  }
}
