// Connect, client IDs, duplicate IDs, close, client pings and heartbeats, with the
// real node-nats-streaming client and raw protobuf requests for exact texts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CloseRequest,
  CloseResponse,
  ConnectRequest,
  ConnectResponse,
  Ping,
  PingResponse,
  PubAck,
  PubMsg,
} from '../../src/streaming/protocol/index.js';
import { natsConnect, request } from './raw.js';
import { closeStan, eventually, kill, publish, withStan } from './stan.js';

const enc = (s: string): Buffer => Buffer.from(s);

function connectReq(
  clientID: string,
  hbInbox = '_INBOX.hb',
  connID = 'conn-' + clientID,
): Uint8Array {
  return ConnectRequest.encode({
    clientID,
    heartbeatInbox: hbInbox,
    protocol: 1,
    connID: enc(connID),
    pingInterval: 5,
    pingMaxOut: 88,
  }).finish();
}

describe('streaming connect', () => {
  it('answers with the subjects of the cluster and echoes ping settings', async () => {
    await withStan({}, async ({ url, streaming }) => {
      const nc = await natsConnect(url);
      try {
        const reply = await request(nc, '_STAN.discover.test-cluster', connectReq('me'));
        assert.ok(reply);
        const cr = ConnectResponse.decode(reply);
        assert.equal(cr.error, '');
        assert.equal(cr.pubPrefix, '_STAN.pub.test-cluster');
        assert.equal(cr.subRequests, '_STAN.sub.test-cluster');
        assert.equal(cr.unsubRequests, '_STAN.unsub.test-cluster');
        assert.equal(cr.closeRequests, '_STAN.close.test-cluster');
        assert.equal(cr.subCloseRequests, '_STAN.subclose.test-cluster');
        assert.equal(cr.pingRequests, '_STAN.discover.test-cluster.pings');
        assert.equal(cr.pingInterval, 5);
        assert.equal(cr.pingMaxOut, 88);
        assert.equal(cr.protocol, 1);
        assert.equal(streaming.clients.size, 1);
      } finally {
        await nc.close();
      }
    });
  });

  it('uses the cluster id given', async () => {
    await withStan({ clusterId: 'other' }, async ({ connect, streaming }) => {
      const sc = await connect('c1');
      await publish(sc, 'foo', 'x');
      assert.equal(streaming.info.publish, '_STAN.pub.other');
    });
  });

  it('refuses invalid client ids and requests without heartbeat inbox', async () => {
    await withStan({}, async ({ url }) => {
      const nc = await natsConnect(url);
      try {
        const bad = 'stan: invalid clientID: only alphanumeric and `-` or `_` characters allowed';
        for (const id of ['a.b', '', 'a b', 'é']) {
          const r = await request(nc, '_STAN.discover.test-cluster', connectReq(id));
          assert.equal(ConnectResponse.decode(r!).error, bad, id);
        }
        const ok = await request(nc, '_STAN.discover.test-cluster', connectReq('A-z_09'));
        assert.equal(ConnectResponse.decode(ok!).error, '');
        const noHb = await request(nc, '_STAN.discover.test-cluster', connectReq('x', ''));
        assert.equal(ConnectResponse.decode(noHb!).error, 'stan: invalid connection request');
      } finally {
        await nc.close();
      }
    });
  });

  it('refuses a duplicate id while the old client answers heartbeats', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      await connect('dup');
      await assert.rejects(connect('dup', {}), /stan: clientID already registered/);
      assert.equal(streaming.clients.size, 1);
    });
  });

  it('replaces a silent client: its pings get the replaced error, its publishes are refused', async () => {
    await withStan({ clientCheckTimeout: 200 }, async ({ url, streaming }) => {
      const nc = await natsConnect(url);
      try {
        // The old client: registered with a heartbeat inbox nobody answers on.
        const first = await request(
          nc,
          '_STAN.discover.test-cluster',
          connectReq('me', '_INBOX.silent', 'old-conn'),
        );
        assert.equal(ConnectResponse.decode(first!).error, '');
        const started = Date.now();
        const second = await request(
          nc,
          '_STAN.discover.test-cluster',
          connectReq('me', '_INBOX.other', 'new-conn'),
        );
        assert.equal(ConnectResponse.decode(second!).error, '');
        assert.ok(Date.now() - started < 1000);
        assert.equal(streaming.clients.get('me')!.hbInbox, '_INBOX.other');
        const ping = await request(
          nc,
          '_STAN.discover.test-cluster.pings',
          Ping.encode({ connID: enc('old-conn') }).finish(),
        );
        assert.equal(
          PingResponse.decode(ping!).error,
          'client has been replaced or is no longer registered',
        );
        const okPing = await request(
          nc,
          '_STAN.discover.test-cluster.pings',
          Ping.encode({ connID: enc('new-conn') }).finish(),
        );
        assert.equal(okPing!.length, 0);
        const pub = await request(
          nc,
          '_STAN.pub.test-cluster.foo',
          PubMsg.encode({
            clientID: 'me',
            guid: 'g1',
            subject: 'foo',
            data: enc('x'),
            connID: enc('old-conn'),
          }).finish(),
        );
        const ack = PubAck.decode(pub!);
        assert.deepEqual(
          { guid: ack.guid, error: ack.error },
          { guid: 'g1', error: 'stan: invalid publish request' },
        );
      } finally {
        await nc.close();
      }
    });
  });

  it('a client that published and then went is not taken for registered', async () => {
    // The publish path remembers its last publisher (handlers/publish.ts): a replaced or
    // closed client must not publish through that memory.
    await withStan({}, async ({ url }) => {
      const nc = await natsConnect(url);
      try {
        const publishAs = async (connID: string, guid: string): Promise<string> => {
          const reply = await request(
            nc,
            '_STAN.pub.test-cluster.foo',
            PubMsg.encode({
              clientID: 'me',
              guid,
              subject: 'foo',
              data: enc('x'),
              connID: enc(connID),
            }).finish(),
          );
          return PubAck.decode(reply!).error;
        };
        const first = ConnectResponse.decode(
          (await request(
            nc,
            '_STAN.discover.test-cluster',
            connectReq('me', '_INBOX.silent', 'c1'),
          ))!,
        );
        assert.equal(first.error, '');
        assert.equal(await publishAs('c1', 'g1'), '');
        assert.equal(await publishAs('c1', 'g2'), '');
        const second = ConnectResponse.decode(
          (await request(
            nc,
            '_STAN.discover.test-cluster',
            connectReq('me', '_INBOX.other', 'c2'),
          ))!,
        );
        assert.equal(second.error, '');
        assert.equal(await publishAs('c1', 'g3'), 'stan: invalid publish request');
        assert.equal(await publishAs('c2', 'g4'), '');
        const closed = await request(
          nc,
          second.closeRequests,
          CloseRequest.encode({ clientID: 'me' }).finish(),
        );
        assert.equal(CloseResponse.decode(closed!).error, '');
        assert.equal(await publishAs('c2', 'g5'), 'stan: invalid publish request');
      } finally {
        await nc.close();
      }
    });
  });

  it('replaces a node-nats-streaming client whose connection died', async () => {
    await withStan({}, async ({ connect, streaming }) => {
      const old = await connect('phoenix');
      kill(old);
      const again = await connect('phoenix');
      await publish(again, 'foo', 'alive');
      assert.equal(streaming.clients.size, 1);
    });
  });

  it('close: removes the client, a second close is refused', async () => {
    await withStan({}, async ({ url, connect, streaming }) => {
      const sc = await connect('closer');
      await closeStan(sc);
      assert.equal(streaming.clients.size, 0);
      const nc = await natsConnect(url);
      try {
        const r = await request(
          nc,
          '_STAN.close.test-cluster',
          CloseRequest.encode({ clientID: 'closer' }).finish(),
        );
        assert.equal(CloseResponse.decode(r!).error, 'stan: unknown clientID');
      } finally {
        await nc.close();
      }
    });
  });

  it('pings: empty payload gets no reply, unknown connID the replaced error', async () => {
    await withStan({}, async ({ url }) => {
      const nc = await natsConnect(url);
      try {
        assert.equal(
          await request(nc, '_STAN.discover.test-cluster.pings', new Uint8Array(0), 200),
          null,
        );
        const r = await request(
          nc,
          '_STAN.discover.test-cluster.pings',
          Ping.encode({ connID: enc('nope') }).finish(),
        );
        assert.match(PingResponse.decode(r!).error, /replaced or is no longer registered/);
      } finally {
        await nc.close();
      }
    });
  });

  it('a client that dies without closing is removed by heartbeats; its durable goes offline', async () => {
    await withStan(
      { hbInterval: 100, hbTimeout: 100, hbFailCount: 2 },
      async ({ connect, streaming }) => {
        const sc = await connect('mortal');
        const opts = sc.subscriptionOptions().setDurableName('dur');
        const sub = sc.subscribe('foo', opts);
        await new Promise<void>((resolve) => sub.once('ready', resolve));
        // The connection vanishes: no CloseRequest, heartbeats go unanswered.
        kill(sc);
        await eventually(() => streaming.clients.size === 0, 'client removed by heartbeats');
        const ch = streaming.channels.get('foo')!;
        assert.equal(ch.subsCount, 1);
        assert.equal(ch.allSubs()[0]!.offline, true);
      },
    );
  });

  it('a client that answers heartbeats stays', async () => {
    await withStan(
      { hbInterval: 50, hbTimeout: 100, hbFailCount: 1 },
      async ({ connect, streaming }) => {
        await connect('alive');
        await new Promise((r) => setTimeout(r, 400));
        assert.equal(streaming.clients.size, 1);
        assert.equal(streaming.clients.get('alive')!.failedHb, 0);
      },
    );
  });

  it('refuses to start beside another server with the same cluster id', async () => {
    await withStan({}, async ({ running }) => {
      const { StreamingServer } = await import('../../src/streaming/server.js');
      const second = new StreamingServer(running.server, {});
      await assert.rejects(
        second.start(),
        /discovered another streaming server with cluster ID "test-cluster"/,
      );
    });
  });
});
