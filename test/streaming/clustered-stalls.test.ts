// Clustered streaming: a stalled part of the JetStream engine holds back only what
// depends on it. Three nats-server nodes with JetStream clustering, one
// `bin/wirebus --clustered` node connected to js2 and js3 only, node-nats-streaming
// clients.
//
// - One channel's stream cannot answer (its only replica's nats-server, js1, is
//   stopped with SIGSTOP): another channel's PubAcks come all the same, since the
//   server batches each channel's publishes apart (publish-lane.ts). Once js1 goes on,
//   the stalled channel's messages are acknowledged and stored once each, in order.
// - The nats-server the Leader's lease connection is on is killed while a renewal
//   waits there: the renewal is given up and the next one goes out at once through
//   another server (cluster/lease.ts reconnected()) instead of after the given-up
//   one's timeout, which is as long as the lease (20 s here).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { connect as natsConnect, Empty, type JetStreamManager, type NatsConnection } from 'nats';
import { JetStreamCluster, skipWithoutNatsServer } from '../helpers/jetstream-cluster.js';
import { freePort, startWirebus, type WirebusProcess } from '../helpers/process.js';
import { readChannelStream } from './clustered-scenario.js';
import { connect, eventually, getJson, publish, sleep, withTimeout, type Stan } from './stan.js';

const CID = 'test-cluster';
const LEASE_BUCKET = `STAN_${CID}_lease`;
const STATE_STREAM = `KV_STAN_${CID}_state`;
const LEASE_STREAM = `KV_${LEASE_BUCKET}`;

