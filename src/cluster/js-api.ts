// JetStream through a server that does not run it. In a cluster, nats-server's
// JetStream servers serve the API in the system account, and a server without
// JetStream imports `$JS.API.>` from there into every account that has JetStream (into
// $G when no accounts are configured), so that its clients reach the servers that
// have it. A wirebus node without JetStream does the same, and so sits in a cluster of
// nats-server -js nodes as one of theirs would. As nats-server 2.9.10 carries a request
// (recorded with -DV on a node without JetStream, in a cluster of three with it):
//
//   client <<- PUB $JS.API.INFO _INBOX.x 0
//   routes ->> RS+ $SYS _R_.RQtvV9.>                 (this server's responses, once)
//   routes ->> HMSG $SYS $JS.API.INFO _R_.RQtvV9.Ya7FHv 90 90
//              NATS/1.0␍␊Nats-Request-Info: {"acc":"$G","rtt":2569494,"server":"plain","cluster":"C"}␍␊␍␊
//   routes <<- RMSG $SYS _R_.RQtvV9.Ya7FHv 322      (the meta leader's answer)
//   client ->> MSG _INBOX.x 1 322
//
// The JetStream servers announce `RS+ $SYS $JS.API.>`; the request goes to each, and
// the one whose turn it is answers (the account is the header's `acc`). A consumer's
// MSG.NEXT and a stream's DIRECT.GET stay out of the import, as there: they go in the
// account itself, to the server of the consumer or the stream, which announced them.
//
// Two differences. `rtt` is left out of the header (the import is not told who
// published; the field is optional, the reference's only use is in audit advisories).
// Where no server of the cluster serves the API, the reference's import takes the
// request and nothing answers, so its client times out; here the request is not taken
// and the client gets 503 no responders at once, as from a server without JetStream.

import { dropResponse, expectResponse } from '../auth/accounts.js';
import { setHeader } from '../jetstream/headers.js';
import { goEscapes } from '../monitor/format.js';
import { randomBase62 } from '../protocol/nuid.js';
import { Account, GLOBAL_ACCOUNT } from '../server/account.js';
import type { Client } from '../server/client.js';
import { InternalMessage, type PublishedMessage } from '../server/message.js';
import type { Server } from '../server/server.js';
import { type ShadowTarget, Subscription } from '../server/subscription.js';

const API = '$JS.API.>';
const NEXT = '$JS.API.CONSUMER.MSG.NEXT.';
const DIRECT = '$JS.API.DIRECT.GET.';
const REQUEST_INFO = 'Nats-Request-Info';
const EMPTY = Buffer.alloc(0);

/** Never called: the import's deliveries go through its ShadowTarget. */
const NO_HANDLER = (): void => undefined;

/** The system account's JetStream API, imported into the accounts that have JetStream. */
export class JetStreamApiImport {
  /** `_R_.<token>.`: this server's responses in the system account, as the reference's. */
  readonly replyPrefix = `_R_.${randomBase62(6)}.`;
  private readonly imports = new Map<Account, Subscription>();
  private client: Client | null = null;
  private announced = false;

  constructor(
    private readonly server: Server,
    /** The system account: a configured one, or the reference's own `$SYS`. */
    readonly system: Account,
    private readonly cluster: {
      /** The cluster's name, for the request's client info. */
      readonly name: string;
      /** Tells every server of this server's interest in `subject` of `account`. */
      announce(account: Account, subject: string): void;
    },
  ) {}

