// JetStream deliveries across routes, as nats-server carries them: a delivery is routed on
// its inbox or deliver subject and takes its stream subject along after an `@` at the end
// of the ack reply (`RMSG $G _INBOX.x $JS.ACK.S.C.1.1.1.<ts>.0@w.1 3`), which the server
// of the receiving client takes off again. Both ways: a wirebus node in a cluster of
// nats-server -js nodes, and nats-server's clients using a wirebus node's JetStream.
// Skipped, with the reason, only where nats-server cannot be installed.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AckPolicy, connect, type Msg, type NatsConnection } from 'nats';
import { connect as connectV3 } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import {
  closeAll,
  referenceMissing,
  routeUrl,
  sleep,
  startNode,
  startReference,
  waitForAsync,
  type Node,
  type ReferenceServer,
} from './helpers.js';

const missing = referenceMissing();
const enc = new TextEncoder();
const dec = new TextDecoder();
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** One pull of one message by hand, as a client on `nc` sees it. */
async function pullOne(nc: NatsConnection, stream: string, consumer: string): Promise<Msg> {
  const inbox = `_INBOX.pull.${stream}`;
  const got: Msg[] = [];
  const sub = nc.subscribe(inbox, { callback: (_e, m) => got.push(m) });
  nc.publish(
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`,
    enc.encode('{"batch":1,"expires":3000000000}'),
    {
      reply: inbox,
    },
  );
  await waitForAsync('a pulled message', () => Promise.resolve(got.length > 0), 5000);
  sub.unsubscribe();
  return got[0]!;
}

/** Account A has JetStream, B has not, on every server; their users are a/a and b/b. */
const ACCOUNTS_CONF =
  'accounts {\n' +
  '  A: { jetstream: enabled, users: [{ user: a, password: a }] }\n' +
  '  B: { users: [{ user: b, password: b }] }\n' +
  '}\n';
const A = { user: 'a', pass: 'a' };

describe('JetStream deliveries across routes', { skip: missing ?? false }, () => {
  // A wirebus node without JetStream in a cluster of three nats-server -js nodes, all
  // with accounts A (JetStream) and B (none).
  let node: Node | null = null;
  const refs: ReferenceServer[] = [];
  const clients: NatsConnection[] = [];
  let admin: NatsConnection;

  before(async () => {
    if (missing !== null) return;
    const confDir = mkdtempSync(join(tmpdir(), 'wirebus-jsr-'));
    dirs.push(confDir);
    const conf = join(confDir, 'accounts.conf');
    writeFileSync(conf, ACCOUNTS_CONF);
    // nats-server's JetStream cluster wants routes configured: each is given the
    // wirebus node's, and the mesh forms by gossip.
    node = await startNode(
      {},
      {
        serverName: 'wb',
        security: {
          accounts: {
            A: { users: [{ user: 'a', password: 'a' }], jetstream: true },
            B: { users: [{ user: 'b', password: 'b' }] },
          },
        },
      },
    );
    for (const name of ['r1', 'r2', 'r3']) {
      const dir = mkdtempSync(join(tmpdir(), 'wirebus-jsr-'));
      dirs.push(dir);
      refs.push(
        await startReference([routeUrl(node)], ['-js', '-sd', dir, '-c', conf, '-n', name]),
      );
    }
    admin = await connect({ servers: refs[0]!.url, ...A });
    clients.push(admin);
    const jsm = await admin.jetstreamManager({ checkAPI: false });
    // The meta group elects its leader a moment after the nodes meet.
    await waitForAsync(
      'a JetStream meta leader',
      async () =>
        await jsm.getAccountInfo().then(
          () => true,
          () => false,
        ),
      15_000,
    );
  });

  after(async () => {
    for (const c of clients) await c.close();
    await closeAll([node]);
    for (const r of refs) await r.stop();
  });

  it("a wirebus node in a nats-server JetStream cluster: its clients pull, see the stream's subject and ack", async () => {
    const jsm = await admin.jetstreamManager({ checkAPI: false });
    await jsm.streams.add({ name: 'M', subjects: ['m.>'], num_replicas: 3 });
    await jsm.consumers.add('M', { durable_name: 'd', ack_policy: AckPolicy.Explicit });

    const nc = await connect({ servers: `127.0.0.1:${node!.port}`, ...A });
    clients.push(nc);
    await waitForAsync(
      'the stream reachable from the wirebus node',
      async () =>
        await nc.request('m.1', enc.encode('hi'), { timeout: 1000 }).then(
          () => true,
          () => false,
        ),
      10_000,
    );
    const m = await pullOne(nc, 'M', 'd');
    assert.equal(m.subject, 'm.1');
    assert.match(m.reply ?? '', /^\$JS\.ACK\.M\.d\.1\.1\.1\.\d+\.0$/);
    assert.equal(dec.decode(m.data), 'hi');
    nc.publish(m.reply!, enc.encode('+ACK'));
    await nc.flush();
    await waitForAsync(
      'the ack at the consumer',
      async () => (await jsm.consumers.info('M', 'd')).ack_floor.stream_seq === 1,
      5000,
    );
    assert.equal((await jsm.consumers.info('M', 'd')).num_ack_pending, 0);
  });

  it("the wirebus node's clients use the cluster's JetStream API: streams, consumers, direct gets and KV", async () => {
    // Through the system account, as a nats-server node without JetStream routes it; the
    // request names the account (A), so the stream is A's.
    const nc = await connect({ servers: `127.0.0.1:${node!.port}`, ...A });
    clients.push(nc);
    const jsm = await nc.jetstreamManager();
    const info = await jsm.getAccountInfo();
    assert.equal(info.streams >= 0, true);
    const si = await jsm.streams.add({
      name: 'API',
      subjects: ['api.>'],
      num_replicas: 3,
      allow_direct: true,
    });
    assert.equal(si.config.name, 'API');
    assert.equal(si.cluster?.replicas?.length, 2);
    // A bad request gets the cluster's own error.
    await assert.rejects(
      jsm.streams.add({ name: 'X.Y', subjects: ['xy'] }),
      /invalid stream name/i,
    );
    await jsm.consumers.add('API', { durable_name: 'c', ack_policy: AckPolicy.Explicit });
    const js = nc.jetstream();
    const ack = await js.publish('api.a', enc.encode('one'));
    assert.deepEqual([ack.stream, ack.seq, ack.duplicate], ['API', 1, false]);
    const c = await js.consumers.get('API', 'c');
    const m = await c.next({ expires: 5000 });
    assert.ok(m !== null);
    assert.equal(m.subject, 'api.a');
    assert.equal(m.string(), 'one');
    await m.ackAck();
    assert.equal((await jsm.consumers.info('API', 'c')).num_ack_pending, 0);
    assert.deepEqual(
      (await jsm.consumers.list('API').next()).map((ci) => ci.name),
      ['c'],
    );
    const direct = await nc.request('$JS.API.DIRECT.GET.API', enc.encode('{"seq":1}'), {
      timeout: 3000,
    });
    assert.equal(direct.headers?.get('Nats-Subject'), 'api.a');
    assert.equal(dec.decode(direct.data), 'one');
    assert.equal((await jsm.streams.getMessage('API', { last_by_subj: 'api.a' })).seq, 1);
    assert.ok((await jsm.streams.names().next()).includes('API'));

    const kv = await js.views.kv('WBKV', { replicas: 3 });
    const seen: string[] = [];
    const watch = await kv.watch();
    const watching = (async () => {
      for await (const e of watch) {
        seen.push(`${e.key}=${dec.decode(e.value)}`);
        if (e.key === 'y') break;
      }
    })();
    await kv.put('x', enc.encode('1'));
    await kv.put('y', enc.encode('2'));
    await watching;
    assert.deepEqual(seen, ['x=1', 'y=2']);
    assert.equal((await kv.get('x'))?.string(), '1');
    assert.equal(
      await kv.create('x', enc.encode('again')).then(
        () => 'created',
        () => 'refused',
      ),
      'refused',
    );

    // The stream is account A's at the reference, as its own client of A sees it.
    const refJsm = await admin.jetstreamManager({ checkAPI: false });
    assert.equal((await refJsm.streams.info('API')).state.messages, 1);
    assert.equal(await jsm.streams.delete('API'), true);
    await assert.rejects(jsm.streams.info('API'), /stream not found/);

    // B has no JetStream, here or there: nothing imported, no responders.
    const b = await connect({ servers: `127.0.0.1:${node!.port}`, user: 'b', pass: 'b' });
    clients.push(b);
    await assert.rejects(
      b.request('$JS.API.INFO', new Uint8Array(0), { timeout: 2000 }),
      (e: Error & { code?: string }) => e.code === '503',
    );
  });

  it("nats.js v3 on the wirebus node: the cluster's KV and a multi-chunk object store", async () => {
    const nc = await connectV3({ servers: `127.0.0.1:${node!.port}`, ...A });
    try {
      const kv = await new Kvm(nc).create('V3KV', { replicas: 3 });
      await kv.put('a', 'hello');
      assert.equal((await kv.get('a'))?.string(), 'hello');
      const os = await new Objm(nc).create('V3OBJ', { replicas: 3 });
      const data = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251);
      await os.putBlob({ name: 'blob' }, data);
      const back = await os.getBlob('blob');
      assert.equal(back?.length, data.length);
      assert.ok(back.every((v, i) => v === i % 251));
      const jsm = await jetstreamManager(nc);
      assert.deepEqual(
        (await jsm.streams.names().next()).filter((n) => n.startsWith('OBJ_')),
        ['OBJ_V3OBJ'],
      );
    } finally {
      await nc.close();
    }
  });

  it("nats-server's clients use a wirebus node's JetStream: pull, push, ack and a KV watch", async () => {
    const node = await startNode({}, { jetstream: true });
    const ref = await startReference([routeUrl(node)]);
    const nc = await connect({ servers: ref.url });
    try {
      // Until the route has told the nats-server node of wirebus's API subscription, that
      // node's own import takes a request and nothing answers: short tries, no API check.
      const probe = await nc.jetstreamManager({ checkAPI: false, timeout: 500 });
      await waitForAsync(
        "wirebus's JetStream API from the nats-server node",
        async () =>
          await probe.getAccountInfo().then(
            () => true,
            () => false,
          ),
        10_000,
      );
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'W', subjects: ['w.>'] });
      await jsm.consumers.add('W', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
      assert.equal((await nc.jetstream().publish('w.1', enc.encode('hey'))).seq, 1);
      const m = await pullOne(nc, 'W', 'd');
      assert.equal(m.subject, 'w.1');
      assert.match(m.reply ?? '', /^\$JS\.ACK\.W\.d\.1\.1\.1\.\d+\.0$/);
      nc.publish(m.reply!, enc.encode('+ACK'));
      await nc.flush();
      await waitForAsync(
        'the ack at the consumer',
        async () => (await jsm.consumers.info('W', 'd')).num_ack_pending === 0,
        5000,
      );
      // Push: the KV watch is an ordered push consumer delivering to an inbox.
      const kv = await nc.jetstream().views.kv('B');
      const seen: string[] = [];
      const watch = await kv.watch();
      const watching = (async () => {
        for await (const e of watch) {
          seen.push(`${e.key}=${dec.decode(e.value)}`);
          if (e.key === 'b') break;
        }
      })();
      await kv.put('a', enc.encode('1'));
      await kv.put('b', enc.encode('2'));
      await watching;
      assert.deepEqual(seen, ['a=1', 'b=2']);
      assert.equal((await kv.get('a'))?.string(), '1');
    } finally {
      await nc.close();
      await ref.stop();
      await closeAll([node]);
      await sleep(0);
    }
  });
});
