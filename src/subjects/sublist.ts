// The subscription index: a token trie with `*` and `>` in their own slots and a
// bounded cache of results for literal subjects, patched (not flushed) on every
// insert and remove. Modelled on the reference server's sublist.

import { hasWildcard, isValidSubscribeSubject, subjectMatches } from './validate.js';

/** What the index needs to know of a subscription. */
export interface Indexed {
  readonly subject: string;
  /** Queue group name, or null for a plain subscription. */
  readonly queue: string | null;
}

/** Subscriptions matching one subject: every plain one, and each queue group's members. */
export interface MatchResult<S extends Indexed> {
  readonly psubs: readonly S[];
  readonly qsubs: readonly (readonly S[])[];
}

interface Node<S extends Indexed> {
  next: Level<S> | null;
  psubs: S[];
  qsubs: Map<string, S[]> | null;
}

interface Level<S extends Indexed> {
  nodes: Map<string, Node<S>>;
  pwc: Node<S> | null;
  fwc: Node<S> | null;
}

/** Reference values: at most 1024 cached subjects, swept back to 512. */
const CACHE_MAX = 1024;
const CACHE_SWEEP_TO = 512;

function newLevel<S extends Indexed>(): Level<S> {
  return { nodes: new Map(), pwc: null, fwc: null };
}

function newNode<S extends Indexed>(): Node<S> {
  return { next: null, psubs: [], qsubs: null };
}

export interface SublistStats {
  numSubscriptions: number;
  numCache: number;
  numInserts: number;
  numRemoves: number;
  numMatches: number;
  cacheHitRate: number;
  maxFanout: number;
  avgFanout: number;
}

export class Sublist<S extends Indexed> {
  private readonly root: Level<S> = newLevel();
  private readonly cache = new Map<string, MatchResult<S>>();
  /** matchUncached's scratch: a subject's tokens, and the queue groups found. */
  private readonly tokens: string[] = [];
  private readonly queues = new Map<string, S[]>();
  private readonly cacheEnabled: boolean;
  private count = 0;
  /** Bumped on every change, so per-connection caches can tell they are stale. */
  genid = 0;
  /** matchOnce's last subject, its answer, and the genid it was found under. */
  private onceSubject = '';
  private onceResult: MatchResult<S> | null = null;
  private onceGen = -1;
  private inserts = 0;
  private removes = 0;
  private matches = 0;
  private cacheHits = 0;

  constructor(options: { cache?: boolean } = {}) {
    this.cacheEnabled = options.cache ?? true;
  }

  get size(): number {
    return this.count;
  }

  /** Adds a subscription; false when its subject is not a valid subscription subject. */
  insert(sub: S): boolean {
    const subject = sub.subject;
    if (!isValidSubscribeSubject(subject)) return false;
    let level = this.root;
    let node: Node<S> | null = null;
    let start = 0;
    const n = subject.length;
    while (start <= n) {
      let end = subject.indexOf('.', start);
      if (end < 0) end = n;
      const token = subject.substring(start, end);
      if (token === '*') {
        node = level.pwc ??= newNode();
      } else if (token === '>') {
        node = level.fwc ??= newNode();
      } else {
        node = level.nodes.get(token) ?? null;
        if (node === null) {
          node = newNode();
          level.nodes.set(token, node);
        }
      }
      start = end + 1;
      if (start <= n) level = node.next ??= newLevel();
    }
    if (node === null) return false;
    if (sub.queue === null) {
      node.psubs.push(sub);
    } else {
      node.qsubs ??= new Map();
      const members = node.qsubs.get(sub.queue);
      if (members === undefined) node.qsubs.set(sub.queue, [sub]);
      else members.push(sub);
    }
    this.count++;
    this.inserts++;
    this.genid++;
    this.patchCacheOnInsert(sub);
    return true;
  }

  /** Removes a subscription; false when it was not in the index. */
  remove(sub: S): boolean {
    const subject = sub.subject;
    const path: { level: Level<S>; token: string; node: Node<S> }[] = [];
    let level: Level<S> | null = this.root;
    let start = 0;
    const n = subject.length;
    let node: Node<S> | null = null;
    while (start <= n) {
      if (level === null) return false;
      let end = subject.indexOf('.', start);
      if (end < 0) end = n;
      const token = subject.substring(start, end);
      if (token === '*') node = level.pwc;
      else if (token === '>') node = level.fwc;
      else node = level.nodes.get(token) ?? null;
      if (node === null) return false;
      path.push({ level, token, node });
      level = node.next;
      start = end + 1;
    }
    if (node === null) return false;
    if (!removeFromNode(node, sub)) return false;
    // Prune empty nodes from the leaf up, so a churn of unique subjects leaves no residue.
    for (let i = path.length - 1; i >= 0; i--) {
      const step = path[i]!;
      if (!isEmptyNode(step.node)) break;
      if (step.token === '*') step.level.pwc = null;
      else if (step.token === '>') step.level.fwc = null;
      else step.level.nodes.delete(step.token);
      if (i > 0) {
        const parent = path[i - 1]!.node;
        if (parent.next !== null && isEmptyLevel(parent.next)) parent.next = null;
      }
    }
    this.count--;
    this.removes++;
    this.genid++;
    // The genid already voids matchOnce's answer; let go of the subscription it may hold.
    this.onceResult = null;
    this.patchCacheOnRemove(sub);
    return true;
  }

