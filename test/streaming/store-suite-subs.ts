// Store suite: subscriptions, their pending sets and max_subscriptions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertStoreError, sub } from './store-fixtures.js';
import type { SuiteContext } from './store-suite.js';

export function subscriptionTests({ withStore, options }: SuiteContext): void {
  const storeWide = options.storeWideSubIds === true;
  describe('subscriptions', () => {
    it(
      storeWide
        ? 'numbers subscriptions from 1 in the whole store and keeps their records'
        : 'numbers subscriptions from 1 in each channel and keeps their records',
      withStore({}, (store) => {
        const foo = store.createChannel('foo');
        const bar = store.createChannel('bar');
        const a = foo.subs.create(sub({ inbox: 'a' }));
        const b = foo.subs.create(sub({ inbox: 'b', durableName: 'dur', isDurable: true }));
        const c = bar.subs.create(sub({ inbox: 'c' }));
        assert.deepEqual([a.id, b.id, c.id], storeWide ? [1, 2, 3] : [1, 2, 1]);
        assert.deepEqual(
          { ...b },
          { ...sub({ inbox: 'b', durableName: 'dur', isDurable: true }), id: 2 },
        );
        assert.deepEqual({ ...foo.subs.get(2)!.record }, { ...b });
        assert.equal(foo.subs.count, 2);
        assert.deepEqual([...foo.subs.all()].map((s) => s.record.inbox).sort(), ['a', 'b']);
      }),
    );

    it(
      'never reuses an ID after a delete',
      withStore({}, (store) => {
        const { subs } = store.createChannel('foo');
        subs.create(sub());
        const second = subs.create(sub());
        subs.delete(second.id);
        assert.equal(subs.create(sub()).id, 3);
      }),
    );

    it(
      'max_subscriptions counts closed durables; a delete frees a slot',
      withStore({ limits: { maxSubscriptions: 2 } }, (store) => {
        const { subs } = store.createChannel('foo');
        const first = subs.create(sub({ isDurable: true, isClosed: true, durableName: 'd' }));
        subs.create(sub());
        assertStoreError(
          () => subs.create(sub()),
          'TOO_MANY_SUBS',
          'too many subscriptions per channel',
        );
        subs.delete(first.id);
        subs.create(sub());
        assert.equal(subs.count, 2);
      }),
    );

    it(
      'max_subscriptions 0 means unlimited',
      withStore({ limits: { maxSubscriptions: 0 } }, (store) => {
        const { subs } = store.createChannel('foo');
        for (let i = 0; i < 1500; i++) subs.create(sub());
        assert.equal(subs.count, 1500);
      }),
    );

    it(
      'tracks pending sequences: sent raises lastSent, ack removes',
      withStore({}, (store) => {
        const { subs } = store.createChannel('foo');
        const s = subs.create(sub({ lastSent: 4 }));
        for (const seq of [5, 6, 7]) subs.addPending(s.id, seq);
        subs.ack(s.id, 6);
        subs.ack(s.id, 99);
        subs.ack(s.id, 6);
        const stored = subs.get(s.id)!;
        assert.deepEqual(
          [...stored.pending].sort((x, y) => x - y),
          [5, 7],
        );
        assert.equal(stored.record.lastSent, 7);
        subs.addPending(s.id, 3);
        assert.equal(subs.get(s.id)!.record.lastSent, 7);
      }),
    );

    it(
      'ignores pending and acks for unknown subscriptions',
      withStore({}, (store) => {
        const { subs } = store.createChannel('foo');
        subs.addPending(42, 1);
        subs.ack(42, 1);
        assert.equal(subs.get(42), undefined);
        assert.equal(subs.count, 0);
      }),
    );

    it(
      'update replaces the record and keeps the pending set',
      withStore({}, (store) => {
        const { subs } = store.createChannel('foo');
        const s = subs.create(sub({ durableName: 'dur', isDurable: true }));
        subs.addPending(s.id, 1);
        subs.update({ ...s, clientID: '', isClosed: true, lastSent: 1 });
        const stored = subs.get(s.id)!;
        assert.equal(stored.record.isClosed, true);
        assert.equal(stored.record.clientID, '');
        assert.deepEqual([...stored.pending], [1]);
      }),
    );

    it(
      'delete forgets the subscription and its pending set',
      withStore({}, (store) => {
        const { subs } = store.createChannel('foo');
        const s = subs.create(sub());
        subs.addPending(s.id, 1);
        subs.delete(s.id);
        subs.delete(s.id);
        assert.equal(subs.get(s.id), undefined);
        assert.equal(subs.count, 0);
      }),
    );
  });
}
