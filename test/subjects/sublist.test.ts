// The subscription index (spec §4.3, §4.4, §5): matching, queue groups, the bounded
// results cache and its patching, pruning on remove, checked against a brute-force
// oracle.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Sublist, type MatchResult } from '../../src/subjects/sublist.js';
import { isValidSubscribeSubject } from '../../src/subjects/validate.js';
import { bruteMatches } from './brute.js';

interface Sub {
  readonly id: number;
  readonly subject: string;
  readonly queue: string | null;
}

let nextId = 1;
const mk = (subject: string, queue: string | null = null): Sub => ({
  id: nextId++,
  subject,
  queue,
});

interface Shape {
  psubs: number[];
  qsubs: Record<string, number[]>;
}

/** A result as sorted ids: delivery order is not part of the contract (§0.15). */
function shape(r: MatchResult<Sub>): Shape {
  const qsubs: Record<string, number[]> = {};
  for (const group of r.qsubs) {
    assert.ok(group.length > 0, 'empty queue group in a result');
    const name = group[0]!.queue;
    assert.ok(name !== null, 'plain subscription in a queue group');
    for (const m of group) assert.equal(m.queue, name, 'mixed queue names in one group');
    assert.ok(!(name in qsubs), `queue group ${name} appears twice`);
    qsubs[name] = group.map((m) => m.id).sort((a, b) => a - b);
  }
  for (const s of r.psubs) assert.equal(s.queue, null, 'queue subscription among psubs');
  return { psubs: r.psubs.map((s) => s.id).sort((a, b) => a - b), qsubs };
}

function bruteShape(subs: Iterable<Sub>, subject: string): Shape {
  const psubs: number[] = [];
  const qsubs: Record<string, number[]> = {};
  for (const s of subs) {
    if (!bruteMatches(subject, s.subject)) continue;
    if (s.queue === null) psubs.push(s.id);
    else (qsubs[s.queue] ??= []).push(s.id);
  }
  psubs.sort((a, b) => a - b);
  for (const ids of Object.values(qsubs)) ids.sort((a, b) => a - b);
  return { psubs, qsubs };
}

interface TrieLevel {
  nodes: Map<string, { next: TrieLevel | null }>;
  pwc: unknown;
  fwc: unknown;
}

/** The trie's root level: the only way to see that removes leave no empty nodes behind. */
function root(sl: Sublist<Sub>): TrieLevel {
  return (sl as unknown as { root: TrieLevel }).root;
}

function assertEmptyTrie(sl: Sublist<Sub>): void {
  const r = root(sl);
  assert.equal(r.nodes.size, 0, `nodes left: ${[...r.nodes.keys()].join(',')}`);
  assert.equal(r.pwc, null);
  assert.equal(r.fwc, null);
  assert.equal(sl.size, 0);
}

describe('sublist: insert', () => {
  test('refuses invalid subscription subjects', () => {
    const sl = new Sublist<Sub>();
    for (const s of ['', 'foo..bar', '.foo', 'foo.', 'foo.>.bar', '>.foo']) {
      assert.equal(sl.insert(mk(s)), false, s);
    }
    assert.equal(sl.size, 0);
    assert.equal(sl.stats().numInserts, 0);
    assertEmptyTrie(sl);
  });

  test('accepts wildcards inside tokens as literals', () => {
    const sl = new Sublist<Sub>();
    const a = mk('foo*');
    const b = mk('foo.*bar');
    assert.ok(sl.insert(a));
    assert.ok(sl.insert(b));
    assert.deepEqual(shape(sl.match('foo*')), { psubs: [a.id], qsubs: {} });
    assert.deepEqual(shape(sl.match('foox')), { psubs: [], qsubs: {} });
    assert.deepEqual(shape(sl.match('foo.*bar')), { psubs: [b.id], qsubs: {} });
    assert.deepEqual(shape(sl.match('foo.xbar')), { psubs: [], qsubs: {} });
  });
});

