// Accounts beyond their own subject space: stream and service exports and imports,
// as the reference's `accounts { A: { exports, imports } }` (and account JWTs).
//
// A publish is routed in its own account first, exactly as without accounts; only
// an account with links (Account.links, null otherwise) then routes on:
// - stream: as the reference, by subscription, not by publish. Each subscription
//   of an importer that an import covers has a shadow in the exporter's index, on
//   the exporter's subject; a message matched there is delivered to the importing
//   subscription under the subject the import maps it to (prefix or to). So a
//   stream crosses routes in the exporting account, and the importing subscriber's
//   server delivers it through the import, which is what nats-server expects of
//   the servers it is clustered with;
// - service: an importer routes a request on an imported subject into the exporter,
//   with the reply subject replaced by a fresh `_R_.` subject in the exporter;
// - response: the exporter routes a publish on such an `_R_.` subject back into the
//   importer, on the requester's original reply subject (once for singleton
//   services, until expiry for stream and chunked ones).

import { randomBytes } from 'node:crypto';
import type { Account, AccountLinks } from '../server/account.js';
import type { Client } from '../server/client.js';
import { deliver } from '../server/delivery.js';
import { otherOwnSubject, type PublishedMessage } from '../server/message.js';
import { type InternalHandler, type ShadowTarget, Subscription } from '../server/subscription.js';
import { Sublist, type Indexed } from '../subjects/sublist.js';
import { hasWildcard, isValidSubject } from '../subjects/validate.js';
import { isSubset } from '../subjects/relations.js';

export type ResponseType = 'singleton' | 'stream' | 'chunked';

export interface ExportConfig {
  readonly kind: 'stream' | 'service';
  readonly subject: string;
  /** Accounts allowed to import; absent or null for everyone (a public export). */
  readonly accounts?: readonly string[] | null;
  /** Services only; singleton (one response per request) by default. */
  readonly responseType?: ResponseType;
}

export interface ImportConfig {
  readonly kind: 'stream' | 'service';
  /** The exporting account. */
  readonly account: string;
  /** The subject in the exporting account. */
  readonly subject: string;
  /** Stream: prepended (with a dot) to the subject in the importing account. */
  readonly prefix?: string;
  /** Stream: the subject in the importing account; service: the local subject clients publish to. */
  readonly to?: string;
}

/** How long a service response route lives (the reference's default response threshold). */
const RESPONSE_TTL = 2 * 60 * 1000;
/** Response routes kept per exporter at most; the oldest go first past this. */
const RESPONSES_MAX = 100_000;
/** Service imports may chain through this many accounts; streams are not re-exported. */
const MAX_DEPTH = 4;

// ---- subject mapping ------------------------------------------------------------------

/** `$1` or `{{wildcard(1)}}`: a token of a mapping's destination that takes a wildcard's token. */
const MAPPED_TOKEN = /^(?:\$(\d+)|\{\{\s*wildcard\s*\(\s*(\d+)\s*\)\s*\}\})$/;

/**
 * Maps subjects matching `from` onto `to`: `$1`/`{{wildcard(1)}}` tokens take the
 * n-th wildcard's token, a `*` in `to` takes the next `*` in order, `>` the rest.
 */
export class SubjectMap {
  private readonly from: string[];
  private readonly to: string[];
  readonly identity: boolean;

  constructor(from: string, to: string) {
    this.from = from.split('.');
    this.to = to.split('.');
    this.identity = from === to;
  }

  apply(subject: string): string {
    if (this.identity) return subject;
    const tokens = subject.split('.');
    const captured: string[] = [];
    let rest = '';
    for (let i = 0; i < this.from.length; i++) {
      const f = this.from[i]!;
      if (f === '*') captured.push(tokens[i] ?? '');
      else if (f === '>') rest = tokens.slice(i).join('.');
    }
    const out: string[] = [];
    let next = 0;
    for (const t of this.to) {
      const m = MAPPED_TOKEN.exec(t);
      if (m !== null) out.push(captured[Number(m[1] ?? m[2]) - 1] ?? '');
      else if (t === '*') out.push(captured[next++] ?? '');
      else if (t === '>') out.push(rest);
      else out.push(t);
    }
    return out.join('.');
  }

