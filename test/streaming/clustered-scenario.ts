// Clustered streaming as operators run it: three `bin/wirebus --clustered` nodes (the
// reference's command line) on a JetStream engine, node-nats-streaming clients.
// /streaming/serverz of every node is polled all along: never two Leaders. The same
// scenario runs on two engines:
//
// - 'nats-server': three nats-server 2.9 nodes with JetStream clustering (R3);
// - 'wirebus': one `bin/wirebus -js`, wirebus's own JetStream, as a single engine node.
//
// Steps:
// - kill -9 of the Leader during acknowledged publishing: another node leads within
//   seconds; every acknowledged message is in the channel's stream exactly once, in
//   order, sequences contiguous (read by a plain JetStream consumer: the mapping);
//   the durable and the queue durable get every acknowledged message (at-least-once).
// - the Followers' clientsz and channelsz answer what the Leader's do, as the
//   reference's Followers (they apply the replicated state).
// - kill -9 of one JetStream server (of the single engine node, which is then started
//   again): once clients connect again, every publish gets its PubAck (none times
//   out), every acknowledged message is stored once, in order, and delivered.
// - the killed node starts again and rejoins as a Follower with the replicated state.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { connect as natsConnect, DeliverPolicy } from 'nats';
import { JetStreamCluster, skipWithoutNatsServer } from '../helpers/jetstream-cluster.js';
import { freePort, startWirebus, type WirebusProcess } from '../helpers/process.js';
import { connect, eventually, getJson, sleep, subscribe, type Stan } from './stan.js';

const CHANNEL = 'orders';
const RECONNECTING = {
  ackTimeout: 3000,
  reconnect: true,
  maxReconnectAttempts: -1,
  reconnectTimeWait: 250,
};

interface NodeProc {
  readonly id: string;
  readonly http: number;
  proc: WirebusProcess | null;
}

