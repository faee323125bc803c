// An in-process range subscription on `<prefix>.>` takes the publishes under its prefix
// from the publisher's bytes (src/server/range-tap.ts): its handler gets what routing
// would have given it (subject, reply, payload), the publishes count as deliveries and
// leave the subject cache alone; a client listening on the same subjects (or on a
// wildcard above them) still gets every message, and so does the handler; once the
// subscription goes, so does the tap, and publishes get what routing gives them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { withServer } from '../helpers/server.js';
import type { RunningServer } from '../../src/index.js';

interface Got {
  subject: string;
  reply: string | null;
  data: string;
}

async function withTap(
  body: (nc: NatsConnection, s: RunningServer, got: Got[], stop: () => void) => Promise<void>,
): Promise<void> {
  await withServer({}, async (s) => {
    const core = s.server;
    const c = core.createInternalClient('range-tap-test');
    const got: Got[] = [];
    const sub = core.subscribeInternalRange(c, 'tap.in.>', (subject, reply, buf, start, end) => {
      if (buf.toString('latin1', start, end) === 'throw') throw new Error('handler failed');
      got.push({ subject, reply, data: buf.toString('latin1', start, end) });
    });
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      await body(nc, s, got, () => {
        c.removeSubscription(sub);
      });
    } finally {
      await nc.close();
    }
  });
}

test('a tapped publish reaches the handler as routing would give it, and is counted', async () => {
  await withTap(async (nc, s, got) => {
    const sublist = s.server.globalAccount.sublist;
    assert.equal(s.server.globalAccount.taps.length, 1);
    const cached = sublist.stats().numCache;
    const outBefore = s.server.outMsgs;
    const enc = new TextEncoder();
    nc.publish('tap.in.a', enc.encode('one'), { reply: 'r.1' });
    nc.publish('tap.in.a', enc.encode('two'), { reply: 'r.1' });
    nc.publish('tap.in.b.c', enc.encode('three'));
    nc.publish('tap.in.a', enc.encode('four'), { reply: 'r.2' });
    // A handler that throws is logged; the publisher and the next messages carry on.
    nc.publish('tap.in.a', enc.encode('throw'));
    nc.publish('tap.in.longer.subject.' + 'x'.repeat(300), enc.encode('five'));
    // Not under the prefix: no subscriber, routed as usual.
    nc.publish('tap.other', enc.encode('none'));
    await nc.flush();
    assert.deepEqual(got, [
      { subject: 'tap.in.a', reply: 'r.1', data: 'one' },
      { subject: 'tap.in.a', reply: 'r.1', data: 'two' },
      { subject: 'tap.in.b.c', reply: null, data: 'three' },
      { subject: 'tap.in.a', reply: 'r.2', data: 'four' },
      { subject: 'tap.in.longer.subject.' + 'x'.repeat(300), reply: null, data: 'five' },
    ]);
    assert.equal(s.server.outMsgs - outBefore, 6);
    // Only `tap.other` was routed (and its miss cached).
    assert.equal(sublist.stats().numCache, cached + 1);
    // Headers are not passed to a ranged handler: the payload after them is.
    const { headers } = await import('nats');
    const h = headers();
    h.set('k', 'v');
    nc.publish('tap.in.h', enc.encode('six'), { headers: h });
    await nc.flush();
    assert.deepEqual(got.at(-1), { subject: 'tap.in.h', reply: null, data: 'six' });
  });
});

test('a listener on the same subjects gets every message, and so does the handler', async () => {
  for (const watch of ['tap.in.>', 'tap.*.a', '>']) {
    await withTap(async (nc, _s, got) => {
      const watcher = await connect({ servers: nc.getServer() });
      try {
        const seen: string[] = [];
        const sub = watcher.subscribe(watch, {
          callback: (_e, m) => {
            if (m.subject.startsWith('tap.in.')) seen.push(m.string());
          },
        });
        await watcher.flush();
        const enc = new TextEncoder();
        for (let i = 0; i < 5; i++) nc.publish('tap.in.a', enc.encode(String(i)));
        await nc.flush();
        await watcher.flush();
        assert.deepEqual(seen, ['0', '1', '2', '3', '4'], watch);
        assert.deepEqual(
          got.map((g) => g.data),
          ['0', '1', '2', '3', '4'],
          watch,
        );
        sub.unsubscribe();
        await watcher.flush();
        // Gone again: the tap takes them once more.
        nc.publish('tap.in.a', enc.encode('late'));
        await nc.flush();
        assert.equal(got.at(-1)?.data, 'late', watch);
        assert.equal(seen.length, 5, watch);
      } finally {
        await watcher.close();
      }
    });
  }
});

test('once the subscription goes, so does its tap: requests get no-responders', async () => {
  await withTap(async (nc, s, got, stop) => {
    stop();
    assert.equal(s.server.globalAccount.taps.length, 0);
    await assert.rejects(
      nc.request('tap.in.a', new Uint8Array(0), { timeout: 2000 }),
      (err: Error & { code?: string }) => err.code === '503',
    );
    assert.equal(got.length, 0);
  });
});