  /**
   * apply() backwards, for a subject (wildcards allowed) that `to` covers: the
   * subject in `from`'s space whose messages apply() maps into it (the reference's
   * reverse transform, which places a stream import's shadow subscription).
   */
  reverse(subject: string): string {
    if (this.identity) return subject;
    const tokens = subject.split('.');
    // The tokens for from's wildcards, by their order in from.
    const captured: string[] = [];
    let rest = '>';
    let next = 0;
    for (let i = 0; i < this.to.length; i++) {
      const t = this.to[i]!;
      const m = MAPPED_TOKEN.exec(t);
      if (m !== null) captured[Number(m[1] ?? m[2]) - 1] = tokens[i] ?? '*';
      else if (t === '*') captured[next++] = tokens[i] ?? '*';
      else if (t === '>') {
        rest = tokens.slice(i).join('.');
        break;
      }
    }
    const out: string[] = [];
    let k = 0;
    for (const f of this.from) {
      if (f === '*') out.push(captured[k++] ?? '*');
      else if (f === '>') out.push(rest);
      else out.push(f);
    }
    return out.join('.');
  }
}

// ---- a message under another subject ---------------------------------------------------

/** m with another subject and reply: the same payload bytes, a new argument line. */
export class MappedMessage implements PublishedMessage {
  readonly argBuf: Buffer;
  readonly subjectStart = 0;
  readonly subjectEnd: number;
  readonly replyStart: number;
  readonly replyEnd: number;
  readonly sizeStart: number;
  readonly sizeEnd: number;
  readonly hdr: number;
  readonly hdrStart: number;
  readonly hdrEnd: number;
  readonly size: number;
  readonly payload: Buffer;
  readonly payloadStart: number;
  readonly payloadEnd: number;

  constructor(m: PublishedMessage, subject: string, reply: string | null) {
    let args = subject;
    this.subjectEnd = subject.length;
    if (reply !== null) {
      this.replyStart = args.length + 1;
      args += ' ' + reply;
      this.replyEnd = args.length;
    } else {
      this.replyStart = -1;
      this.replyEnd = -1;
    }
    if (m.hdr >= 0) {
      this.hdrStart = args.length + 1;
      args += ' ' + m.argBuf.toString('latin1', m.hdrStart, m.hdrEnd);
      this.hdrEnd = args.length;
    } else {
      this.hdrStart = 0;
      this.hdrEnd = 0;
    }
    this.sizeStart = args.length + 1;
    args += ' ' + m.argBuf.toString('latin1', m.sizeStart, m.sizeEnd);
    this.sizeEnd = args.length;
    this.argBuf = Buffer.from(args, 'latin1');
    this.hdr = m.hdr;
    this.size = m.size;
    this.payload = m.payload;
    this.payloadStart = m.payloadStart;
    this.payloadEnd = m.payloadEnd;
  }
}

// ---- stream imports ------------------------------------------------------------------

/** A stream import, held by the importing account (the reference's streamImport). */
class StreamImport {
  /** `to` with its mapping tokens as `*`: the importer's subjects the import covers. */
  readonly pattern: string;
  /** from has wildcards and is not mapped: the published subject is kept (usePub). */
  readonly usePub: boolean;
  /** from is a literal subject: every message arrives as `to`. */
  readonly literal: boolean;
  /** from onto to (identity for usePub, constant for a literal from). */
  readonly map: SubjectMap;

  constructor(
    readonly exporter: Account,
    /** The subject in the exporting account. */
    readonly from: string,
    /** The subject in the importing account. */
    readonly to: string,
  ) {
    this.pattern = to
      .split('.')
      .map((t) => (MAPPED_TOKEN.test(t) ? '*' : t))
      .join('.');
    this.literal = !hasWildcard(from);
    this.usePub = !this.literal && from === to;
    this.map = new SubjectMap(from, to);
  }

