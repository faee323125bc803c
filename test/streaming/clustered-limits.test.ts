// A clustered node on a single JetStream server (`nats-server -js`: streams and
// buckets fall back to one replica): the limits behave as in STANDALONE and JetStream
// follows them (max_msgs purges the channel's stream, max_inactivity deletes it), and
// the documented mapping holds for a JetStream application reading the state directly.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connect as natsConnect, DeliverPolicy, type NatsConnection } from 'nats';
import { skipWithoutNatsServer } from '../helpers/jetstream-cluster.js';
import { freePort, startWirebus, type WirebusProcess } from '../helpers/process.js';
import {
  connect,
  eventually,
  getJson,
  publish,
  subscribe,
  unsubscribe,
  type Stan,
} from './stan.js';

const skip = skipWithoutNatsServer();

describe('a clustered node: limits and the JetStream mapping', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-clustered-limits-'));
  let server: ChildProcess | undefined;
  let node: WirebusProcess | undefined;
  let nc: NatsConnection | undefined;
  let sc: Stan | undefined;
  after(async () => {
    sc?.close();
    await nc?.close();
    await node?.stop();
    server?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('max_msgs purges the stream, max_inactivity deletes it; clients and channels in the bucket', async () => {
    const port = await freePort();
    server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
      stdio: 'ignore',
    });
    const url = `nats://127.0.0.1:${port}`;
    const http = await freePort();
    node = await startWirebus(
      await freePort(),
      [
        '-m',
        String(http),
        '-ns',
        url,
        '--clustered',
        '--cluster_node_id',
        'solo',
        '-mm',
        '10',
        '-mi',
        '2s',
      ],
      'Cluster JetStream',
      30_000,
    );
    assert.match(node.log(), /replicas 1/);
    await eventually(
      async () => (await getJson(`http://127.0.0.1:${http}/streaming/serverz`)).role === 'Leader',
      'the node Leader',
      20_000,
    );
    sc = await connect(url, 'test-cluster', 'limits-client');
    // An active subscription keeps the channel from max_inactivity until the end.
    const watcher = await subscribe(sc, 'limited.channel', sc.subscriptionOptions());
    for (let i = 1; i <= 25; i++) await publish(sc, 'limited.channel', `p${i}`);

    // As STANDALONE: the oldest go past max_msgs.
    const ch = await getJson(
      `http://127.0.0.1:${http}/streaming/channelsz?channel=limited.channel`,
    );
    assert.equal(ch.msgs, 10);
    assert.equal(ch.first_seq, 16);
    assert.equal(ch.last_seq, 25);

    // The mapping: stream by subject, sequence = channel sequence, body = data.
    nc = await natsConnect({ servers: url });
    const jsm = await nc.jetstreamManager();
    const name = await jsm.streams.find('_STAN.ch.test-cluster.limited.channel');
    assert.equal(name, 'STAN_test-cluster_limited_channel');
    await eventually(
      async () => (await jsm.streams.info(name)).state.first_seq === 16,
      'the stream purged to the channel first sequence',
    );
    const info = await jsm.streams.info(name);
    assert.equal(info.state.messages, 10);
    assert.equal(
      info.config.description,
      'NATS Streaming channel "limited.channel" of cluster "test-cluster"',
    );
    const consumer = await nc.jetstream().consumers.get(name, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: 1,
    });
    const read: string[] = [];
    for await (const m of await consumer.fetch({ max_messages: 10, expires: 5000 })) {
      read.push(`${m.seq}:${Buffer.from(m.data).toString()}`);
      assert.match(m.headers?.get('Stan-Timestamp') ?? '', /^\d{19}$/);
      if (read.length === 10) break;
    }
    assert.deepEqual(
      read,
      Array.from({ length: 10 }, (_, i) => `${i + 16}:p${i + 16}`),
    );

    // The state bucket: the client and the channel under their documented keys.
    const kv = await nc.jetstream().views.kv('STAN_test-cluster_state', { bindOnly: true });
    const client = await kv.get('client.limits-client');
    const json = (v: Uint8Array): Record<string, unknown> =>
      JSON.parse(Buffer.from(v).toString()) as Record<string, unknown>;
    assert.equal(json(client!.value).id, 'limits-client');
    const chanKey = `chan.${Buffer.from('limited.channel').toString('base64url')}`;
    const chan = await kv.get(chanKey);
    assert.equal(json(chan!.value).stream, name);

    // max_inactivity: no publish, no subscription for 2 s: the channel and its stream go.
    await unsubscribe(watcher.sub);
    await eventually(
      async () => (await getJson(`http://127.0.0.1:${http}/streaming/serverz`)).channels === 0,
      'the idle channel deleted',
      10_000,
    );
    await eventually(async () => {
      const names: string[] = [];
      for await (const n of jsm.streams.names()) names.push(n);
      return !names.includes(name);
    }, 'its stream deleted');
    await eventually(async () => (await kv.get(chanKey))?.operation === 'DEL', 'its key deleted');
  });
});