  /** Every subscription matching a literal subject. The result must not be mutated. */
  match(subject: string): MatchResult<S> {
    this.matches++;
    const cached = this.cache.get(subject);
    if (cached !== undefined) {
      this.cacheHits++;
      return cached;
    }
    const result = this.matchUncached(subject);
    if (this.cacheEnabled) {
      this.cache.set(subject, result);
      if (this.cache.size > CACHE_MAX) this.sweepCache();
    }
    return result;
  }

  /**
   * match() for a subject that is unlikely to come again (a request's reply subject,
   * answered once): the cache is neither asked nor filled, so unique subjects cost no
   * insertion and no sweep, and do not push out the results of subjects that repeat.
   */
  matchOnce(subject: string): MatchResult<S> {
    this.matches++;
    // A publisher's replies often all go to its one inbox (an async JetStream publisher's
    // PubAcks, a streaming client's acks): the last answer serves again until the index
    // changes, with no place taken in the cache.
    const last = this.onceResult;
    if (last !== null && subject === this.onceSubject && this.onceGen === this.genid) return last;
    const result = this.matchUncached(subject);
    this.onceSubject = subject;
    this.onceResult = result;
    this.onceGen = this.genid;
    return result;
  }

  /**
   * Whether every subscription that can match a subject beginning with the literal
   * tokens `prefix` passes `allowed`: none sits on a wildcard along the prefix, and all
   * below it pass. A publish tap (src/server/publish-tap.ts) asks, once per change of
   * the index, whether it may stand for routing there.
   */
  onlyUnder(prefix: readonly string[], allowed: (sub: S) => boolean): boolean {
    let level: Level<S> | null = this.root;
    for (const token of prefix) {
      if (level === null) return true;
      if (!isBare(level.pwc) || !isBare(level.fwc)) return false;
      const node = level.nodes.get(token);
      if (node === undefined) return true;
      level = node.next;
    }
    if (level === null) return true;
    let ok = true;
    walkLevel(level, (sub) => {
      if (ok && !allowed(sub)) ok = false;
    });
    return ok;
  }

  /** Visits every subscription (monitoring, shutdown). */
  forEach(visit: (sub: S) => void): void {
    walkLevel(this.root, visit);
  }

  stats(): SublistStats {
    let maxFanout = 0;
    let totalFanout = 0;
    for (const r of this.cache.values()) {
      let fanout = r.psubs.length;
      for (const q of r.qsubs) fanout += q.length;
      if (fanout > maxFanout) maxFanout = fanout;
      totalFanout += fanout;
    }
    return {
      numSubscriptions: this.count,
      numCache: this.cache.size,
      numInserts: this.inserts,
      numRemoves: this.removes,
      numMatches: this.matches,
      cacheHitRate: this.matches === 0 ? 0 : this.cacheHits / this.matches,
      maxFanout,
      avgFanout: this.cache.size === 0 ? 0 : totalFanout / this.cache.size,
    };
  }

  private matchUncached(subject: string): MatchResult<S> {
    const psubs: S[] = [];
    const qsubs: S[][] = [];
    // Subjects that miss the cache are often unique (replies, JetStream acks): the
    // tokens go into a reused array and the groups into a reused map.
    const tokens = this.tokens;
    tokens.length = 0;
    const n = subject.length;
    for (let start = 0; ;) {
      let end = subject.indexOf('.', start);
      if (end < 0) end = n;
      // An empty token anywhere matches nothing, as in the reference.
      if (end === start) return { psubs, qsubs };
      tokens.push(subject.substring(start, end));
      if (end === n) break;
      start = end + 1;
    }
    const queues = this.queues;
    matchLevel(this.root, tokens, 0, psubs, queues);
    if (queues.size > 0) {
      for (const members of queues.values()) qsubs.push(members);
      queues.clear();
    }
    return { psubs, qsubs };
  }

  private patchCacheOnInsert(sub: S): void {
    if (this.cache.size === 0) return;
    const wildcard = hasWildcard(sub.subject);
    if (!wildcard) {
      const r = this.cache.get(sub.subject);
      if (r !== undefined) this.cache.set(sub.subject, withSub(r, sub));
      return;
    }
    for (const [subject, r] of this.cache) {
      if (subjectMatches(subject, sub.subject)) this.cache.set(subject, withSub(r, sub));
    }
  }