  /**
   * The exporter's subject for the shadow of a subscription on `subject`, or null
   * when the import does not cover it; the reference's addShadowSubscriptions and
   * addShadowSub: the import's `from` for a subscription on `to` or wider, the
   * subscription's own subject mapped back for a narrower one, and for a wildcard
   * subscription that only overlaps `to`, the overlap mapped back.
   */
  shadowSubject(subject: string): string | null {
    if (subject === this.pattern) return this.from;
    if (isSubset(subject, this.pattern)) {
      if (this.usePub) return subject;
      return this.literal ? this.from : this.map.reverse(subject);
    }
    const tokens = subject.split('.');
    const last = tokens.length - 1;
    if (!tokens.includes('*') && tokens[last] !== '>') return null;
    if (isSubset(this.pattern, subject)) return this.from;
    const im = this.pattern.split('.');
    for (let i = 0; i < tokens.length && i < im.length; i++) {
      if (tokens[i] === '*' && im[i] !== '>') tokens[i] = im[i]!;
    }
    if (tokens[last] === '>' && im.length >= tokens.length) {
      tokens[last] = im[last]!;
      for (let i = tokens.length; i < im.length; i++) tokens.push(im[i]!);
    }
    const overlap = tokens.join('.');
    if (!isSubset(overlap, this.pattern)) return null;
    return this.usePub || this.literal ? overlap : this.map.reverse(overlap);
  }
}

/** Never called: a shadow's deliveries go through its ShadowTarget (see Subscription.shadow). */
const SHADOW_HANDLER: InternalHandler = () => undefined;

/**
 * A subscription's stand-in in an exporter's index: it matches the exporter's
 * subjects and delivers to the subscription under the import's subject.
 */
class Shadow implements ShadowTarget {
  /** The shadow subscription, in the exporter's index. */
  readonly sub: Subscription;
  readonly fromRoutes = true;

  constructor(
    /** The importing subscription. */
    readonly of: Subscription,
    readonly im: StreamImport,
    subject: string,
  ) {
    this.sub = new Subscription(of.client, subject, of.queue, of.sid, SHADOW_HANDLER);
    this.sub.shadow = this;
  }

  deliver(m: PublishedMessage): boolean {
    // As the reference: what a service import brought in is not exported again as a
    // stream (pmrMsgImportedFromService).
    if (fromService > 0) return false;
    const subject = m.argBuf.toString('latin1', m.subjectStart, m.subjectEnd);
    const mapped = this.im.map.apply(subject);
    const out =
      mapped === subject
        ? m
        : new MappedMessage(
            m,
            mapped,
            m.replyStart >= 0 ? m.argBuf.toString('latin1', m.replyStart, m.replyEnd) : null,
          );
    const of = this.of;
    if (of.filter !== null && !of.filter.admit(mapped, out)) return false;
    return deliver(of, out);
  }
}

/** Puts a shadow in its exporter's index; interest for the other servers follows. */
function addShadow(shadow: Shadow): boolean {
  const exporter = shadow.im.exporter;
  if (!exporter.sublist.insert(shadow.sub)) return false;
  const cluster = shadow.of.client.server.cluster;
  if (cluster !== null) cluster.localInterest(exporter, shadow.sub, 1);
  return true;
}

function removeShadow(shadow: Shadow): void {
  const sub = shadow.sub;
  if (sub.closed) return;
  sub.closed = true;
  const exporter = shadow.im.exporter;
  exporter.sublist.remove(sub);
  const cluster = shadow.of.client.server.cluster;
  if (cluster !== null) cluster.localInterest(exporter, sub, -1);
}

// ---- services ------------------------------------------------------------------------

class ServiceRoute implements Indexed {
  readonly queue = null;
  constructor(
    /** The local subject, in the importer. */
    readonly subject: string,
    readonly target: Account,
    readonly map: SubjectMap,
    readonly responseType: ResponseType,
  ) {}
}