describe(
  'clustered: a stalled stream or server holds back nothing else',
  {
    skip: skipWithoutNatsServer(),
  },
  () => {
    let cluster: JetStreamCluster | undefined;
    const jsc = (): JetStreamCluster => cluster!;
    let node: WirebusProcess | undefined;
    let nc: NatsConnection | undefined;
    let jsm: JetStreamManager;
    const clients: Stan[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'wirebus-stalls-'));
    let http = 0;

    const serverz = (): Promise<Record<string, unknown>> =>
      getJson(`http://127.0.0.1:${http}/streaming/serverz`);

    before(async () => {
      cluster = await JetStreamCluster.start(3);
      // A long lease: a renewal that waited for its timeout would take 20 s.
      const conf = join(dir, 'node.conf');
      writeFileSync(
        conf,
        'streaming { cluster { raft_lease_timeout: "20s", raft_election_timeout: "25s" } }\n',
      );
      http = await freePort();
      const [, js2, js3] = jsc().nodes;
      // Never through js1: stopping it must not stall the node's own connections.
      node = await startWirebus(
        await freePort(),
        [
          '-c',
          conf,
          '-m',
          String(http),
          '-ns',
          `${js2!.url},${js3!.url}`,
          '--clustered',
          '--cluster_node_id',
          'a',
        ],
        'Cluster JetStream',
        30_000,
      );
      await eventually(
        async () => (await serverz().catch(() => ({ role: '' }))).role === 'Leader',
        'the node leads',
        20_000,
      );
      nc = await natsConnect({ servers: jsc().nodes[0]!.url });
      jsm = await nc.jetstreamManager();
    });

    after(async () => {
      for (const n of cluster?.nodes ?? []) n.child?.kill('SIGCONT');
      for (const sc of clients) sc.close();
      await nc?.close();
      // For a look after a failure: CLUSTERED_TEST_LOGS=<dir> keeps the node's log.
      const logs = process.env.CLUSTERED_TEST_LOGS;
      if (logs !== undefined)
        writeFileSync(join(logs, `stalls-${Date.now()}.log`), node?.log() ?? '');
      await node?.stop();
      await cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Steps the raft leader of `stream` down until `wanted` says yes to its server's name. */
    async function placeLeader(stream: string, wanted: (server: string) => boolean): Promise<void> {
      await eventually(
        async () => {
          try {
            const leader = (await jsm.streams.info(stream)).cluster?.leader ?? '';
            if (leader === '') return false; // electing
            if (wanted(leader)) return true;
            await nc!.request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, Empty, { timeout: 5000 });
            await sleep(250);
          } catch {
            // Electing: ask again.
          }
          return false;
        },
        `the raft leader of ${stream} placed`,
        30_000,
      );
    }

    /** A publish that waits for its PubAck as long as the client does (30 s). */
    function send(sc: Stan, channel: string, data: string): Promise<void> {
      return new Promise((resolve, reject) => {
        sc.publish(channel, data, (err) => {
          if (err !== undefined && err !== null)
            reject(err instanceof Error ? err : new Error(err));
          else resolve();
        });
      });
    }

    it("one channel's stream stalled: another channel's PubAcks come; then the stalled one's, each message stored once, in order", async () => {
      const sc = await connect(jsc().nodes[1]!.url, CID, 'pub', { ackTimeout: 30_000 });
      clients.push(sc);
      await publish(sc, 'slow', 's-0');
      await publish(sc, 'fast', 'f-0');
      const slow = await jsm.streams.find(`_STAN.ch.${CID}.slow`);
      const fast = await jsm.streams.find(`_STAN.ch.${CID}.fast`);
      // The slow channel's stream: one replica, on js1 (scaling down keeps the leader).
      await placeLeader(slow, (s) => s === 'js1');
      const config = (await jsm.streams.info(slow)).config;
      await jsm.streams.update(slow, { ...config, num_replicas: 1 });
      await eventually(
        async () => {
          const info = await jsm.streams.info(slow);
          return info.cluster?.leader === 'js1' && (info.cluster.replicas ?? []).length === 0;
        },
        'the slow stream on js1 alone',
        10_000,
      );
      // Everything else the node writes to is led elsewhere: only the slow stream stalls.
      for (const s of [fast, LEASE_STREAM, STATE_STREAM]) await placeLeader(s, (x) => x !== 'js1');

      const js1 = jsc().nodes[0]!.child!;
      js1.kill('SIGSTOP');
      let slowAcked = 0;
      const slowSent = Array.from({ length: 20 }, (_, i) => `s-${i + 1}`);
      const slowDone = Promise.all(
        slowSent.map((p) =>
          send(sc, 'slow', p).then(() => {
            slowAcked++;
          }),
        ),
      ).then(
        () => null,
        (err: unknown) => err,
      );
      const fastSent = Array.from({ length: 20 }, (_, i) => `f-${i + 1}`);
      try {
        await withTimeout(
          Promise.all(fastSent.map((p) => send(sc, 'fast', p))),
          "the fast channel's PubAcks while the slow channel's stream is stalled",
          10_000,
        );
        assert.equal(slowAcked, 0, "the stalled channel's PubAcks wait for its stream");
      } finally {
        js1.kill('SIGCONT');
      }
      assert.equal(await withTimeout(slowDone, "the stalled channel's PubAcks", 30_000), null);

      const slowStored = await readChannelStream(jsc().urls, 'slow');
      assert.deepEqual(
        slowStored,
        ['s-0', ...slowSent].map((data, i) => ({ seq: i + 1, data })),
        'the stalled channel: every message once, in order',
      );
      const fastStored = await readChannelStream(jsc().urls, 'fast');
      assert.deepEqual(
        fastStored,
        ['f-0', ...fastSent].map((data, i) => ({ seq: i + 1, data })),
      );
      assert.equal((await serverz()).role, 'Leader');
    });

    it("the lease connection's server killed during a renewal: the next renewal goes out at once through another", async (t: TestContext) => {
      // Which of js2 and js3 the lease connection is on.
      const name = `_NSS-${CID}-a-lease`;
      let victim = -1;
      await eventually(
        async () => {
          for (const i of [1, 2]) {
            const connz = await getJson(`http://127.0.0.1:${jsc().nodes[i]!.http}/connz`);
            const conns = (connz.connections ?? []) as { name?: string }[];
            if (conns.some((c) => c.name === name)) victim = i;
          }
          return victim >= 0;
        },
        'the lease connection',
        10_000,
      );
      const server = jsc().nodes[victim]!.name;
      for (const s of [LEASE_STREAM, STATE_STREAM, await jsm.streams.find(`_STAN.ch.${CID}.fast`)])
        await placeLeader(s, (x) => x !== server);
      const kv = await nc!.jetstream().views.kv(LEASE_BUCKET, { bindOnly: true });

      // Renewals go out every 4 s (a fifth of the lease): after 5 s one waits there.
      const child = jsc().nodes[victim]!.child!;
      child.kill('SIGSTOP');
      await sleep(5000);
      const revision = (await kv.get('leader'))!.revision;
      const killedAt = performance.now();
      await jsc().kill(victim);
      // The given-up renewal would have waited until 15 s from now at least.
      await eventually(
        async () => ((await kv.get('leader').catch(() => null))?.revision ?? 0) > revision,
        'a renewal through another server',
        12_000,
      );
      t.diagnostic(`renewed ${Math.round(performance.now() - killedAt)} ms after the kill`);
      const entry = (await kv.get('leader'))!;
      assert.equal((JSON.parse(entry.string()) as { node: string }).node, 'a');
      assert.match(
        node!.log(),
        /the lease connection moved to 127\.0\.0\.1:\d+: renewing through it/,
      );
      assert.doesNotMatch(node!.log(), /Leader suspended|stepping down/);
      // Still the Leader, and serving.
      assert.equal((await serverz()).role, 'Leader');
      const sc = await connect(jsc().nodes[0]!.url, CID, 'after-kill', { ackTimeout: 30_000 });
      clients.push(sc);
      await withTimeout(send(sc, 'fast', 'f-after'), 'a PubAck after the kill', 20_000);
    });
  },
);