describe('sublist: matching', () => {
  const sl = new Sublist<Sub>();
  const subs = Object.fromEntries(
    ['foo', 'foo.bar', 'foo.*', 'foo.>', '>', '*', '*.bar', 'foo.*.baz', '*.*', 'bar.>'].map(
      (s) => [s, mk(s)],
    ),
  );
  for (const s of Object.values(subs)) sl.insert(s);
  const ids = (...names: string[]) => names.map((n) => subs[n]!.id).sort((a, b) => a - b);
  const check = (subject: string, names: string[]) => {
    assert.deepEqual(shape(sl.match(subject)), { psubs: ids(...names), qsubs: {} }, subject);
    assert.deepEqual(shape(sl.match(subject)), bruteShape(Object.values(subs), subject), subject);
  };

  test('* takes one token, > one or more', () => {
    check('foo', ['foo', '>', '*']);
    check('foo.bar', ['foo.bar', 'foo.*', 'foo.>', '>', '*.bar', '*.*']);
    check('foo.x.baz', ['foo.*.baz', 'foo.>', '>']);
    check('foo.x.y', ['foo.>', '>']);
    check('bar', ['>', '*']);
    check('bar.x', ['bar.>', '>', '*.*']);
    check('zip.bar', ['>', '*.bar', '*.*']);
    check('$foo.bar', ['>', '*.bar', '*.*']);
  });

  test('foo.> does not match foo', () => {
    const only = new Sublist<Sub>();
    only.insert(mk('foo.>'));
    assert.equal(only.match('foo').psubs.length, 0);
    assert.equal(only.match('foo.a').psubs.length, 1);
    assert.equal(only.match('foo.a.b').psubs.length, 1);
  });

  test('empty tokens match nothing, not even >', () => {
    for (const s of ['foo..bar', '.foo', 'foo.', '.', '', '..']) check(s, []);
  });

  test('a literal * or > published without pedantic reaches wildcard subscriptions only', () => {
    check('foo.*', ['foo.*', 'foo.>', '>', '*.*']);
    check('foo.>', ['foo.*', 'foo.>', '>', '*.*']);
    check('*', ['>', '*']);
    check('>', ['>', '*']);
    check('*.bar', ['*.bar', '>', '*.*']);
  });

  test('subjects are case-sensitive', () => {
    check('Foo', ['>', '*']);
  });
});

describe('sublist: queue groups', () => {
  test('members are grouped per queue name, across nodes', () => {
    const sl = new Sublist<Sub>();
    const plain = mk('foo.bar');
    const q1a = mk('foo.bar', 'q1');
    const q1b = mk('foo.*', 'q1');
    const q1c = mk('>', 'q1');
    const q2 = mk('foo.>', 'q2');
    const other = mk('foo.baz', 'q1');
    for (const s of [plain, q1a, q1b, q1c, q2, other]) sl.insert(s);
    assert.deepEqual(shape(sl.match('foo.bar')), {
      psubs: [plain.id],
      qsubs: { q1: [q1a.id, q1b.id, q1c.id], q2: [q2.id] },
    });
    // Queue names are exact bytes.
    const upper = mk('foo.bar', 'Q1');
    sl.insert(upper);
    assert.deepEqual(Object.keys(shape(sl.match('foo.bar')).qsubs).sort(), ['Q1', 'q1', 'q2']);
  });

  test('a cached result is patched into the right group', () => {
    const sl = new Sublist<Sub>();
    const a = mk('foo', 'q1');
    sl.insert(a);
    sl.match('foo');
    const b = mk('foo', 'q1');
    const c = mk('*', 'q2');
    const d = mk('>', 'q1');
    sl.insert(b);
    sl.insert(c);
    sl.insert(d);
    assert.deepEqual(shape(sl.match('foo')), {
      psubs: [],
      qsubs: { q1: [a.id, b.id, d.id], q2: [c.id] },
    });
    assert.equal(sl.stats().numCache, 1);
  });
});

