// nats.js v3 (@nats-io/transport-node with @nats-io/jetstream, @nats-io/kv and
// @nats-io/obj) against the embedded JetStream.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { withServer } from '../helpers/server.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

test('v3: stream, pull consumer, KV put/get/watch and object store', async () => {
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'V3', subjects: ['v3.>'] });
      const js = jetstream(nc);
      const ack = await js.publish('v3.a', enc.encode('hello'));
      assert.deepEqual([ack.stream, ack.seq], ['V3', 1]);
      await jsm.consumers.add('V3', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
      const c = await js.consumers.get('V3', 'd');
      const m = await c.next({ expires: 2000 });
      assert.equal(m === null ? '' : dec.decode(m.data), 'hello');
      assert.equal(await m?.ackAck(), true);

      const kv = await new Kvm(nc).create('k3');
      await kv.put('x', enc.encode('1'));
      assert.equal((await kv.get('x'))?.string(), '1');
      const watched: string[] = [];
      const w = await kv.watch({ key: 'x' });
      await kv.put('x', enc.encode('2'));
      for await (const e of w) {
        watched.push(e.string());
        if (watched.length === 2) break;
      }
      assert.deepEqual(watched, ['1', '2']);
      assert.equal((await kv.get('x'))?.string(), '2');

      const os = await new Objm(nc).create('o3');
      const blob = new Uint8Array(200_000).map((_, i) => i % 7);
      await os.putBlob({ name: 'b' }, blob);
      assert.deepEqual(await os.getBlob('b'), blob);
      assert.equal((await os.info('b'))?.size, blob.length);
    } finally {
      await nc.close();
    }
  });
});
