// /subsz against the reference's recorded answers (fixtures/subsz*.json).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  fixture,
  get,
  getJson,
  type JsonObject,
  populate,
  recordedAnswers,
  shapeDiff,
  withMonitor,
} from './helpers.js';

const list = (z: JsonObject): JsonObject[] => z.subscriptions_list as JsonObject[];

describe('/subsz', () => {
  it("matches the reference's shapes with and without the list", async () => {
    await withMonitor({}, async (s) => {
      const pop = await populate(s.port);
      try {
        const cases: [string, string][] = [
          ['subsz', '/subsz'],
          ['subsz-subs', '/subsz?subs=1'],
          ['subsz-test', '/subsz?subs=1&test=foo.bar'],
        ];
        for (const [name, path] of cases) {
          const z = await getJson(s, path);
          assert.deepEqual(shapeDiff(fixture(name), z), [], path);
          assert.deepEqual(Object.keys(z), Object.keys(fixture(name) as object), path);
        }
        assert.deepEqual(
          await getJson(s, '/subsz'),
          await getJson(s, '/subscriptionsz'),
          'the alias',
        );
      } finally {
        pop.close();
      }
    });
  });

  it('counts, lists and filters subscriptions', async () => {
    await withMonitor({}, async (s) => {
      const pop = await populate(s.port);
      try {
        const stats = await getJson(s, '/subsz');
        assert.equal(stats.num_subscriptions, 4);
        assert.equal(stats.num_inserts, 5, "carol's subscription came and went");
        assert.equal(stats.num_removes, 1);
        const all = await getJson(s, '/subsz?subs=1');
        assert.deepEqual(
          list(all)
            .map((d) => d.subject)
            .sort(),
          ['auto', 'bar', 'foo', 'foo.*'],
        );
        assert.ok(list(all).every((d) => d.account === '$G'));
        const queue = list(all).find((d) => d.subject === 'bar')!;
        assert.equal(queue.qgroup, 'q');

        // Only what a message on the literal subject would reach.
        const test = await getJson(s, '/subsz?subs=1&test=foo.bar');
        assert.deepEqual(
          list(test).map((d) => d.subject),
          ['foo.*'],
        );
        const foo = await getJson(s, '/subsz?subs=1&test=foo');
        assert.deepEqual(
          list(foo).map((d) => d.subject),
          ['foo'],
        );
        // No match: the statistics alone, as the reference.
        assert.deepEqual(Object.keys(await getJson(s, '/subsz?subs=1&test=nothing')), [
          ...Object.keys(stats),
        ]);

        // Paging; `total` is the page's length, as the reference writes it.
        const page = await getJson(s, '/subsz?subs=1&offset=1&limit=2');
        assert.deepEqual([page.offset, page.limit, page.total], [1, 2, 2]);
        assert.deepEqual(
          list(page).map((d) => d.subject),
          list(all)
            .slice(1, 3)
            .map((d) => d.subject),
        );
      } finally {
        pop.close();
      }
    });
  });

  it('requires a valid literal test subject', async () => {
    const recorded = recordedAnswers();
    await withMonitor({}, async (s) => {
      for (const path of ['/subsz?test=foo.*', '/subsz?subs=1&test=foo..bar', '/subsz?limit=x']) {
        const a = await get(s, path);
        assert.equal(a.status, 400, path);
        assert.deepEqual(JSON.parse(a.text), { error: recorded[path]!.body }, path);
      }
      const wild = await get(s, '/subsz?subs=1&test=foo.>');
      assert.deepEqual(JSON.parse(wild.text), {
        error: 'invalid test subject, must be valid publish subject: foo.>',
      });
    });
  });
});