interface ResponseRoute {
  readonly target: Account;
  readonly reply: string;
  readonly expires: number;
  readonly once: boolean;
}

let depth = 0;
/** Service requests and responses being routed into their target account. */
let fromService = 0;

export class Links implements AccountLinks {
  readonly account: Account;
  /** As importer: imported streams. */
  streams: StreamImport[] | null = null;
  /** As importer: the shadows of this account's subscriptions, by subscription. */
  shadows: Map<Subscription, Shadow[]> | null = null;
  /** As importer: imported services. */
  services: Sublist<ServiceRoute> | null = null;
  /** As exporter: `_R_.` reply subjects leading back to requesters. */
  responses: Map<string, ResponseRoute> | null = null;

  constructor(account: Account) {
    this.account = account;
  }

  route(publisher: Client | null, subject: string, m: PublishedMessage): number {
    if (depth >= MAX_DEPTH) return 0;
    depth++;
    try {
      let delivered = 0;
      if (this.responses !== null && subject.startsWith('_R_.')) {
        delivered += this.routeResponse(publisher, subject, m);
      }
      if (this.services !== null) {
        const routes = this.services.match(subject).psubs;
        if (routes.length > 0) delivered += this.routeService(publisher, subject, m, routes[0]!);
      }
      return delivered;
    } finally {
      depth--;
    }
  }

  subscribed(sub: Subscription): void {
    const imports = this.streams;
    if (imports === null || sub.route !== null || sub.shadow !== null) return;
    let list: Shadow[] | null = null;
    for (const im of imports) {
      const subject = im.shadowSubject(sub.subject);
      if (subject === null) continue;
      const shadow = new Shadow(sub, im, subject);
      if (addShadow(shadow)) (list ??= []).push(shadow);
    }
    if (list !== null) (this.shadows ??= new Map()).set(sub, list);
  }

  unsubscribed(sub: Subscription): void {
    const list = this.shadows?.get(sub);
    if (list === undefined) return;
    this.shadows!.delete(sub);
    for (const shadow of list) removeShadow(shadow);
  }

  /** Shadows for every local subscription already in the account (a reload's new imports). */
  shadowAll(): void {
    if (this.streams === null) return;
    const subs: Subscription[] = [];
    this.account.sublist.forEach((sub) => {
      if (sub.route === null && sub.shadow === null && sub.client.account === this.account) {
        subs.push(sub);
      }
    });
    for (const sub of subs) this.subscribed(sub);
  }

  /** Removes every shadow of this account's subscriptions. */
  unshadowAll(): void {
    const shadows = this.shadows;
    if (shadows === null) return;
    this.shadows = null;
    for (const list of shadows.values()) for (const shadow of list) removeShadow(shadow);
  }

  private routeService(
    publisher: Client | null,
    subject: string,
    m: PublishedMessage,
    r: ServiceRoute,
  ): number {
    const mapped = r.map.apply(subject);
    let reply: string | null = null;
    if (m.replyStart >= 0) {
      reply = '_R_.' + randomBytes(9).toString('base64url');
      const exporter = linksOf(r.target);
      exporter.responses ??= new Map();
      exporter.addResponse(reply, {
        target: this.account,
        reply: m.argBuf.toString('latin1', m.replyStart, m.replyEnd),
        expires: Date.now() + RESPONSE_TTL,
        once: r.responseType === 'singleton',
      });
    }
    fromService++;
    try {
      return r.target.route(publisher, mapped, new MappedMessage(m, mapped, reply));
    } finally {
      fromService--;
    }
  }

  addResponse(reply: string, route: ResponseRoute): void {
    const map = this.responses!;
    map.set(reply, route);
    if (map.size > RESPONSES_MAX) {
      const now = Date.now();
      let dropped = 0;
      for (const [key, r] of map) {
        if (r.expires <= now || dropped < RESPONSES_MAX / 10) {
          map.delete(key);
          dropped++;
        } else break;
      }
    }
  }