  /**
   * Imports the API into the accounts that should have it now and out of those that
   * should not (at start, and after a reload changed the accounts).
   */
  sync(): void {
    const server = this.server;
    const system = this.system;
    let configured = 0;
    for (const a of server.accounts.values()) {
      if (a !== system && a.name !== GLOBAL_ACCOUNT) configured++;
    }
    const want = new Set<Account>();
    for (const a of server.accounts.values()) {
      if (a === system) continue;
      const js = a.jetstream;
      // The reference: an account with JetStream enabled or limits; $G in the simple
      // mixed setup, where it and the system account are the only accounts.
      if ((js !== undefined && js !== false) || (a === server.globalAccount && configured === 0)) {
        want.add(a);
      }
    }
    for (const [a, sub] of this.imports) if (!want.has(a)) this.unimport(a, sub);
    for (const a of want) {
      if (this.imports.has(a)) continue;
      const sub = new Subscription(
        this.internalClient(),
        API,
        null,
        `js-api.${a.name}`,
        NO_HANDLER,
      );
      sub.shadow = new AccountImport(this, a);
      // Not announced to the routes: the other servers have their own import.
      a.sublist.insert(sub);
      this.imports.set(a, sub);
    }
  }

  /** The accounts the API is imported into (monitoring, tests). */
  importers(): Account[] {
    return [...this.imports.keys()];
  }

  /** Forwards a request published in `account` to the servers serving the API. */
  forward(account: Account, m: PublishedMessage): boolean {
    const b = m.argBuf;
    const subject = b.toString('latin1', m.subjectStart, m.subjectEnd);
    if (subject.startsWith(NEXT) || subject.startsWith(DIRECT)) return false;
    const system = this.system;
    if (system.routeSubs === 0) return false;
    const found = system.sublist.match(subject);
    if (found.psubs.length === 0 && found.qsubs.length === 0) return false;
    let reply: string | null = null;
    if (m.replyStart >= 0) {
      // As the reference: the way back is announced with the first request, ahead of it
      // on every route (a cluster that never uses JetStream never sees it).
      if (!this.announced) {
        this.announced = true;
        this.cluster.announce(system, this.replyPrefix + '>');
      }
      reply = this.replyPrefix + randomBase62(6);
      expectResponse(system, reply, account, b.toString('latin1', m.replyStart, m.replyEnd));
    }
    const start = m.payloadStart;
    const hdr = m.hdr >= 0 ? m.payload.subarray(start, start + m.hdr) : EMPTY;
    const data = m.payload.subarray(start + (m.hdr >= 0 ? m.hdr : 0), m.payloadEnd);
    const headers = setHeader(hdr, REQUEST_INFO, this.clientInfo(account));
    const n = system.route(null, subject, new InternalMessage().set(subject, reply, headers, data));
    if (n === 0 && reply !== null) dropResponse(system, reply);
    return n > 0;
  }

  /** The reference's ClientInfo for a request through a system import (not shared). */
  private clientInfo(account: Account): string {
    const server = this.server;
    return goEscapes(
      `{"acc":${JSON.stringify(account.name)},"server":${JSON.stringify(server.name)},` +
        `"cluster":${JSON.stringify(this.cluster.name)}}`,
    );
  }

  private internalClient(): Client {
    this.client ??= this.server.createInternalClient('JetStream API import', this.system);
    return this.client;
  }

  /** Takes the API out of every account (the server stops). */
  close(): void {
    for (const [a, sub] of this.imports) this.unimport(a, sub);
  }

  private unimport(a: Account, sub: Subscription): void {
    sub.closed = true;
    a.sublist.remove(sub);
    this.imports.delete(a);
  }
}

/** The import in one account: what its subscription matches goes to the system account. */
class AccountImport implements ShadowTarget {
  readonly fromRoutes = false;

  constructor(
    private readonly owner: JetStreamApiImport,
    private readonly account: Account,
  ) {}

  deliver(m: PublishedMessage): boolean {
    return this.owner.forward(this.account, m);
  }
}

/** The system account as the routes know it: a configured one, else the reference's `$SYS`. */
export function systemAccountFor(server: Server): Account | null {
  const o = server.options;
  if (o.noSystemAccount) return null;
  return (
    server.accounts.get(o.systemAccount) ??
    new Account(o.systemAccount, { sublistCache: !o.disableSublistCache })
  );
}