describe('sublist: the results cache', () => {
  test('a repeated match is served from the cache', () => {
    const sl = new Sublist<Sub>();
    sl.insert(mk('foo'));
    const first = sl.match('foo');
    assert.equal(sl.match('foo'), first);
    const st = sl.stats();
    assert.equal(st.numMatches, 2);
    assert.equal(st.numCache, 1);
    assert.equal(st.cacheHitRate, 0.5);
  });

  test('a match made once (a reply subject) neither reads nor fills the cache', () => {
    const sl = new Sublist<Sub>();
    const inbox = mk('_INBOX.abc.*');
    sl.insert(inbox);
    sl.insert(mk('_INBOX.abc.1'));
    for (let i = 1; i <= 2000; i++) {
      const want = i === 1 ? 2 : 1;
      assert.equal(sl.matchOnce(`_INBOX.abc.${i}`).psubs.length, want);
    }
    assert.equal(sl.stats().numCache, 0);
    const cached = sl.match('_INBOX.abc.1');
    assert.equal(sl.stats().numCache, 1);
    assert.deepEqual(shape(sl.matchOnce('_INBOX.abc.1')), shape(cached));
    assert.notEqual(sl.matchOnce('_INBOX.abc.1'), cached);
    assert.equal(sl.stats().numMatches, 2003);
  });

  test('a reply subject matched once again in a row gets the same answer until the index changes', () => {
    const sl = new Sublist<Sub>();
    const inbox = mk('_INBOX.abc.*');
    sl.insert(inbox);
    const first = sl.matchOnce('_INBOX.abc.x');
    assert.equal(sl.matchOnce('_INBOX.abc.x'), first);
    assert.deepEqual(shape(first), { psubs: [inbox.id], qsubs: {} });
    const exact = mk('_INBOX.abc.x');
    sl.insert(exact);
    assert.deepEqual(shape(sl.matchOnce('_INBOX.abc.x')), {
      psubs: [inbox.id, exact.id],
      qsubs: {},
    });
    assert.equal(sl.matchOnce('_INBOX.abc.y').psubs.length, 1);
    sl.remove(inbox);
    assert.deepEqual(shape(sl.matchOnce('_INBOX.abc.x')), { psubs: [exact.id], qsubs: {} });
    sl.remove(exact);
    assert.deepEqual(shape(sl.matchOnce('_INBOX.abc.x')), { psubs: [], qsubs: {} });
    assert.equal(sl.stats().numCache, 0);
  });

  test('inserts patch matching entries and leave the rest alone', () => {
    const sl = new Sublist<Sub>();
    const a = mk('foo.bar');
    sl.insert(a);
    const fooBar = sl.match('foo.bar');
    const fooBaz = sl.match('foo.baz');
    sl.match('zip');
    const w = mk('foo.*');
    sl.insert(w);
    assert.equal(sl.stats().numCache, 3, 'patched, not flushed');
    assert.deepEqual(shape(sl.match('foo.bar')), { psubs: [a.id, w.id], qsubs: {} });
    assert.deepEqual(shape(sl.match('foo.baz')), { psubs: [w.id], qsubs: {} });
    assert.deepEqual(shape(sl.match('zip')), { psubs: [], qsubs: {} });
    const lit = mk('foo.bar');
    sl.insert(lit);
    assert.deepEqual(shape(sl.match('foo.bar')), { psubs: [a.id, w.id, lit.id], qsubs: {} });
    assert.deepEqual(shape(sl.match('foo.baz')), { psubs: [w.id], qsubs: {} });
    // Results handed out earlier are never changed under their holder.
    assert.deepEqual(shape(fooBar), { psubs: [a.id], qsubs: {} });
    assert.deepEqual(shape(fooBaz), { psubs: [], qsubs: {} });
  });

  test('removes drop exactly the entries the subscription matched', () => {
    const sl = new Sublist<Sub>();
    const a = mk('foo.bar');
    const w = mk('foo.*');
    const x = mk('zip');
    for (const s of [a, w, x]) sl.insert(s);
    for (const s of ['foo.bar', 'foo.baz', 'zip', 'foo.*']) sl.match(s);
    assert.equal(sl.stats().numCache, 4);
    const before = sl.match('foo.bar');
    assert.ok(sl.remove(a));
    assert.equal(sl.stats().numCache, 3);
    assert.deepEqual(shape(sl.match('foo.bar')), { psubs: [w.id], qsubs: {} });
    assert.deepEqual(shape(before), { psubs: [a.id, w.id], qsubs: {} });
    assert.ok(sl.remove(w));
    // foo.bar, foo.baz and the literal foo.* went; zip stayed.
    assert.deepEqual([...cacheKeys(sl)].sort(), ['zip']);
    assert.deepEqual(shape(sl.match('foo.baz')), { psubs: [], qsubs: {} });
    assert.deepEqual(shape(sl.match('zip')), { psubs: [x.id], qsubs: {} });
  });

  test('a cached empty result for a subject with an empty token stays empty', () => {
    // Regression: a new `>` subscription used to be patched into the cached (empty)
    // result of `foo..bar`, so the next publish there was delivered.
    const sl = new Sublist<Sub>();
    for (const s of ['foo..bar', 'foo.', 'a.b..']) sl.match(s);
    for (const p of ['>', 'foo.>', '*.>', 'a.>']) sl.insert(mk(p));
    for (const s of ['foo..bar', 'foo.', 'a.b..']) {
      assert.deepEqual(shape(sl.match(s)), { psubs: [], qsubs: {} }, s);
    }
  });

  test('never holds more than 1024 subjects', () => {
    const sl = new Sublist<Sub>();
    const all: Sub[] = [];
    for (const s of ['>', 'n.*', 'n.7', 'n.7', 'm.>']) {
      const sub = mk(s, s === 'n.7' ? 'q' : null);
      all.push(sub);
      sl.insert(sub);
    }
    for (let i = 0; i < 5000; i++) {
      const subject = `n.${i % 3000}`;
      assert.deepEqual(shape(sl.match(subject)), bruteShape(all, subject), subject);
      assert.ok(sl.stats().numCache <= 1024, `cache at ${sl.stats().numCache}`);
      if (i % 500 === 250) {
        const sub = mk(`n.${i % 7}`);
        all.push(sub);
        sl.insert(sub);
      }
    }
    assert.ok(sl.stats().numCache > 0);
  });

  test('can be turned off', () => {
    const sl = new Sublist<Sub>({ cache: false });
    const a = mk('foo.*');
    sl.insert(a);
    assert.deepEqual(shape(sl.match('foo.x')), { psubs: [a.id], qsubs: {} });
    assert.deepEqual(shape(sl.match('foo.x')), { psubs: [a.id], qsubs: {} });
    assert.equal(sl.stats().numCache, 0);
    assert.equal(sl.stats().cacheHitRate, 0);
  });
});