  private routeResponse(publisher: Client | null, subject: string, m: PublishedMessage): number {
    const map = this.responses!;
    const r = map.get(subject);
    if (r === undefined) return 0;
    if (r.expires <= Date.now()) {
      map.delete(subject);
      return 0;
    }
    if (r.once) map.delete(subject);
    const reply = m.replyStart >= 0 ? m.argBuf.toString('latin1', m.replyStart, m.replyEnd) : null;
    // A message routed on the `_R_.` subject under a name of its own (a JetStream pull
    // delivery: the stream's subject) keeps that name on its way back, as the reference's.
    const wire = otherOwnSubject(m, subject) ?? r.reply;
    fromService++;
    try {
      return r.target.route(publisher, r.reply, new MappedMessage(m, wire, reply));
    } finally {
      fromService--;
    }
  }

  /** Where a response on `reply` (an `_R_.` subject) would go back to now, if anywhere. */
  responseRoute(reply: string): ResponseRoute | undefined {
    const r = this.responses?.get(reply);
    return r !== undefined && r.expires > Date.now() ? r : undefined;
  }

  /** Pending response routes, for tests and monitoring. */
  get pendingResponses(): number {
    return this.responses?.size ?? 0;
  }
}

/**
 * Whether `reply`, an `_R_.` subject of `exporter` (a request that came through a service
 * import), still has a listener where it leads back to: followed through every import
 * on the way, as the reference's trackDownAccountAndInterest, to the requester's own
 * account and reply subject.
 */
export function awaitsResponse(exporter: Account, reply: string): boolean {
  let account = exporter;
  let subject = reply;
  for (let hops = 0; hops < MAX_DEPTH && subject.startsWith('_R_.'); hops++) {
    const r = account.links instanceof Links ? account.links.responseRoute(subject) : undefined;
    if (r === undefined) break;
    account = r.target;
    subject = r.reply;
  }
  if (account === exporter) return false;
  const found = account.sublist.match(subject);
  return found.psubs.length > 0 || found.qsubs.length > 0;
}

/**
 * Routes the response to a request forwarded into `exporter` under `reply` (an `_R_.`
 * subject the caller made) back to `target`, on the requester's `replyTo`, once: the way
 * back of a request that entered `exporter` other than through a configured import (the
 * JetStream API a cluster serves in the system account, src/cluster/js-api.ts).
 */
export function expectResponse(
  exporter: Account,
  reply: string,
  target: Account,
  replyTo: string,
): void {
  const l = linksOf(exporter);
  l.responses ??= new Map();
  l.addResponse(reply, { target, reply: replyTo, expires: Date.now() + RESPONSE_TTL, once: true });
}

/** Forgets a way back expectResponse made, when the request went nowhere. */
export function dropResponse(exporter: Account, reply: string): void {
  if (exporter.links instanceof Links) exporter.links.responses?.delete(reply);
}

function linksOf(a: Account): Links {
  if (a.links instanceof Links) return a.links;
  const l = new Links(a);
  a.links = l;
  return l;
}

/** The links being built for `a` (see linkAccounts); nothing is installed yet. */
function stagedLinks(a: Account, staged: Map<Account, Links>): Links {
  let l = staged.get(a);
  if (l === undefined) {
    l = new Links(a);
    staged.set(a, l);
  }
  return l;
}

/**
 * Makes `links` the routes of `accounts`: an account without an entry routes in its
 * own index alone again. Service responses still pending (a request routed before a
 * reload) keep their way back, as the reference carries its reverse-response map
 * over to the reloaded account. The subscriptions already there get the shadows of
 * the new stream imports in place of the old ones.
 */
export function installLinks(
  accounts: Iterable<Account>,
  links: ReadonlyMap<Account, Links>,
): void {
  const replaced: Links[] = [];
  const installed: Links[] = [];
  for (const a of accounts) {
    const previous = a.links instanceof Links ? a.links : null;
    const before = previous?.responses ?? null;
    let next: Links | null = links.get(a) ?? null;
    if (before !== null && before.size > 0) {
      next ??= new Links(a);
      next.responses = before;
    }
    a.links = next;
    if (next === previous) continue;
    if (previous !== null) replaced.push(previous);
    if (next !== null) installed.push(next);
  }
  // The new shadows first, then the old ones go: a subject both have stays wanted
  // throughout, so the other servers see no interest come and go.
  for (const l of installed) l.shadowAll();
  for (const l of replaced) l.unshadowAll();
}

