// Store suite: what a persistent store must give back after a restart (close, then
// open the same data). Skipped for stores that keep nothing (memory).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Store, StoredMsg, SubRecord } from '../../src/streaming/store/index.js';
import { assertSameMsg, msg, SERVER_INFO, sub } from './store-fixtures.js';
import type { SuiteContext } from './store-suite.js';

const CLIENT = {
  id: 'me',
  hbInbox: '_INBOX.hb',
  connID: Buffer.from('conn'),
  protocol: 1,
  pingInterval: 5,
  pingMaxOut: 88,
};

export function restartTests({ options }: SuiteContext): void {
  const skip = options.mustSurviveRestart
    ? false
    : `${options.name} store keeps nothing across a restart`;

  describe('restart', () => {
    if (!options.mustSurviveRestart) {
      it('recovers nothing when it keeps nothing', async () => {
        const store = await options.open({});
        try {
          assert.equal(await store.recover(), undefined);
        } finally {
          await store.close();
        }
      });
    }

    // Writes one of everything, restarts, and hands the reopened store to `check`.
    async function afterRestart(
      limits: { maxMsgs?: number },
      write: (store: Store) => void,
      check: (store: Store) => Promise<void>,
    ): Promise<void> {
      const before = await options.open({ limits });
      let after: Store | undefined;
      try {
        assert.equal(await before.recover(), undefined);
        write(before);
        await before.flush();
        after = await options.reopen!(before);
        await check(after);
      } finally {
        await (after ?? before).close();
      }
    }

    it(
      'recovers server info, clients, channels, messages and subscriptions',
      { skip },
      async () => {
        const stored: StoredMsg[] = [];
        let durable: SubRecord | undefined;
        await afterRestart(
          {},
          (store) => {
            store.init(SERVER_INFO);
            store.addClient(CLIENT);
            store.addClient({ ...CLIENT, id: 'gone' });
            store.deleteClient('gone');
            const foo = store.createChannel('foo');
            for (let seq = 1; seq <= 10; seq++) {
              const m = msg('foo', seq);
              foo.msgs.store(m);
              stored.push(m);
            }
            durable = foo.subs.create(sub({ durableName: 'dur', isDurable: true }));
            const plain = foo.subs.create(sub());
            for (const seq of [8, 9, 10]) foo.subs.addPending(durable.id, seq);
            foo.subs.ack(durable.id, 8);
            foo.subs.delete(plain.id);
            foo.subs.update({ ...durable, lastSent: 10, clientID: '', isClosed: true });
            store.createChannel('empty');
            store.createChannel('deleted');
            store.deleteChannel('deleted');
          },
          async (store) => {
            const state = await store.recover();
            assert.ok(state);
            assert.deepEqual({ ...state.info }, SERVER_INFO);
            assert.deepEqual(
              state.clients.map((c) => c.id),
              ['me'],
            );
            assert.deepEqual(state.channels.map((c) => c.name).sort(), ['empty', 'foo']);
            const foo = store.lookupChannel('foo')!;
            assert.equal(foo.msgs.firstSequence, 1);
            assert.equal(foo.msgs.lastSequence, 10);
            assert.equal(foo.msgs.count, 10);
            for (const m of stored) assertSameMsg(await foo.msgs.lookup(m.sequence), m);
            const subs = [...foo.subs.all()];
            assert.equal(subs.length, 1);
            assert.deepEqual(
              { ...subs[0]!.record },
              { ...durable!, lastSent: 10, clientID: '', isClosed: true },
            );
            assert.deepEqual(
              [...subs[0]!.pending].sort((a, b) => a - b),
              [9, 10],
            );
            // Sequences and subscription IDs go on from where they were.
            foo.msgs.store(msg('foo', 11));
            assert.equal(foo.msgs.lastSequence, 11);
            assert.equal(foo.subs.create(sub()).id, 3);
          },
        );
      },
    );

    it('recovers first_seq after messages were dropped by limits', { skip }, async () => {
      await afterRestart(
        { maxMsgs: 5 },
        (store) => {
          const { msgs } = store.createChannel('foo');
          for (let seq = 1; seq <= 10; seq++) msgs.store(msg('foo', seq));
        },
        async (store) => {
          await store.recover();
          const { msgs } = store.lookupChannel('foo')!;
          assert.equal(msgs.firstSequence, 6);
          assert.equal(msgs.lastSequence, 10);
          assert.equal(msgs.count, 5);
          assert.equal(await msgs.lookup(5), undefined);
        },
      );
    });
  });
}
