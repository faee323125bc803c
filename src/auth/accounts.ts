// Accounts beyond their own subject space: stream and service exports and imports,
// as the reference's `accounts { A: { exports, imports } }` (and account JWTs).
//
// A publish is routed in its own account first, exactly as without accounts; only
// an account with links (Account.links, null otherwise) then routes on:
// - stream: an exporter routes a message whose subject an importer imported into
//   the importer's index, under the subject the import maps it to (prefix or to);
// - service: an importer routes a request on an imported subject into the exporter,
//   with the reply subject replaced by a fresh `_R_.` subject in the exporter;
// - response: the exporter routes a publish on such an `_R_.` subject back into the
//   importer, on the requester's original reply subject (once for singleton
//   services, until expiry for stream and chunked ones).

import { randomBytes } from 'node:crypto';
import type { Account, AccountLinks } from '../server/account.js';
import type { Client } from '../server/client.js';
import type { PublishedMessage } from '../server/message.js';
import { Sublist, type Indexed } from '../subjects/sublist.js';
import { isValidSubject } from '../subjects/validate.js';
import { isSubset } from './permissions.js';

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
      const m = /^(?:\$(\d+)|\{\{\s*wildcard\s*\(\s*(\d+)\s*\)\s*\}\})$/.exec(t);
      if (m !== null) out.push(captured[Number(m[1] ?? m[2]) - 1] ?? '');
      else if (t === '*') out.push(captured[next++] ?? '');
      else if (t === '>') out.push(rest);
      else out.push(t);
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

// ---- routes ------------------------------------------------------------------------

class StreamRoute implements Indexed {
  readonly queue = null;
  constructor(
    /** The imported subject, in the exporter. */
    readonly subject: string,
    readonly target: Account,
    readonly map: SubjectMap,
  ) {}
}

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

export class Links implements AccountLinks {
  readonly account: Account;
  /** As exporter: imported streams. */
  streams: Sublist<StreamRoute> | null = null;
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
      // Imported streams are not exported again: one hop, so no export can loop.
      if (this.streams !== null && depth === 1) {
        for (const r of this.streams.match(subject).psubs) {
          const reply =
            m.replyStart >= 0 ? m.argBuf.toString('latin1', m.replyStart, m.replyEnd) : null;
          const mapped = r.map.apply(subject);
          delivered += r.target.route(publisher, mapped, new MappedMessage(m, mapped, reply));
        }
      }
      return delivered;
    } finally {
      depth--;
    }
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
    return r.target.route(publisher, mapped, new MappedMessage(m, mapped, reply));
  }

  private addResponse(reply: string, route: ResponseRoute): void {
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
    return r.target.route(publisher, r.reply, new MappedMessage(m, r.reply, reply));
  }

  /** Pending response routes, for tests and monitoring. */
  get pendingResponses(): number {
    return this.responses?.size ?? 0;
  }
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
 * over to the reloaded account.
 */
export function installLinks(
  accounts: Iterable<Account>,
  links: ReadonlyMap<Account, Links>,
): void {
  for (const a of accounts) {
    const before = a.links instanceof Links ? a.links.responses : null;
    let next: Links | null = links.get(a) ?? null;
    if (before !== null && before.size > 0) {
      next ??= new Links(a);
      next.responses = before;
    }
    a.links = next;
  }
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
        const local = prefix !== '' ? `${prefix}.${i.subject}` : to !== '' ? to : i.subject;
        if (!isValidSubject(local, true)) {
          throw new LinkError(
            `Error adding stream import ${JSON.stringify(local)}: invalid subject`,
          );
        }
        const exp = stagedLinks(exporter, staged);
        exp.streams ??= new Sublist<StreamRoute>();
        exp.streams.insert(new StreamRoute(i.subject, importer, new SubjectMap(i.subject, local)));
      } else {
        const local = (i.to ?? '') !== '' ? i.to! : i.subject;
        if (!isValidSubject(local, true)) {
          throw new LinkError(
            `Error adding service import ${JSON.stringify(local)}: invalid subject`,
          );
        }
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