/** The cache's keys, read through the private field: there is no public view of them. */
function cacheKeys(sl: Sublist<Sub>): Iterable<string> {
  return (sl as unknown as { cache: Map<string, unknown> }).cache.keys();
}

describe('sublist: remove', () => {
  test('prunes the trie back to empty and keeps count and stats right', () => {
    const sl = new Sublist<Sub>();
    const subs = ['a.b.c', 'a.b', 'a.*.c', 'a.>', '*.b.>', '>', 'x.y.z.w', 'a.b.c'].map((s, i) =>
      mk(s, i % 3 === 0 ? 'g' : null),
    );
    for (const s of subs) assert.ok(sl.insert(s));
    assert.equal(sl.size, subs.length);
    const gen = sl.genid;
    // Take away the deepest one first: its parents still hold subscriptions.
    assert.ok(sl.remove(subs[0]!));
    assert.ok(sl.genid > gen);
    assert.deepEqual(shape(sl.match('a.b.c')), bruteShape(subs.slice(1), 'a.b.c'));
    assert.equal(sl.remove(subs[0]!), false, 'a second remove finds nothing');
    assert.equal(sl.remove(mk('a.b.c')), false, 'another subscription on the subject');
    assert.equal(sl.remove(mk('no.such.subject')), false);
    assert.equal(sl.remove(mk('foo..bar')), false);
    for (const s of subs.slice(1)) assert.ok(sl.remove(s));
    const st = sl.stats();
    assert.equal(st.numSubscriptions, 0);
    assert.equal(st.numInserts, subs.length);
    assert.equal(st.numRemoves, subs.length);
    assertEmptyTrie(sl);
    let visited = 0;
    sl.forEach(() => visited++);
    assert.equal(visited, 0);
  });

  test('leaves a parent that still has children or subscriptions', () => {
    const sl = new Sublist<Sub>();
    const deep = mk('a.b.c');
    const mid = mk('a.b');
    sl.insert(deep);
    sl.insert(mid);
    sl.remove(deep);
    const b = root(sl).nodes.get('a')!.next!.nodes.get('b')!;
    assert.equal(b.next, null, 'the empty level under a.b is dropped');
    assert.deepEqual(shape(sl.match('a.b')), { psubs: [mid.id], qsubs: {} });
    sl.remove(mid);
    assertEmptyTrie(sl);
  });

  test('a churn of unique subjects leaves no residue', () => {
    const sl = new Sublist<Sub>();
    for (let i = 0; i < 2000; i++) {
      const s = mk(`_INBOX.${i}.${i % 13 === 0 ? '>' : 'x'}`);
      sl.insert(s);
      sl.match(`_INBOX.${i}.x`);
      sl.remove(s);
    }
    assertEmptyTrie(sl);
    assert.ok(sl.stats().numCache <= 1024);
  });
});

