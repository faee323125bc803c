// Store suite: channels, max_channels, per-channel limits, clients and server info.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nowNanos } from '../../src/streaming/protocol/index.js';
import {
  DEFAULT_STORE_LIMITS,
  makeStoredMsg,
  storezLimits,
} from '../../src/streaming/store/index.js';
import { assertStoreError, msg, SERVER_INFO, sub } from './store-fixtures.js';
import type { SuiteContext } from './store-suite.js';

export function channelTests({ withStore, options }: SuiteContext): void {
  describe('channels', () => {
    it(
      'creates channels with the limits they resolve to, and finds them',
      withStore({}, (store) => {
        const foo = store.createChannel('foo');
        store.createChannel('bar');
        assert.equal(foo.name, 'foo');
        assert.deepEqual(
          { ...foo.limits },
          {
            maxMsgs: DEFAULT_STORE_LIMITS.maxMsgs,
            maxBytes: DEFAULT_STORE_LIMITS.maxBytes,
            maxAge: 0,
            maxSubscriptions: DEFAULT_STORE_LIMITS.maxSubscriptions,
            maxInactivity: 0,
          },
        );
        assert.equal(store.lookupChannel('foo'), foo);
        assert.equal(store.lookupChannel('baz'), undefined);
        assert.equal(store.channelCount, 2);
        assert.deepEqual([...store.channels()].map((c) => c.name).sort(), ['bar', 'foo']);
      }),
    );

    it(
      'refuses to create a channel twice',
      withStore({}, (store) => {
        store.createChannel('foo');
        assertStoreError(() => store.createChannel('foo'), 'ALREADY_EXISTS', 'already exists');
      }),
    );

    it(
      'max_channels: one channel too many fails with "too many channels"',
      withStore({ limits: { maxChannels: 2 } }, (store) => {
        store.createChannel('a');
        store.createChannel('b');
        assertStoreError(() => store.createChannel('c'), 'TOO_MANY_CHANNELS', 'too many channels');
        store.deleteChannel('a');
        store.createChannel('c');
      }),
    );

    it(
      'max_channels 0 means unlimited',
      withStore({ limits: { maxChannels: 0 } }, (store) => {
        for (let i = 0; i < 250; i++) store.createChannel(`ch${i}`);
        assert.equal(store.channelCount, 250);
      }),
    );

    it(
      'deleting a channel removes its messages and subscriptions',
      withStore({}, (store) => {
        const foo = store.createChannel('foo');
        foo.msgs.store(msg('foo', 1));
        foo.subs.create(sub());
        store.deleteChannel('foo');
        assert.equal(store.lookupChannel('foo'), undefined);
        assert.deepEqual(store.totals(), { msgs: 0, bytes: 0 });
        const again = store.createChannel('foo');
        assert.equal(again.msgs.count, 0);
        assert.equal(again.msgs.lastSequence, 0);
        assert.equal(again.subs.count, 0);
        assertStoreError(() => store.deleteChannel('nope'), 'NOT_FOUND');
      }),
    );

    it(
      'applies per-channel limits with wildcards when a channel is created',
      withStore(
        {
          limits: {
            maxMsgs: 1000,
            perChannel: { 'foo.*': { maxMsgs: 3 }, 'foo.>': { maxSubscriptions: 2 } },
          },
        },
        (store) => {
          const fooA = store.createChannel('foo.a');
          const bar = store.createChannel('bar');
          for (let seq = 1; seq <= 5; seq++) {
            fooA.msgs.store(msg('foo.a', seq));
            bar.msgs.store(msg('bar', seq));
          }
          assert.equal(fooA.msgs.count, 3);
          assert.equal(fooA.msgs.firstSequence, 3);
          assert.equal(bar.msgs.count, 5);
          assert.equal(fooA.limits.maxSubscriptions, 2);
          assert.equal(store.createChannel('foo.a.b').limits.maxMsgs, 1000);
        },
      ),
    );

    it(
      'reports totals over all channels',
      withStore({}, (store) => {
        const a = store.createChannel('a');
        const b = store.createChannel('b');
        const m1 = msg('a', 1);
        const m2 = msg('b', 1);
        const m3 = msg('b', 2);
        a.msgs.store(m1);
        b.msgs.store(m2);
        b.msgs.store(m3);
        const bytes =
          m1.encoded.length +
          m2.encoded.length +
          m3.encoded.length +
          3 * (options.msgOverhead ?? 0);
        assert.deepEqual(store.totals(), { msgs: 3, bytes });
      }),
    );

    it(
      `reports type ${options.type} and counts bytes as the reference does`,
      withStore({}, (store) => {
        assert.equal(store.type, options.type);
        const { msgs } = store.createChannel('foo');
        for (let i = 0; i < 10; i++) {
          msgs.store(makeStoredMsg(i + 1, nowNanos(), 'foo', '', Buffer.from(`msg-${i}`)));
        }
        // The reference reports 240 bytes for these (memory), 640 (file: 40 a message more).
        const bytes = 240 + 10 * (options.msgOverhead ?? 0);
        assert.deepEqual(store.totals(), { msgs: 10, bytes });
      }),
    );

    it(
      'reports the default limits as storez does',
      withStore({}, (store) => {
        assert.deepEqual(storezLimits(store.limits), {
          max_channels: 100,
          max_msgs: 1000000,
          max_bytes: 1024000000,
          max_age: 0,
          max_subscriptions: 1000,
          max_inactivity: 0,
        });
      }),
    );
  });

  describe('clients and server info', () => {
    const client = (id: string, hbInbox = `_INBOX.hb.${id}`) => ({
      id,
      hbInbox,
      connID: Buffer.from(`conn-${id}`),
      protocol: 1,
      pingInterval: 5,
      pingMaxOut: 88,
    });

    it(
      'adds, replaces and deletes clients',
      withStore({}, (store) => {
        store.addClient(client('me'));
        store.addClient(client('you'));
        store.addClient(client('me', '_INBOX.hb.new'));
        store.deleteClient('you');
        store.deleteClient('nobody');
        const clients = [...store.clients()];
        assert.equal(clients.length, 1);
        assert.equal(clients[0]!.id, 'me');
        assert.equal(clients[0]!.hbInbox, '_INBOX.hb.new');
        assert.deepEqual(Buffer.from(clients[0]!.connID), Buffer.from('conn-me'));
      }),
    );

    it(
      'accepts the server info',
      withStore({}, (store) => {
        store.init(SERVER_INFO);
      }),
    );
  });
}
