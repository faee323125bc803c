// An account is a subject space of its own: one subscription index, and the routing
// of each published message through it. Users without accounts live in $G.

import type { Client } from './client.js';
import { deliver } from './delivery.js';
import type { PublishedMessage } from './message.js';
import { type PublishTap, underPrefix } from './publish-tap.js';
import { type MatchResult, Sublist } from '../subjects/sublist.js';
import type { RouteSink, Subscription } from './subscription.js';

export const GLOBAL_ACCOUNT = '$G';

/** `jetstream: enabled|disabled` or its limits, as an account's configuration gives it. */
export type AccountJetStreamSetting =
  | boolean
  | {
      readonly maxMemory?: number;
      readonly maxStore?: number;
      readonly maxStreams?: number;
      readonly maxConsumers?: number;
      readonly maxAckPending?: number;
      readonly memoryMaxStreamBytes?: number;
      readonly storeMaxStreamBytes?: number;
      readonly maxBytesRequired?: boolean;
    };

/**
 * Routing beyond the account's own index (src/auth/accounts.ts): service imports to
 * exporters and their responses back, and the shadows of stream imports, which
 * stand for this account's subscriptions in the exporters' indexes.
 */
export interface AccountLinks {
  /** Routes m on to linked accounts; returns how many subscriptions received it. */
  route(publisher: Client | null, subject: string, m: PublishedMessage): number;
  /** A local subscription of this account came: its stream imports' shadows. */
  subscribed(sub: Subscription): void;
  /** A local subscription of this account went: its shadows go too. */
  unsubscribed(sub: Subscription): void;
}

export class Account {
  readonly name: string;
  readonly sublist: Sublist<Subscription>;
  /** Imports and exports; null (the usual case) keeps routing to this index alone. */
  links: AccountLinks | null = null;
  /**
   * Route subscriptions in the index (src/cluster): other servers' interest. While
   * there are none, route() takes the single-server path and never looks for them.
   */
  routeSubs = 0;
  /**
   * The account's JetStream setting from the configuration (src/auth), read by the
   * JetStream layer when it starts; undefined when the account does not say.
   */
  jetstream: AccountJetStreamSetting | undefined = undefined;
  /**
   * In-process subscribers' byte-level shortcuts (publish-tap.ts): JetStream's acks, and
   * ranged subscriptions on `<prefix>.>` (range-tap.ts). Usually none, one or two.
   */
  readonly taps: PublishTap[] = [];
  /** For each tap, the index generation its tapClear was computed for (-1: never). */
  private readonly tapGens: number[] = [];
  private readonly tapClear: boolean[] = [];

  constructor(name: string, options: { sublistCache?: boolean } = {}) {
    this.name = name;
    this.sublist = new Sublist<Subscription>({ cache: options.sublistCache ?? true });
  }

  /**
   * The tap that may take a publish to `b[start, end)` in place of routing, or null:
   * the subject lies under its prefix, no route or account link could want it, and the tap
   * stands for every subscription matching the prefix (checked again after each change
   * of the index).
   */
  tapFor(b: Buffer, start: number, end: number): PublishTap | null {
    const taps = this.taps;
    for (let i = 0; i < taps.length; i++) {
      const tap = taps[i]!;
      if (!underPrefix(tap.prefix, b, start, end)) continue;
      if (this.routeSubs !== 0 || this.links !== null) return null;
      const sublist = this.sublist;
      if (this.tapGens[i] !== sublist.genid) {
        this.tapClear[i] = sublist.onlyUnder(tap.tokens, (sub) => tap.stands(sub));
        this.tapGens[i] = sublist.genid;
      }
      return this.tapClear[i]! ? tap : null;
    }
    return null;
  }

  /**
   * Installs a tap. The first tap whose prefix a subject has decides; where prefixes
   * nest, the outer one is never clear (the inner tap's subscription lies under it), so
   * such publishes are routed as usual.
   */
  addTap(tap: PublishTap): void {
    this.taps.push(tap);
    this.tapGens.push(-1);
    this.tapClear.push(false);
  }

  /** Removes a tap (nothing when it is not installed). */
  removeTap(tap: PublishTap): void {
    const i = this.taps.indexOf(tap);
    if (i < 0) return;
    this.taps.splice(i, 1);
    this.tapGens.splice(i, 1);
    this.tapClear.splice(i, 1);
  }

  /**
   * Routes a message to every matching plain subscription and to one member of each
   * queue group; returns how many subscriptions received it. `publisher` is null for
   * messages without a connection of origin. `once`: the subject is a request's reply,
   * unlikely to come again (Sublist.matchOnce).
   */
  route(publisher: Client | null, subject: string, m: PublishedMessage, once = false): number {
    const result = once ? this.sublist.matchOnce(subject) : this.sublist.match(subject);
    if (this.routeSubs !== 0) return this.routeInCluster(publisher, subject, m, result);
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

  /**
   * route() when other servers want messages of this account: a route's
   * subscription marks its route instead of being written to, and after the match
   * the message goes once to each marked route. A queue member is drawn by weight,
   * a route's member standing for as many members as its server has, so a group's
   * load spreads over the cluster as the reference spreads it.
   */
  private routeInCluster(
    publisher: Client | null,
    subject: string,
    m: PublishedMessage,
    result: MatchResult<Subscription>,
  ): number {
    const noEcho = publisher !== null && !publisher.echo;
    let delivered = 0;
    // A route marked, if any, and the frame of its marks.
    let routes: RouteSink | null = null;
    let frame = 0;
    const psubs = result.psubs;
    for (let i = 0; i < psubs.length; i++) {
      const sub = psubs[i]!;
      if (sub.route !== null) {
        if (routes === null) frame = sub.route.open();
        sub.route.mark(frame, null);
        routes = sub.route;
        continue;
      }
      if (noEcho && sub.client === publisher) continue;
      if (sub.filter !== null && !sub.filter.admit(subject, m)) continue;
      if (deliver(sub, m)) delivered++;
    }
    const qsubs = result.qsubs;
    for (let g = 0; g < qsubs.length; g++) {
      const members = qsubs[g]!;
      const n = members.length;
      const first = weightedStart(members);
      for (let k = 0; k < n; k++) {
        let j = first + k;
        if (j >= n) j -= n;
        const sub = members[j]!;
        if (sub.route !== null) {
          if (routes === null) frame = sub.route.open();
          sub.route.mark(frame, sub.queue);
          routes = sub.route;
          break;
        }
        if (noEcho && sub.client === publisher) continue;
        if (sub.filter !== null && !sub.filter.admit(subject, m)) continue;
        if (deliver(sub, m)) {
          delivered++;
          break;
        }
      }
    }
    if (routes !== null) delivered += routes.send(frame, this, subject, m);
    if (this.links !== null) delivered += this.links.route(publisher, subject, m);
    return delivered;
  }
}

/** A member index drawn with probability proportional to the members' weights. */
function weightedStart(members: readonly Subscription[]): number {
  let total = 0;
  for (let i = 0; i < members.length; i++) total += members[i]!.weight;
  let r = Math.random() * total;
  for (let i = 0; i < members.length; i++) {
    r -= members[i]!.weight;
    if (r < 0) return i;
  }
  return members.length - 1;
}
