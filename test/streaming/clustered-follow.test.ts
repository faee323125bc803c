// A clustered Follower's warm view (src/streaming/store/jetstream/follow*.ts) against
// nats-server's JetStream, with the test in the Leader's place: it publishes to a
// channel's stream as a Leader does (the expected last sequence, the timestamp header,
// PubAcks to a Leader's ack subject) and confirms what JetStream acknowledged on the
// Leader's confirmation subject. The Follower applies what it hears once a
// confirmation of the same Leader covers it; it reads the stream only where it missed
// something (a gap, a lone publish), and never applies a write JetStream refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, headers, type JetStreamManager, type KV, type NatsConnection } from 'nats';
import { msgParts } from '../../src/streaming/store/jetstream/codec.js';
import { JsEngine } from '../../src/streaming/store/jetstream/engine.js';
import {
  ackSubjectPrefix,
  allAckSubjects,
  channelKey,
  confirmSubjectPrefix,
  channelStreamName,
  channelSubject,
  stateBucket,
} from '../../src/streaming/store/jetstream/names.js';
import { JetStreamStore } from '../../src/streaming/store/jetstream/store.js';
import { JetStreamCluster, skipWithoutNatsServer } from '../helpers/jetstream-cluster.js';
import { eventually, sleep } from './stan.js';

const CID = 'follow-cluster';
/** Two Leaders' ack subjects (a deposed one and its successor), and one a Follower cannot know. */
const OLD_LEADER = `${ackSubjectPrefix(CID, 'old')}.1`;
const NEW_LEADER = `${ackSubjectPrefix(CID, 'new')}.7`;
/** Where each of them confirms what JetStream stored for it. */
const CONFIRM = new Map([
  [OLD_LEADER, `${confirmSubjectPrefix(CID, 'old')}.1`],
  [NEW_LEADER, `${confirmSubjectPrefix(CID, 'new')}.7`],
]);
const UNHEARD = '_INBOX.unheard';

