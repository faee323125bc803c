// Ready-made PUB frames (src/streaming/raw-frames.ts), the streaming bus's publishes
// over `-ns`, against nats-server: a subscriber gets what the `nats` client's publish()
// would have delivered (subject, reply, data byte for byte, in order with the client's
// own publishes), and what the client would write differently is left to it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { connect, createInbox, type Msg, type NatsConnection } from 'nats';
import { plainToken, RawFrames } from '../../src/streaming/raw-frames.js';
import { JetStreamCluster, skipWithoutNatsServer } from '../helpers/jetstream-cluster.js';
import { eventually } from './stan.js';

describe('streaming bus: PUB frames', { skip: skipWithoutNatsServer() }, () => {
  let cluster: JetStreamCluster | undefined;
  let nc: NatsConnection | undefined;
  let frames: RawFrames;

  before(async () => {
    cluster = await JetStreamCluster.start(1);
    nc = await connect({ servers: cluster.urls });
    const f = RawFrames.of(nc);
    assert.ok(f !== null, "the client's protocol handler takes raw frames");
    frames = f;
  });

  after(async () => {
    await nc?.close();
    await cluster?.stop();
  });

  it('delivers each frame as publish() would, in order with the client', async () => {
    const subject = `frames.${createInbox()}`;
    const got: Msg[] = [];
    nc!.subscribe(`${subject}.>`, { callback: (_err, m) => got.push(m) });
    await nc!.flush();
    const sent: { subject: string; reply: string | undefined; data: Buffer }[] = [];
    const whole = randomBytes(70_000);
    for (let i = 0; i < 300; i++) {
      const s = `${subject}.${i % 7}`;
      const reply = i % 3 === 0 ? undefined : `_INBOX.r${i}`;
      const size = [0, 1, 128, 1024, 65_000][i % 5]!;
      const start = i % 11;
      const data = whole.subarray(start, start + size);
      if (i % 10 === 9) {
        // Through the client: it must come after the frames queued before it.
        frames.flush();
        nc!.publish(s, data, reply !== undefined ? { reply } : undefined);
      } else if (i % 2 === 0) {
        assert.ok(frames.addPub(s, reply ?? null, whole, start, start + size));
      } else {
        assert.ok(frames.addPub(s, reply ?? null, new Uint8Array(data)));
      }
      sent.push({ subject: s, reply, data: Buffer.from(data) });
    }
    await eventually(() => got.length === sent.length, 'every message delivered');
    for (let i = 0; i < sent.length; i++) {
      assert.equal(got[i]!.subject, sent[i]!.subject, `subject of ${i}`);
      assert.equal(got[i]!.reply || undefined, sent[i]!.reply, `reply of ${i}`);
      assert.ok(Buffer.from(got[i]!.data).equals(sent[i]!.data), `data of ${i}`);
    }
  });

  it('leaves to the client what it would write differently', () => {
    const max = nc!.info!.max_payload;
    assert.equal(frames.addPub('a b', null, new Uint8Array(1)), false);
    assert.equal(frames.addPub('a.b', 'r\tx', new Uint8Array(1)), false);
    assert.equal(frames.addPub('a.é', null, new Uint8Array(1)), false);
    assert.equal(frames.addPub('', null, new Uint8Array(1)), false);
    assert.equal(frames.addPub('a.b', '', new Uint8Array(1)), false);
    assert.equal(frames.addPub('a.b', null, new Uint8Array(max + 1)), false);
    assert.equal(frames.addPub('a.b', null, new Uint8Array(max)), true);
    frames.flush();
    assert.equal(plainToken('_INBOX.abc.*'), true);
    assert.equal(plainToken('x\x7f'), false);
  });
});