  private patchCacheOnRemove(sub: S): void {
    if (this.cache.size === 0) return;
    if (!hasWildcard(sub.subject)) {
      this.cache.delete(sub.subject);
      return;
    }
    for (const subject of this.cache.keys()) {
      if (subjectMatches(subject, sub.subject)) this.cache.delete(subject);
    }
  }

  private sweepCache(): void {
    // Map iteration order is insertion order, so this drops the oldest entries.
    let excess = this.cache.size - CACHE_SWEEP_TO;
    for (const key of this.cache.keys()) {
      if (excess-- <= 0) break;
      this.cache.delete(key);
    }
  }
}

/** A copy of a cached result with one more subscription: results are shared and immutable. */
function withSub<S extends Indexed>(r: MatchResult<S>, sub: S): MatchResult<S> {
  if (sub.queue === null) return { psubs: [...r.psubs, sub], qsubs: r.qsubs };
  const qsubs: S[][] = [];
  let placed = false;
  for (const members of r.qsubs) {
    if (!placed && members[0]?.queue === sub.queue) {
      qsubs.push([...members, sub]);
      placed = true;
    } else {
      qsubs.push(members as S[]);
    }
  }
  if (!placed) qsubs.push([sub]);
  return { psubs: r.psubs, qsubs };
}

function matchLevel<S extends Indexed>(
  level: Level<S>,
  tokens: readonly string[],
  index: number,
  psubs: S[],
  queues: Map<string, S[]>,
): void {
  let node: Node<S> | null = null;
  let current: Level<S> | null = level;
  for (let i = index; i < tokens.length; i++) {
    if (current === null) return;
    if (current.fwc !== null) addNode(current.fwc, psubs, queues);
    if (current.pwc !== null) {
      if (i + 1 === tokens.length) addNode(current.pwc, psubs, queues);
      else if (current.pwc.next !== null)
        matchLevel(current.pwc.next, tokens, i + 1, psubs, queues);
    }
    node = current.nodes.get(tokens[i]!) ?? null;
    if (node === null) return;
    current = node.next;
  }
  if (node !== null) addNode(node, psubs, queues);
}

function addNode<S extends Indexed>(node: Node<S>, psubs: S[], queues: Map<string, S[]>): void {
  const own = node.psubs;
  for (let i = 0; i < own.length; i++) psubs.push(own[i]!);
  if (node.qsubs !== null) addQueues(node.qsubs, queues);
}

/**
 * addNode's queue groups, a function of its own: the Map iteration (an iterator and a
 * destructuring per group) stays out of the code V8 optimises for every uncached match,
 * such as each reply subject's, where there is rarely a group.
 */
function addQueues<S extends Indexed>(qsubs: Map<string, S[]>, queues: Map<string, S[]>): void {
  for (const [name, members] of qsubs) {
    const group = queues.get(name);
    if (group === undefined) queues.set(name, members.slice());
    else for (const m of members) group.push(m);
  }
}

function removeFromNode<S extends Indexed>(node: Node<S>, sub: S): boolean {
  if (sub.queue === null) {
    const i = node.psubs.indexOf(sub);
    if (i < 0) return false;
    node.psubs.splice(i, 1);
    return true;
  }
  const members = node.qsubs?.get(sub.queue);
  if (members === undefined) return false;
  const i = members.indexOf(sub);
  if (i < 0) return false;
  members.splice(i, 1);
  if (members.length === 0) node.qsubs!.delete(sub.queue);
  return true;
}

function isEmptyNode<S extends Indexed>(node: Node<S>): boolean {
  return (
    node.psubs.length === 0 &&
    (node.qsubs === null || node.qsubs.size === 0) &&
    (node.next === null || isEmptyLevel(node.next))
  );
}

function isEmptyLevel<S extends Indexed>(level: Level<S>): boolean {
  return level.nodes.size === 0 && level.pwc === null && level.fwc === null;
}

/** A wildcard slot that holds no subscription at or below it. */
function isBare<S extends Indexed>(node: Node<S> | null): boolean {
  if (node === null) return true;
  let none = true;
  walkNode(node, () => {
    none = false;
  });
  return none;
}

function walkLevel<S extends Indexed>(level: Level<S>, visit: (sub: S) => void): void {
  const nodes: Node<S>[] = [...level.nodes.values()];
  if (level.pwc !== null) nodes.push(level.pwc);
  if (level.fwc !== null) nodes.push(level.fwc);
  for (const node of nodes) walkNode(node, visit);
}

function walkNode<S extends Indexed>(node: Node<S>, visit: (sub: S) => void): void {
  for (const s of node.psubs) visit(s);
  if (node.qsubs !== null)
    for (const members of node.qsubs.values()) for (const s of members) visit(s);
  if (node.next !== null) walkLevel(node.next, visit);
}
