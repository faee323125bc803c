// Store suite: max_inactivity reports, flush, close and the fault-tolerance lock.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStoreError } from '../../src/streaming/store/index.js';
import { assertStoreError, msg, sleep, sub } from './store-fixtures.js';
import type { SuiteContext } from './store-suite.js';

export function lifecycleTests({ withStore, options }: SuiteContext): void {
  describe('max_inactivity', () => {
    it('reports a channel with no publish and no subscription, once', async () => {
      const inactive: string[] = [];
      const hooks = { onChannelInactive: (c: string) => inactive.push(c) };
      await withStore({ limits: { maxInactivity: 80 }, hooks }, async (store) => {
        store.createChannel('tmp').msgs.store(msg('tmp', 1));
        await sleep(500);
        assert.deepEqual(inactive, ['tmp']);
      })();
    });

    it('does not report a channel with an active subscription, but does with only offline durables', async () => {
      const inactive: string[] = [];
      const hooks = { onChannelInactive: (c: string) => inactive.push(c) };
      await withStore({ limits: { maxInactivity: 80 }, hooks }, async (store) => {
        const active = store.createChannel('active');
        active.subs.create(sub());
        const offline = store.createChannel('offline');
        offline.subs.create(sub({ durableName: 'd', isDurable: true, isClosed: true }));
        await sleep(500);
        assert.deepEqual(inactive, ['offline']);
      })();
    });

    it('restarts the wait when the last active subscription goes away', async () => {
      const inactive: string[] = [];
      const hooks = { onChannelInactive: (c: string) => inactive.push(c) };
      await withStore({ limits: { maxInactivity: 250 }, hooks }, async (store) => {
        const { subs } = store.createChannel('foo');
        const s = subs.create(sub());
        await sleep(400);
        subs.delete(s.id);
        await sleep(50);
        assert.deepEqual(inactive, []);
        await sleep(600);
        assert.deepEqual(inactive, ['foo']);
      })();
    });

    it('publishing postpones the report', async () => {
      const inactive: string[] = [];
      const hooks = { onChannelInactive: (c: string) => inactive.push(c) };
      await withStore(
        { limits: { maxInactivity: 300, perChannel: { never: { maxInactivity: -1 } } }, hooks },
        async (store) => {
          const { msgs } = store.createChannel('busy');
          store.createChannel('never');
          for (let seq = 1; seq <= 8; seq++) {
            msgs.store(msg('busy', seq));
            await sleep(40);
          }
          assert.deepEqual(inactive, []);
          await sleep(800);
          assert.deepEqual(inactive, ['busy']);
        },
      )();
    });
  });

  describe('lifecycle', () => {
    it(
      'flush resolves once writes are durable',
      withStore({}, async (store) => {
        store.createChannel('foo').msgs.store(msg('foo', 1));
        await store.flush();
        await Promise.all([store.flush(), store.flush()]);
      }),
    );

    it('refuses writes once closed; closing twice is harmless', async () => {
      const store = await options.open({});
      const foo = store.createChannel('foo');
      await store.close();
      assertStoreError(() => store.createChannel('bar'), 'CLOSED');
      assertStoreError(() => foo.msgs.store(msg('foo', 1)), 'CLOSED');
      assertStoreError(() => foo.subs.create(sub()), 'CLOSED');
      assertStoreError(() => {
        store.deleteClient('me');
      }, 'CLOSED');
      await store.close();
    });

    it(
      'either takes the fault-tolerance lock or says it cannot be shared',
      withStore({}, async (store) => {
        try {
          assert.equal(typeof (await store.tryExclusiveLock()), 'boolean');
        } catch (err) {
          assert.ok(isStoreError(err, 'NOT_SUPPORTED'), String(err));
        }
      }),
    );
  });
}