describe(
  'clustered Follower: live view from publishes and confirmations',
  { skip: skipWithoutNatsServer() },
  () => {
    let cluster: JetStreamCluster | undefined;
    let nc: NatsConnection | undefined;
    let jsm: JetStreamManager;
    let kv: KV;
    let engine: JsEngine | undefined;
    let follower: JetStreamStore | undefined;
    /** Every PubAck or error JetStream sent to a Leader's ack subject, as the test heard it. */
    const answers: { subject: string; body: string }[] = [];

    before(async () => {
      cluster = await JetStreamCluster.start(1);
      nc = await connect({ servers: cluster.urls });
      jsm = await nc.jetstreamManager();
      kv = await nc.jetstream().views.kv(stateBucket(CID));
      nc.subscribe(allAckSubjects(CID), {
        callback: (_err, m) =>
          answers.push({ subject: m.subject, body: Buffer.from(m.data).toString() }),
      });
      engine = await JsEngine.connect(cluster.urls, 'follower', 1);
      follower = await JetStreamStore.open({
        engine,
        clusterId: CID,
        failAfterMs: 15_000,
        onFailure: (reason) => assert.fail(`a Follower never writes: ${reason}`),
      });
    });

    after(async () => {
      follower?.abandon();
      await engine?.close();
      await nc?.close();
      await cluster?.stop();
    });

    /** A new channel as a Leader makes it: its key in the bucket, then its stream. */
    async function createChannel(name: string): Promise<void> {
      const stream = channelStreamName(CID, name);
      await kv.put(
        channelKey(name),
        JSON.stringify({ name, stream, subject: channelSubject(CID, name) }),
      );
      await jsm.streams.add({ name: stream, subjects: [channelSubject(CID, name)] });
    }

    /**
     * Publishes `data` as sequence `seq` of the channel, PubAck to `ack`; returns
     * JetStream's answer, and confirms the sequence as that Leader does when it was stored.
     */
    async function leaderPublish(
      name: string,
      seq: number,
      data: string,
      ack: string,
    ): Promise<string> {
      const before = answers.length;
      publishOnly(name, seq, data, ack);
      if (ack === UNHEARD) return '';
      return answered(before, name, ack, data);
    }

    /** JetStream's next answer on `ack` after `answers[before]`, confirmed when a PubAck. */
    async function answered(
      before: number,
      name: string,
      ack: string,
      data: string,
    ): Promise<string> {
      await eventually(
        () => answers.slice(before).some((a) => a.subject === ack),
        `JetStream's answer to ${data}`,
      );
      const body = answers.slice(before).find((a) => a.subject === ack)!.body;
      const stored = (JSON.parse(body) as { seq?: number }).seq;
      if (stored !== undefined) {
        const stream = channelStreamName(CID, name);
        nc!.publish(CONFIRM.get(ack)!, JSON.stringify({ stream, seq: stored }));
      }
      return body;
    }

    function publishOnly(name: string, seq: number, data: string, ack: string): void {
      const h = headers();
      h.set('Nats-Expected-Last-Sequence', String(seq - 1));
      h.set('Stan-Timestamp', String(1_700_000_000_000_000_000n + BigInt(seq)));
      nc!.publish(channelSubject(CID, name), Buffer.from(data), { reply: ack, headers: h });
    }

    /** The Follower's mirror of a channel: `seq:data` for every message it holds. */
    function mirror(name: string): string[] {
      const ch = follower!.mirrorChannel(name);
      if (ch === undefined) return [];
      const out: string[] = [];
      for (let seq = ch.msgs.firstSequence; seq <= ch.msgs.lastSequence; seq++) {
        const m = ch.msgs.lookup(seq);
        if (m === undefined) continue;
        out.push(`${seq}:${Buffer.from(msgParts(m.encoded).data).toString()}`);
        assert.equal(m.timestamp.toString(), String(1_700_000_000_000_000_000n + BigInt(seq)));
      }
      return out;
    }

    /** What the channel's stream holds, read by a plain JetStream client. */
    async function streamOf(name: string): Promise<string[]> {
      const s = channelStreamName(CID, name);
      const info = await jsm.streams.info(s);
      const out: string[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
        const m = await jsm.streams.getMessage(s, { seq });
        out.push(`${seq}:${Buffer.from(m.data).toString()}`);
      }
      return out;
    }

    it('applies what is stored, reads the stream after a gap and after a lone publish', async () => {
      const name = 'gaps';
      await createChannel(name);
      for (let seq = 1; seq <= 3; seq++) await leaderPublish(name, seq, `m${seq}`, NEW_LEADER);
      await eventually(() => mirror(name).length === 3, 'the first three messages followed');
      const reads = follower!.streamReads(name)!;

      // A steady flow is followed from what is heard: no read of the stream.
      for (let seq = 4; seq <= 40; seq++) await leaderPublish(name, seq, `m${seq}`, NEW_LEADER);
      await eventually(() => mirror(name).length === 40, 'forty messages followed');
      assert.equal(follower!.streamReads(name), reads, 'no stream read while nothing was missed');

      // The Follower cannot match the publishes of 41-43 (it cannot know that ack
      // subject): the confirmation of 44 shows the gap, and the stream is read.
      for (let seq = 41; seq <= 43; seq++) await leaderPublish(name, seq, `m${seq}`, UNHEARD);
      await leaderPublish(name, 44, 'm44', NEW_LEADER);
      await eventually(() => mirror(name).length === 44, 'the gap read from the stream');
      assert.equal(follower!.streamReads(name), reads + 1, 'one read for the gap');

      // The last message cannot be matched and nothing follows it: the lone publish
      // makes the stream read after a moment.
      await leaderPublish(name, 45, 'm45', UNHEARD);
      await eventually(
        () => mirror(name).length === 45,
        'the last message read from the stream',
        15_000,
      );
      assert.deepEqual(mirror(name), await streamOf(name));
      assert.deepEqual(
        mirror(name),
        Array.from({ length: 45 }, (_, i) => `${i + 1}:m${i + 1}`),
      );
    });

    it('applies a publish whose confirmation came first', async () => {
      const name = 'reversed';
      await createChannel(name);
      for (let seq = 1; seq <= 2; seq++) await leaderPublish(name, seq, `m${seq}`, NEW_LEADER);
      await eventually(() => mirror(name).length === 2, 'the first two messages followed');
      const reads = follower!.streamReads(name)!;
      // The confirmation of 3 and 4 overtakes their publishes (routes could reorder them).
      const stream = channelStreamName(CID, name);
      nc!.publish(CONFIRM.get(NEW_LEADER)!, JSON.stringify({ stream, seq: 4 }));
      await nc!.flush();
      const before = answers.length;
      publishOnly(name, 3, 'm3', NEW_LEADER);
      publishOnly(name, 4, 'm4', NEW_LEADER);
      await eventually(
        () => answers.slice(before).filter((a) => a.subject === NEW_LEADER).length === 2,
        'both stored',
      );
      await eventually(() => mirror(name).length === 4, 'both applied');
      assert.equal(follower!.streamReads(name), reads, 'applied from what was heard');
      assert.deepEqual(mirror(name), await streamOf(name));
    });

    it("never applies a deposed Leader's refused write", async () => {
      const name = 'deposed';
      await createChannel(name);
      for (let seq = 1; seq <= 2; seq++) await leaderPublish(name, seq, `old${seq}`, OLD_LEADER);
      await eventually(() => mirror(name).length === 2, 'the old Leader followed');

      // The new Leader writes 3 (the Follower cannot match it); the deposed Leader's
      // late write of 3 is refused by JetStream, and the Follower heard it.
      assert.match(await leaderPublish(name, 3, 'new3', UNHEARD), /^$/);
      assert.match(await leaderPublish(name, 3, 'late3', OLD_LEADER), /wrong last sequence: 3/);
      // Both Leaders write 4 back to back: the new one's is stored (and confirmed, which
      // covers 3 too), the late one refused.
      const before = answers.length;
      publishOnly(name, 4, 'new4', NEW_LEADER);
      assert.match(await leaderPublish(name, 4, 'late4', OLD_LEADER), /wrong last sequence: 4/);
      assert.match(await answered(before, name, NEW_LEADER, 'new4'), /"seq":4/);
      await eventually(() => mirror(name).length === 4, 'the new Leader followed');
      // Unmatched halves make the stream read after two seconds: still nothing refused.
      await sleep(2500);
      assert.deepEqual(mirror(name), ['1:old1', '2:old2', '3:new3', '4:new4']);
      assert.deepEqual(mirror(name), await streamOf(name));
    });
  },
);