describe('sublist: property', () => {
  const patTok = fc.constantFrom('a', 'b', 'c', '*', '>');
  const pattern = fc
    .array(patTok, { minLength: 1, maxLength: 4 })
    .map((t) => t.join('.'))
    .filter(isValidSubscribeSubject);
  // Mostly the tokens subscriptions use (a literal `*`, `>` and empty tokens included),
  // sometimes one of many others so that the cache fills up and gets swept.
  const pubTok = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('a', 'b', 'c', '*', '>', '') },
    { weight: 1, arbitrary: fc.nat(400).map((n) => `n${n}`) },
  );
  const published = fc.array(pubTok, { minLength: 1, maxLength: 4 }).map((t) => t.join('.'));
  type Op =
    | { kind: 'insert'; subject: string; queue: string | null }
    | { kind: 'remove'; pick: number }
    | { kind: 'match'; subject: string };
  const op: fc.Arbitrary<Op> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('insert' as const),
        subject: pattern,
        queue: fc.constantFrom(null, 'q1', 'q2'),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
    {
      weight: 5,
      arbitrary: fc.record({ kind: fc.constant('match' as const), subject: published }),
    },
  );

  test('the cached match always equals brute force; removes prune; the cache stays bounded', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 150 }), fc.boolean(), (ops, cache) => {
        const sl = new Sublist<Sub>({ cache });
        const live: Sub[] = [];
        const recent: string[] = [];
        let inserts = 0;
        let removes = 0;
        const recheck = () => {
          for (const s of recent) assert.deepEqual(shape(sl.match(s)), bruteShape(live, s), s);
        };
        for (const o of ops) {
          switch (o.kind) {
            case 'insert': {
              const s = mk(o.subject, o.queue);
              assert.ok(sl.insert(s));
              live.push(s);
              inserts++;
              recheck();
              break;
            }
            case 'remove': {
              if (live.length === 0) break;
              const [s] = live.splice(o.pick % live.length, 1);
              assert.ok(sl.remove(s!));
              removes++;
              recheck();
              break;
            }
            case 'match':
              assert.deepEqual(shape(sl.matchOnce(o.subject)), bruteShape(live, o.subject));
              assert.deepEqual(shape(sl.match(o.subject)), bruteShape(live, o.subject), o.subject);
              if (!recent.includes(o.subject)) {
                recent.push(o.subject);
                if (recent.length > 16) recent.shift();
              }
              break;
          }
          const st = sl.stats();
          assert.equal(st.numSubscriptions, live.length);
          assert.equal(sl.size, live.length);
          assert.ok(st.numCache <= 1024);
          if (!cache) assert.equal(st.numCache, 0);
        }
        for (const s of live.splice(0)) {
          assert.ok(sl.remove(s));
          removes++;
        }
        const st = sl.stats();
        assert.equal(st.numInserts, inserts);
        assert.equal(st.numRemoves, removes);
        assertEmptyTrie(sl);
      }),
      { numRuns: 200 },
    );
  });
});

describe('sublist: onlyUnder (publish taps)', () => {
  test('every subscription that can match the prefix must pass, wildcards above it included', () => {
    const sl = new Sublist<Sub>();
    const own = new Set<number>();
    const allowed = (s: Sub): boolean => own.has(s.id);
    const prefix = ['$JS', 'ACK'];
    assert.equal(sl.onlyUnder(prefix, allowed), true);
    const a = mk('$JS.ACK.S.c1.>');
    own.add(a.id);
    sl.insert(a);
    // Elsewhere, or beside the prefix: not in the way.
    for (const other of ['foo.>', '$JS.API.>', '$JS', '$JS.ACK', 'x.*.ACK.>']) sl.insert(mk(other));
    assert.equal(sl.onlyUnder(prefix, allowed), true);
    for (const blocking of ['$JS.ACK.>', '$JS.ACK.S.*.1', '$JS.*.S.>', '*.ACK.>', '>', '*.*.*']) {
      const b = mk(blocking);
      sl.insert(b);
      assert.equal(sl.onlyUnder(prefix, allowed), false, blocking);
      sl.remove(b);
      assert.equal(sl.onlyUnder(prefix, allowed), true, blocking);
    }
    const q = mk('$JS.ACK.S.c1.>', 'g');
    sl.insert(q);
    assert.equal(sl.onlyUnder(prefix, allowed), false);
  });
});