// ---- wiring exports and imports -----------------------------------------------------

/** An export or import the configuration cannot have; the message follows the reference. */
export class LinkError extends Error {}

/**
 * Checks every import against the exporter's exports and builds the routes into
 * `staged`, one Links per account, for installLinks to put in place: a configuration
 * that a reload may still refuse changes nothing while it is checked.
 * `exports` and `imports` are keyed by account name.
 */
export function linkAccounts(
  accounts: ReadonlyMap<string, Account>,
  exports: ReadonlyMap<string, readonly ExportConfig[]>,
  imports: ReadonlyMap<string, readonly ImportConfig[]>,
  staged: Map<Account, Links>,
): void {
  for (const [name, list] of exports) {
    for (const e of list) {
      if (!isValidSubject(e.subject, true)) {
        throw new LinkError(
          `Error adding ${e.kind} export ${JSON.stringify(e.subject)}: invalid subject`,
        );
      }
      for (const a of e.accounts ?? []) {
        if (!accounts.has(a)) {
          throw new LinkError(`${JSON.stringify(a)} account not defined for ${e.kind} export`);
        }
      }
    }
    if (!accounts.has(name)) throw new LinkError(`${JSON.stringify(name)} account not defined`);
  }
  for (const [name, list] of imports) {
    const importer = accounts.get(name);
    if (importer === undefined) throw new LinkError(`${JSON.stringify(name)} account not defined`);
    for (const i of list) {
      const exporter = accounts.get(i.account);
      if (exporter === undefined) {
        throw new LinkError(
          `${JSON.stringify(i.account)} account not defined for ${i.kind} import`,
        );
      }
      if (!isValidSubject(i.subject, true)) {
        throw new LinkError(
          `Error adding ${i.kind} import ${JSON.stringify(i.subject)}: invalid subject`,
        );
      }
      const granted = (exports.get(i.account) ?? []).find(
        (e) =>
          e.kind === i.kind &&
          isSubset(i.subject, e.subject) &&
          (e.accounts === undefined || e.accounts === null || e.accounts.includes(name)),
      );
      if (granted === undefined) {
        throw new LinkError(
          `Error adding ${i.kind} import ${JSON.stringify(i.subject)}: ${i.kind} import not authorized`,
        );
      }
      if (i.kind === 'stream') {
        const prefix = i.prefix ?? '';
        const to = i.to ?? '';
        // As the reference's AddStreamImport: the prefix and a dot, unless it ends in one.
        const local =
          prefix !== ''
            ? `${prefix}${prefix.endsWith('.') ? '' : '.'}${i.subject}`
            : to !== ''
              ? to
              : i.subject;
        if (!isValidSubject(local, true)) {
          throw new LinkError(
            `Error adding stream import ${JSON.stringify(local)}: invalid subject`,
          );
        }
        const imp = stagedLinks(importer, staged);
        (imp.streams ??= []).push(new StreamImport(exporter, i.subject, local));
      } else {
        const local = (i.to ?? '') !== '' ? i.to! : i.subject;
        if (!isValidSubject(local, true)) {
          throw new LinkError(
            `Error adding service import ${JSON.stringify(local)}: invalid subject`,
          );
        }
        // The exporter routes the responses back: it has links from the start (in a
        // cluster, it then wants its `_R_.` subjects from every server).
        stagedLinks(exporter, staged);
        const imp = stagedLinks(importer, staged);
        imp.services ??= new Sublist<ServiceRoute>();
        imp.services.insert(
          new ServiceRoute(
            local,
            exporter,
            new SubjectMap(local, i.subject),
            granted.responseType ?? 'singleton',
          ),
        );
      }
    }
  }
}
