// /streaming monitoring compared with the reference's captured answers (spec
// appendix, fixtures/monitor/*.json): the same scenario is replayed with
// node-nats-streaming, then every field must have the captured name, order and
// type, and the captured value unless it varies from run to run (ids, inboxes,
// times, descriptor counts, versions).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from './paths.js';
import { closeStan, publish, sleep, subscribe, withStan, type StanEnv } from './stan.js';

interface Capture {
  path: string;
  status: number;
  contentType: string | null;
  json?: unknown;
  text?: string;
}

function fixture(name: string): Capture[] {
  const file = resolve(repoRoot, 'test', 'streaming', 'fixtures', 'monitor', `${name}.json`);
  return JSON.parse(readFileSync(file, 'utf8')) as Capture[];
}

const VARIABLE = new Set([
  'server_id',
  'now',
  'start_time',
  'uptime',
  'hb_inbox',
  'inbox',
  'ack_inbox',
  'open_fds',
  'max_fds',
  'version',
  'go',
]);

function sameShape(expected: unknown, actual: unknown, path: string): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: array expected`);
    assert.equal(actual.length, expected.length, `${path}: length`);
    expected.forEach((e, i) => {
      sameShape(e, actual[i], `${path}[${i}]`);
    });
    return;
  }
  if (typeof expected === 'object' && expected !== null) {
    assert.ok(typeof actual === 'object' && actual !== null, `${path}: object expected`);
    const exp = expected as Record<string, unknown>;
    const act = actual as Record<string, unknown>;
    assert.deepEqual(Object.keys(act), Object.keys(exp), `${path}: keys and their order`);
    for (const k of Object.keys(exp)) {
      if (VARIABLE.has(k)) assert.equal(typeof act[k], typeof exp[k], `${path}.${k}: type`);
      else sameShape(exp[k], act[k], `${path}.${k}`);
    }
    return;
  }
  assert.equal(actual, expected, path);
}

async function compare(env: StanEnv, captures: Capture[]): Promise<void> {
  for (const c of captures) {
    const res = await fetch(env.http + c.path);
    const body = await res.text();
    assert.equal(res.status, c.status, `${c.path}: status`);
    assert.equal(res.headers.get('content-type'), c.contentType, `${c.path}: content type`);
    if (c.json !== undefined) {
      assert.ok(!body.endsWith('\n'), `${c.path}: no trailing newline`);
      sameShape(c.json, JSON.parse(body), c.path);
    } else if (c.contentType === 'application/javascript') {
      assert.ok(body.startsWith('cb(') && body.endsWith(')'), c.path);
      const inner = (t: string): unknown => JSON.parse(t.slice(3, -1));
      sameShape(inner(c.text!), inner(body), c.path);
    } else {
      assert.equal(body, c.text, `${c.path}: body`);
    }
  }
}

/** The capture run: client1 publishes msg-0..msg-9 to foo, durable dur receives them. */
async function captureScenario(env: StanEnv): Promise<void> {
  const sc = await env.connect('client1');
  for (let i = 0; i < 10; i++) await publish(sc, 'foo', `msg-${i}`);
  const r = await subscribe(
    sc,
    'foo',
    sc.subscriptionOptions().setDurableName('dur').setDeliverAllAvailable(),
  );
  await r.waitFor(10);
  await sleep(50);
  await compare(env, fixture('online'));
  await closeStan(sc);
  await compare(env, fixture('offline'));
}

describe('streaming monitoring matches the reference captures', () => {
  it('an empty server', async () => {
    await withStan({}, async (env) => {
      await compare(env, fixture('empty'));
    });
  });

  it('client1 with a durable, online then offline', async () => {
    await withStan({}, captureScenario);
  });

  it('a channel and a client without subscriptions, subs=1', async () => {
    await withStan({}, async (env) => {
      const sc = await env.connect('client2');
      await publish(sc, 'bar', 'x');
      await compare(env, fixture('no-subs'));
    });
  });
});

describe('streaming monitoring behaviour', () => {
  it('paging of clientsz and channelsz, sorted by name', async () => {
    await withStan({}, async (env) => {
      for (const id of ['c3', 'c1', 'c5', 'c2', 'c4']) await env.connect(id);
      const sc = await env.connect('pub');
      for (const ch of ['b', 'a', 'c']) await publish(sc, ch, 'x');
      const get = async (q: string): Promise<Record<string, unknown>> => {
        const res = await fetch(env.http + q);
        assert.equal(res.status, 200, q);
        return (await res.json()) as Record<string, unknown>;
      };
      const page = await get('/streaming/clientsz?offset=1&limit=2');
      assert.deepEqual([page.offset, page.limit, page.count, page.total], [1, 2, 2, 6]);
      assert.deepEqual(
        (page.clients as { id: string }[]).map((c) => c.id),
        ['c2', 'c3'],
      );
      const past = await get('/streaming/clientsz?offset=10');
      assert.deepEqual([past.count, past.clients], [0, []]);
      assert.equal((await get('/streaming/clientsz?limit=-1')).limit, 1024);
      assert.equal((await get('/streaming/clientsz?offset=-1')).offset, 0);
      assert.deepEqual((await get('/streaming/channelsz')).names, ['a', 'b', 'c']);
      const full = await get('/streaming/channelsz?subs=1');
      assert.equal(full.names, undefined);
      assert.deepEqual(
        (full.channels as { name: string }[]).map((c) => c.name),
        ['a', 'b', 'c'],
      );
      // subs=true is not 1 (the reference reads it with Atoi).
      assert.deepEqual((await get('/streaming/channelsz?subs=true')).names, ['a', 'b', 'c']);
      // Bad numbers are 0, as Atoi errors ignored: defaults, never a failure.
      for (const q of [
        'limit=abc',
        'offset=x&limit=1e3',
        'limit=99999999999999999999',
        'subs=%ff',
        'offset=--1',
      ]) {
        const r = await get(`/streaming/channelsz?${q}`);
        assert.equal(r.total, 3, q);
      }
      // An empty channel= is the list.
      assert.deepEqual((await get('/streaming/channelsz?channel=')).names, ['a', 'b', 'c']);
    });
  });

  it('isFTActive: 204 without body for any method; unknown paths 404', async () => {
    await withStan({}, async (env) => {
      for (const method of ['GET', 'POST', 'HEAD']) {
        const res = await fetch(env.http + '/streaming/isFTActive', { method });
        assert.equal(res.status, 204, method);
        assert.equal(res.headers.get('content-type'), null);
        assert.equal(await res.text(), '');
      }
      for (const p of ['/streaming/', '/streaming/serverz/', '/streaming/nope']) {
        const res = await fetch(env.http + p);
        assert.equal(res.status, 404, p);
        assert.equal(await res.text(), '404 page not found\n');
      }
      const post = await fetch(env.http + '/streaming/serverz', { method: 'POST' });
      assert.equal(post.status, 200);
    });
  });

  it('serverz counts offline durables, queue members and shadows; in/out bytes', async () => {
    await withStan({}, async (env) => {
      const a = await env.connect('a');
      const b = await env.connect('b');
      await subscribe(a, 'foo', a.subscriptionOptions().setDurableName('d'));
      await subscribe(b, 'foo', b.subscriptionOptions().setDurableName('d2'));
      await subscribe(b, 'bar', b.subscriptionOptions(), 'q');
      await closeStan(b);
      const res = (await (await fetch(env.http + '/streaming/serverz')).json()) as Record<
        string,
        unknown
      >;
      assert.equal(res.clients, 1);
      assert.equal(res.subscriptions, 2);
      assert.equal(res.channels, 2);
      assert.equal(res.state, 'STANDALONE');
      assert.equal(res.role, undefined);
    });
  });

  it('storez shows per-channel limits after inheritance, durations in nanoseconds', async () => {
    await withStan(
      { limits: { maxAge: 3_600_000, perChannel: { 'foo.*': { maxMsgs: 300 } } } },
      async (env) => {
        const res = (await (await fetch(env.http + '/streaming/storez')).json()) as {
          limits: Record<string, unknown>;
        };
        assert.equal(res.limits.max_age, 3_600_000_000_000);
        assert.deepEqual(res.limits.channels, {
          'foo.*': {
            max_msgs: 300,
            max_bytes: 1024000000,
            max_age: 3_600_000_000_000,
            max_subscriptions: 1000,
            max_inactivity: 0,
          },
        });
      },
    );
  });
});