export function clusteredScenario(engine: 'nats-server' | 'wirebus'): void {
  const title =
    engine === 'nats-server'
      ? 'clustered streaming on a JetStream cluster (three nats-server nodes)'
      : "clustered streaming on wirebus's own JetStream (bin/wirebus -js)";
  const skip = engine === 'nats-server' ? skipWithoutNatsServer() : undefined;
  describe(title, { skip }, () => {
    let cluster: JetStreamCluster | undefined;
    const jsc = (): JetStreamCluster => cluster!;
    const dir = mkdtempSync(join(tmpdir(), 'wirebus-clustered-'));
    const nodes: NodeProc[] = [];
    const killed: NodeProc[] = [];
    const clients: Stan[] = [];
    let poll: NodeJS.Timeout | undefined;
    let maxLeaders = 0;
    const roles = new Map<string, string>();

    /**
     * Starts a node; ready once it runs (`readyText`): a node waits for its JetStream
     * itself, and the poller sees its role once it serves /streaming/serverz.
     */
    async function startNode(n: NodeProc, readyText = 'Cluster JetStream'): Promise<void> {
      const peers = ['a', 'b', 'c'].filter((p) => p !== n.id).join(',');
      n.proc = await startWirebus(
        await freePort(),
        [
          '-m',
          String(n.http),
          '-ns',
          jsc().urls,
          '--clustered',
          '--cluster_node_id',
          n.id,
          '--cluster_peers',
          peers,
          '--cluster_log_path',
          join(dir, n.id, 'raft'),
          '-st',
          'FILE',
          '--dir',
          join(dir, n.id),
        ],
        readyText,
        30_000,
      );
    }

    async function serverz(n: NodeProc): Promise<Record<string, unknown>> {
      return getJson(`http://127.0.0.1:${n.http}/streaming/serverz`);
    }

    const leader = (): NodeProc | undefined =>
      nodes.find((n) => n.proc !== null && roles.get(n.id) === 'Leader');
    /** The Leader once there is one (a lapsed lease leaves none for a moment). */
    const someLeader = async (): Promise<NodeProc> => {
      await eventually(() => leader() !== undefined, 'a Leader', 20_000);
      return leader()!;
    };

    before(async () => {
      cluster = await JetStreamCluster.start(3, engine);
      for (const id of ['a', 'b', 'c']) nodes.push({ id, http: await freePort(), proc: null });
      await Promise.all(nodes.map((n) => startNode(n)));
      let polling = false;
      poll = setInterval(() => {
        if (polling) return;
        polling = true;
        void Promise.all(
          nodes.map(async (n) => {
            if (n.proc === null) {
              roles.delete(n.id);
              return;
            }
            try {
              roles.set(n.id, String((await serverz(n)).role));
            } catch {
              roles.delete(n.id);
            }
          }),
        ).then(() => {
          polling = false;
          const leaders = [...roles.values()].filter((r) => r === 'Leader').length;
          maxLeaders = Math.max(maxLeaders, leaders);
        });
      }, 50);
    });

    after(async () => {
      if (poll !== undefined) clearInterval(poll);
      for (const sc of clients) sc.close();
      for (const n of nodes) await n.proc?.stop();
      // For a look after a failure: CLUSTERED_TEST_LOGS=<dir> keeps every node's log.
      const logs = process.env.CLUSTERED_TEST_LOGS;
      if (logs !== undefined) {
        for (const n of [...nodes, ...killed]) {
          writeFileSync(join(logs, `${n.id}-${Date.now()}.log`), n.proc?.log() ?? '');
        }
        for (const j of cluster?.nodes ?? []) writeFileSync(join(logs, `${j.name}.log`), j.log);
      }
      await cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
      assert.equal(maxLeaders <= 1, true, 'never two Leaders');
    });

    it('elects one Leader; serverz, storez and isFTActive as the reference in clustered mode', async () => {
      await eventually(
        () =>
          [...roles.values()].filter((r) => r === 'Leader').length === 1 &&
          [...roles.values()].filter((r) => r === 'Follower').length === 2,
        'one Leader and two Followers',
        20_000,
      );
      const l = leader()!;
      const z = await serverz(l);
      // The reference's clustered serverz: state CLUSTERED, then role and node_id.
      assert.deepEqual(Object.keys(z).slice(0, 8), [
        'cluster_id',
        'server_id',
        'version',
        'go',
        'state',
        'role',
        'node_id',
        'now',
      ]);
      assert.equal(z.state, 'CLUSTERED');
      assert.equal(z.node_id, l.id);
      const storez = await getJson(`http://127.0.0.1:${l.http}/streaming/storez`);
      assert.equal(storez.type, 'JETSTREAM');
      for (const n of nodes) {
        const res = await fetch(`http://127.0.0.1:${n.http}/streaming/isFTActive`);
        assert.equal(res.status, 204);
      }
      assert.match(l.proc!.log(), /ignored: --cluster_log_path/);
    });

    // Acknowledged payloads, and what the durable and the queue durable received.
    const acked: string[] = [];
    const durableSeen = new Map<string, number>();
    const queueSeen = new Map<string, number>();
    let pub: Stan;

    // node-nats-streaming calls pending publish callbacks without an error when its
    // connection closes: only a callback while connected is a PubAck.
    /** Why the last publishAcked() failed, for the assertion messages. */
    let lastPublishError = '';
    /** Whether `payload` got its PubAck; a refused or failed publish is sent again. */
    function publishAcked(payload: string): Promise<boolean> {
      return new Promise((resolve) => {
        try {
          pub.publish(CHANNEL, payload, (err) => {
            if (err !== undefined && err !== null) lastPublishError = String(err);
            resolve(err === undefined || err === null);
          });
        } catch (err) {
          // The client gave its connection up (its pings went unanswered while a lease
          // lapsed): as applications do, it connects again, and the publish is retried.
          lastPublishError = `publish threw: ${String(err)}`;
          resolve(false);
        }
      });
    }

    it('kill -9 of the Leader during acked publishing: every acked message once, in order', async (t: TestContext) => {
      const url = jsc().nodes[0]!.url;
      // As applications run: the NATS connection reconnects (with the single engine
      // node, that is also the clients' NATS server, and it is killed below).
      const opts = RECONNECTING;
      pub = await connect(url, 'test-cluster', 'pub', opts);
      const consumer = await connect(url, 'test-cluster', 'consumer', opts);
      clients.push(pub, consumer);
      const count =
        (seen: Map<string, number>) => (m: { getData(): string | Buffer; ack(): void }) => {
          const p = String(m.getData());
          seen.set(p, (seen.get(p) ?? 0) + 1);
          m.ack();
        };
      const durable = consumer
        .subscriptionOptions()
        .setDurableName('dur')
        .setManualAckMode(true)
        .setMaxInFlight(64)
        .setDeliverAllAvailable();
      await subscribe(consumer, CHANNEL, durable, undefined, count(durableSeen));
      const queue = consumer
        .subscriptionOptions()
        .setDurableName('qd')
        .setManualAckMode(true)
        .setMaxInFlight(64)
        .setDeliverAllAvailable();
      await subscribe(consumer, CHANNEL, queue, 'workers', count(queueSeen));

      for (let i = 1; i <= 100; i++) {
        assert.equal(await publishAcked(`m-${i}`), true);
        acked.push(`m-${i}`);
      }
      await eventually(() => durableSeen.size >= 100 && queueSeen.size >= 100, 'the first 100');

      // Eight publishers in flight; the Leader is killed in the middle.
      const old = await someLeader();
      let next = 100;
      const worker = async (): Promise<void> => {
        while (next < 400) {
          const p = `m-${++next}`;
          if (await publishAcked(p)) acked.push(p);
        }
      };
      const workers = Promise.all(Array.from({ length: 8 }, () => worker()));
      await eventually(() => acked.length >= 180, '80 more acked');
      killed.push({ ...old });
      const killedAt = performance.now();
      old.proc!.child.kill('SIGKILL');
      await new Promise((r) => old.proc!.child.once('exit', r));
      old.proc = null;
      await eventually(() => leader() !== undefined, 'another Leader', 20_000);
      // Informative only (no test asserts a timing): the failover as the poller saw it.
      t.diagnostic(`failover: ${Math.round(performance.now() - killedAt)} ms to another Leader`);
      assert.notEqual(leader()!.id, old.id);
      await workers;
      // Publishing goes on with the new Leader.
      for (let i = 401; i <= 450; i++) {
        if (await publishAcked(`m-${i}`)) acked.push(`m-${i}`);
      }
      assert.ok(acked.includes('m-450'), 'publishes acknowledged again after the failover');

      // The channel's stream, read by a plain JetStream consumer.
      const stored = await readChannelStream(jsc().urls);
      const seqs = stored.map((s) => s.seq);
      assert.deepEqual(
        seqs,
        Array.from({ length: seqs.length }, (_, i) => i + 1),
        'contiguous sequences from 1',
      );
      const times = new Map<string, number>();
      for (const s of stored) times.set(s.data, (times.get(s.data) ?? 0) + 1);
      for (const p of acked) assert.equal(times.get(p), 1, `${p} stored exactly once`);
      // In order: the first 100 were published one at a time.
      assert.deepEqual(
        stored.slice(0, 100).map((s) => s.data),
        acked.slice(0, 100),
      );
      // Durable positions survived: every acked message reaches both (again at most
      // for the last moments before the kill).
      await eventually(
        () => acked.every((p) => durableSeen.has(p) && queueSeen.has(p)),
        'every acked message delivered to the durable and the queue durable',
        20_000,
      );
      const again = [...durableSeen.values()].filter((n) => n > 1).length;
      assert.ok(again < 300, `only the last moments come again (${again})`);
      const z = await serverz(await someLeader());
      assert.equal(z.total_msgs, stored.length);
    });

    it('a burst beyond the write window: every message acked, stored in order', async () => {
      // More PubAcks outstanding than the Leader keeps writes out (writer.ts WINDOW).
      // PubAcks may take seconds on a loaded machine (the single engine node stored
      // 3k messages a second at load 22): the client waits, no timing is asserted.
      const burst = await connect(jsc().nodes[0]!.url, 'test-cluster', 'burst', {
        ...RECONNECTING,
        ackTimeout: 30_000,
      });
      clients.push(burst);
      const n = 5000;
      const results = await Promise.all(
        Array.from(
          { length: n },
          (_, i) =>
            new Promise<boolean>((resolve) => {
              burst.publish('burst', `b-${i}`, (err) => {
                resolve(err === undefined || err === null);
              });
            }),
        ),
      );
      assert.equal(results.filter((ok) => ok).length, n);
      const stored = await readChannelStream(jsc().urls, 'burst');
      assert.deepEqual(
        stored.map((m) => m.data),
        Array.from({ length: n }, (_, i) => `b-${i}`),
      );
      burst.close();
    });

    it("the Followers' clientsz and channelsz answer what the Leader's do", async () => {
      const l = await someLeader();
      const followers = nodes.filter((n) => n.proc !== null && n !== l);
      assert.equal(followers.length, 1);
      const paths = [
        'clientsz',
        'clientsz?subs=1',
        'clientsz?client=consumer&subs=1',
        'channelsz',
        'channelsz?subs=1',
        `channelsz?channel=${CHANNEL}&subs=1`,
      ];
      // Volatile fields aside; the delivery state reaches JetStream within 100 ms.
      const strip = (o: Record<string, unknown>): Record<string, unknown> => {
        const { now: _now, server_id: _id, ...rest } = o;
        return rest;
      };
      for (const f of followers) {
        for (const path of paths) {
          let last = '';
          await eventually(
            async () => {
              const [mine, theirs] = await Promise.all(
                [f, l].map((n) => getJson(`http://127.0.0.1:${n.http}/streaming/${path}`)),
              );
              last = `${JSON.stringify(strip(mine!))}\n${JSON.stringify(strip(theirs!))}`;
              return JSON.stringify(strip(mine!)) === JSON.stringify(strip(theirs!));
            },
            `${path} of a Follower as the Leader's`,
            10_000,
          ).catch((err: unknown) => {
            throw new Error(`${String(err)}\nFollower, then Leader:\n${last}`);
          });
        }
        // Not empty: the client with its durable and queue durable, the channel with its messages.
        const clients = await getJson(`http://127.0.0.1:${f.http}/streaming/clientsz?subs=1`);
        const consumer = (clients.clients as { id: string; subs_count: number }[]).find(
          (c) => c.id === 'consumer',
        );
        assert.equal(consumer?.subs_count, 2);
        const ch = await getJson(
          `http://127.0.0.1:${f.http}/streaming/channelsz?channel=${CHANNEL}`,
        );
        assert.ok(Number(ch.last_seq) >= 400, `the channel's messages (${String(ch.last_seq)})`);
      }
    });

    it('a JetStream server killed with kill -9: clients go on, every PubAck comes, nothing acked lost', async (t: TestContext) => {
      // The streams and buckets it led elect another raft leader (4-9 s in nats-server
      // 2.9, twice that after a split vote). Meanwhile the channel's writes wait (the
      // Leader sends them again as soon as the stream has a leader) and, when it led the
      // lease bucket, the Leader is suspended and resumes (cluster/lease.ts): publishes
      // only take longer. The client waits for its PubAcks longer than such an election
      // (and less than node-nats-streaming's default of 30 s): none may time out.
      pub.close();
      pub = await connect(jsc().nodes[0]!.url, 'test-cluster', 'pub2', {
        ...RECONNECTING,
        ackTimeout: 20_000,
      });
      clients.push(pub);
      const victim = jsc().nodes.length - 1;
      const downAt = performance.now();
      await jsc().kill(victim);
      // The single engine node: everything waits for it to come back.
      if (engine === 'wirebus') {
        await sleep(1000);
        jsc().restart(victim);
      }
      // Core NATS drops what was on its way through the dead server (the Leader's own
      // connections may have been there, as with the reference's): clients work again
      // once a connect goes through.
      const probeUrl = jsc().nodes[0]!.url;
      await eventually(
        async () => {
          try {
            const probe = await connect(probeUrl, 'test-cluster', `probe-${Date.now()}`);
            probe.close();
            return true;
          } catch {
            return false;
          }
        },
        'a streaming connect with a JetStream server down',
        40_000,
      );
      t.diagnostic(`streaming again ${Math.round(performance.now() - downAt)} ms after the kill`);
      const before = acked.length;
      const failed: string[] = [];
      for (let i = 451; i <= 550; i++) {
        const p = `m-${i}`;
        if (await publishAcked(p)) acked.push(p);
        else failed.push(`${p}: ${lastPublishError}`);
      }
      t.diagnostic(
        `100 publishes done ${Math.round(performance.now() - downAt)} ms after the kill`,
      );
      assert.deepEqual(failed, [], 'every publish after the kill got its PubAck');
      await eventually(
        () => acked.every((p) => durableSeen.has(p) && queueSeen.has(p)),
        'every acknowledged message delivered after the kill',
        30_000,
      );
      assert.ok(leader() !== undefined, 'a Leader');
      if (engine === 'nats-server') {
        jsc().restart(victim);
        await jsc().waitForJetStream();
      }
      // Every acknowledged message is in the channel's stream once, the sequences
      // contiguous, and the ones published one at a time after the kill in their order
      // (read once the stream's own leader election, if any, is over).
      let stored: { seq: number; data: string }[] = [];
      await eventually(
        async () => {
          try {
            stored = await readChannelStream(jsc().urls);
            return true;
          } catch {
            return false;
          }
        },
        "the channel's stream readable",
        30_000,
      );
      assert.deepEqual(
        stored.map((m) => m.seq),
        Array.from({ length: stored.length }, (_, i) => i + 1),
        'contiguous sequences from 1',
      );
      const times = new Map<string, number>();
      for (const m of stored) times.set(m.data, (times.get(m.data) ?? 0) + 1);
      for (const p of acked) assert.equal(times.get(p), 1, `${p} stored exactly once`);
      const after = acked.slice(before);
      assert.deepEqual(
        stored.filter((m) => after.includes(m.data)).map((m) => m.data),
        after,
        'the publishes after the kill stored in order',
      );
    });

    it('the killed node starts again and rejoins as a Follower with the replicated state', async () => {
      const n = nodes.find((x) => x.proc === null)!;
      // Just after a JetStream server restarted, JetStream may take a while to answer.
      await startNode(n, 'Starting http monitor');
      await eventually(
        () => roles.get(n.id) === 'Follower',
        'the restarted node a Follower',
        40_000,
      );
      await eventually(
        async () => {
          // The Leader may change meanwhile (a lease that lapsed while JetStream re-elected).
          const l = leader();
          if (l === undefined || l === n) return false;
          const [mine, theirs] = await Promise.all([serverz(n), serverz(l)]);
          return mine.total_msgs === theirs.total_msgs && mine.channels === theirs.channels;
        },
        'the same messages as the Leader',
        10_000,
      );
      // Let the poller watch the settled cluster a moment longer.
      await sleep(300);
    });

    it('subscriptions answered just before the Leader dies are known to the next Leader', async () => {
      const old = await someLeader();
      const late = await connect(jsc().nodes[0]!.url, 'test-cluster', 'late', RECONNECTING);
      clients.push(late);
      const opts = (durable: string): ReturnType<Stan['subscriptionOptions']> =>
        late.subscriptionOptions().setDurableName(durable).setManualAckMode(true);
      // Both answered, then the Leader is killed at once: a response that went out
      // before the subscription's record was in the state bucket would lose it.
      await Promise.all([
        subscribe(late, CHANNEL, opts('fresh')),
        subscribe(late, CHANNEL, opts('fresh-q'), 'late-workers'),
      ]);
      old.proc!.child.kill('SIGKILL');
      killed.push({ ...old });
      await new Promise((r) => old.proc!.child.once('exit', r));
      old.proc = null;
      await eventually(() => leader() !== undefined, 'another Leader', 20_000);
      const l = leader()!;
      let subs: { client_id: string; durable_name?: string; queue_name?: string }[] = [];
      await eventually(
        async () => {
          const ch = await getJson(
            `http://127.0.0.1:${l.http}/streaming/channelsz?channel=${CHANNEL}&subs=1`,
          );
          subs = ch.subscriptions as typeof subs;
          return Array.isArray(subs);
        },
        "the new Leader's channelsz",
        10_000,
      );
      const mine = subs.filter((x) => x.client_id === 'late');
      assert.ok(
        mine.some((x) => x.durable_name === 'fresh'),
        `the durable survives: ${JSON.stringify(mine)}`,
      );
      assert.ok(
        mine.some((x) => x.queue_name === 'fresh-q:late-workers'),
        `the queue durable survives: ${JSON.stringify(mine)}`,
      );
    });
  });
}

/** Every message of the channel's stream, read directly as a JetStream application would. */
export async function readChannelStream(
  urls: string,
  channel = CHANNEL,
): Promise<{ seq: number; data: string }[]> {
  const nc = await natsConnect({ servers: urls.split(',') });
  try {
    const jsm = await nc.jetstreamManager();
    const name = await jsm.streams.find(`_STAN.ch.test-cluster.${channel}`);
    const info = await jsm.streams.info(name);
    const consumer = await nc.jetstream().consumers.get(name, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: 1,
    });
    const out: { seq: number; data: string }[] = [];
    const messages = await consumer.fetch({ max_messages: info.state.messages, expires: 5000 });
    for await (const m of messages) {
      out.push({ seq: m.seq, data: Buffer.from(m.data).toString() });
      if (out.length === info.state.messages) break;
    }
    return out;
  } finally {
    await nc.close();
  }
}
