// The clustered Leader's ready-made HPUB frames (src/streaming/store/jetstream/frames.ts)
// against nats-server's JetStream: what a stream stores from them is what the Leader
// meant (the expected last sequence honoured, the timestamp's decimal as
// Long.toString() writes it, the reply header, the data byte for byte), and what the
// `nats` client would write differently is left to it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import Long from 'long';
import { connect, createInbox, type JetStreamManager, type NatsConnection } from 'nats';
import { FrameWriter } from '../../src/streaming/store/jetstream/frames.js';
import { JetStreamCluster, skipWithoutNatsServer } from '../helpers/jetstream-cluster.js';
import { eventually } from './stan.js';

const STREAM = 'FRAMES';
const SUBJECT = 'frames.x';

describe(
  'clustered Leader: HPUB frames into a JetStream stream',
  { skip: skipWithoutNatsServer() },
  () => {
    let cluster: JetStreamCluster | undefined;
    let client: NatsConnection | undefined;
    let jsm: JetStreamManager;
    let frames: FrameWriter;
    const inbox = createInbox();
    const acks: string[] = [];

    before(async () => {
      cluster = await JetStreamCluster.start(1);
      client = await connect({ servers: cluster.urls });
      const nc = client;
      jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: STREAM, subjects: [SUBJECT] });
      nc.subscribe(inbox, { callback: (_err, m) => acks.push(Buffer.from(m.data).toString()) });
      const writer = FrameWriter.of(nc);
      assert.ok(writer !== null, "the client's protocol handler takes raw frames");
      frames = writer;
    });

    after(async () => {
      await client?.close();
      await cluster?.stop();
    });

    const prefix = (): Buffer => FrameWriter.prefix(SUBJECT, inbox);

    it('stores each frame as the message meant, sequence for sequence', async () => {
      const timestamps = [
        '0',
        '7',
        '999999999',
        '1000000000',
        '4294967295',
        '4294967296',
        '281474976710656',
        '9007199254740993',
        '1795519269910123456',
        Long.MAX_VALUE.toString(),
        '-1000000007',
      ].map((t) => Long.fromString(t));
      const replies = ['', '_INBOX.reply.1', 'r\u00e9ponse.\u00fc'];
      const datas = [Buffer.alloc(0), Buffer.from('hello'), randomBytes(70_000)];
      const sent: { ts: Long; reply: string; data: Buffer }[] = [];
      for (let i = 0; i < timestamps.length; i++) {
        const m = { ts: timestamps[i]!, reply: replies[i % 3]!, data: datas[i % 3]! };
        // All queued in one turn: one write.
        assert.equal(
          frames.add(prefix(), sent.length, m.ts, Buffer.from(m.reply), m.data),
          true,
          `frame ${i + 1} queued`,
        );
        sent.push(m);
      }
      await eventually(() => acks.length === sent.length, 'every PubAck');
      assert.deepEqual(
        acks.map((a) => (JSON.parse(a) as { seq?: number }).seq),
        sent.map((_, i) => i + 1),
      );
      for (let i = 0; i < sent.length; i++) {
        const m = await jsm.streams.getMessage(STREAM, { seq: i + 1 });
        const want = sent[i]!;
        assert.equal(m.header.get('Stan-Timestamp'), want.ts.toString(), `timestamp of ${i + 1}`);
        assert.equal(m.header.get('Nats-Expected-Last-Sequence'), String(i));
        assert.equal(m.header.has('Stan-Reply'), want.reply !== '');
        if (want.reply !== '') assert.equal(m.header.get('Stan-Reply'), want.reply);
        assert.equal(Buffer.compare(Buffer.from(m.data), want.data), 0, `data of ${i + 1}`);
      }
    });

    it('a frame whose expected last sequence is not the last is refused by JetStream', async () => {
      const before = acks.length;
      const info = await jsm.streams.info(STREAM);
      assert.equal(
        frames.add(prefix(), info.state.last_seq - 1, Long.ONE, Buffer.alloc(0), Buffer.from('x')),
        true,
      );
      await eventually(() => acks.length === before + 1, 'the answer');
      assert.match(acks.at(-1)!, /wrong last sequence/);
      assert.equal((await jsm.streams.info(STREAM)).state.last_seq, info.state.last_seq);
    });

    it('leaves to the client what it would refuse or change, or a message over max_payload', () => {
      const ts = Long.fromNumber(1);
      for (const reply of ['a\r\nInjected: 1', ' spaced', 'tab\there']) {
        assert.equal(frames.add(prefix(), 0, ts, Buffer.from(reply), Buffer.from('x')), false);
      }
      const max = client!.info!.max_payload;
      assert.equal(frames.add(prefix(), 0, ts, Buffer.alloc(0), Buffer.alloc(max)), false);
    });
  },
);
