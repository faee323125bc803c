// The PubAcks of a publish batch go out in runs, one per publisher inbox (Bus.publishRun,
// Server.publishInternalRun): a socket subscriber gets each PubAck of a run as its own
// message, in order, with the bytes of protobufjs; with a second subscriber, a queue
// group or none, the run is routed message by message and reaches whom routing reaches;
// a clustered node's gate holds a run and lets it through later, intact, though the
// batch's arrays were reused meanwhile.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect, type Msg, type NatsConnection } from 'nats';
import { PubAck, PubMsg } from '../../src/streaming/protocol/index.js';
import { PubMsgView } from '../../src/streaming/protocol/wire.js';
import { PubAckBatch } from '../../src/streaming/pub-acks.js';
import { InternalBus } from '../../src/streaming/bus-internal.js';
import { GatedBus } from '../../src/streaming/bus-gate.js';
import { withServer } from '../helpers/server.js';
import type { RunningServer } from '../../src/index.js';

/** `[reply, guid]` pairs in runs: a, a, a, b, a, a, c, c, ... */
function plan(n: number): [string, string][] {
  const out: [string, string][] = [];
  const replies = ['acks.a', 'acks.b', 'acks.c'];
  let r = 0;
  for (let i = 0; i < n; i++) {
    if (i % 7 === 3 || i % 11 === 0) r = (r + 1) % replies.length;
    out.push([replies[r]!, `guid-${i}-${'x'.repeat(i % 23)}`]);
  }
  return out;
}

function batchOf(acks: [string, string][]): PubAckBatch {
  const batch = new PubAckBatch();
  for (const [reply, guid] of acks) {
    const pub = Buffer.from(PubMsg.encode({ guid, subject: 'foo' }).finish());
    const view = new PubMsgView();
    assert.ok(view.decode(pub));
    batch.addFrom(reply, view.buf, view.guidStart, view.guidEnd);
  }
  return batch;
}

function expected(acks: [string, string][]): [string, string][] {
  return acks.map(([reply, guid]) => [reply, PubAck.decode(PubAck.encode({ guid }).finish()).guid]);
}

async function collect(
  nc: NatsConnection,
  subject: string,
  queue?: string,
): Promise<{ got: [string, string][] }> {
  const out = { got: [] as [string, string][] };
  nc.subscribe(subject, {
    ...(queue !== undefined ? { queue } : {}),
    callback: (_e, m: Msg) => {
      out.got.push([m.subject, PubAck.decode(m.data).guid]);
    },
  });
  await nc.flush();
  return out;
}

async function withBus(
  body: (s: RunningServer, bus: InternalBus, nc: NatsConnection) => Promise<void>,
): Promise<void> {
  await withServer({}, async (s) => {
    const bus = new InternalBus(s.server, 'pub-acks test');
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      await body(s, bus, nc);
    } finally {
      await nc.close();
      await bus.close();
    }
  });
}

test('one socket subscriber gets every PubAck of every run, in order', async () => {
  await withBus(async (s, bus, nc) => {
    const sink = await collect(nc, 'acks.*');
    const acks = plan(1000);
    const inBefore = s.server.inMsgs;
    const outBefore = s.server.outMsgs;
    batchOf(acks).send(bus, null);
    await nc.flush();
    assert.deepEqual(sink.got, expected(acks));
    // Counted as routed messages are: one in and one out each.
    assert.equal(s.server.inMsgs - inBefore, 1000);
    assert.equal(s.server.outMsgs - outBefore, 1000);
  });
});

test('two subscribers, a queue group, or none: each run reaches whom routing reaches', async () => {
  await withBus(async (_s, bus, nc) => {
    const all = await collect(nc, 'acks.*');
    const onlyA = await collect(nc, 'acks.a');
    const q1 = await collect(nc, 'acks.b', 'q');
    const q2 = await collect(nc, 'acks.b', 'q');
    const acks = plan(500);
    batchOf(acks).send(bus, null);
    // Nobody listens on acks.z: nothing is delivered, nothing breaks.
    batchOf([
      ['acks.z.1', 'g1'],
      ['acks.z.1', 'g2'],
    ]).send(bus, null);
    await nc.flush();
    const want = expected(acks);
    assert.deepEqual(all.got, want);
    assert.deepEqual(
      onlyA.got,
      want.filter(([r]) => r === 'acks.a'),
    );
    assert.deepEqual([...q1.got, ...q2.got].sort(), want.filter(([r]) => r === 'acks.b').sort());
  });
});

test('a gate holds a run and lets it through intact once the batch was reused', async () => {
  await withBus(async (_s, bus, nc) => {
    const sink = await collect(nc, 'acks.*');
    const gate = new GatedBus(bus, () => true);
    gate.hold();
    const first = plan(300);
    const batch = batchOf(first);
    batch.send(gate, null);
    // The batch's arrays are reused for the next one before the gate opens.
    batch.clear();
    const second: [string, string][] = [
      ['acks.c', 'later-1'],
      ['acks.c', 'later-2'],
    ];
    for (const [reply, guid] of second) {
      const pub = Buffer.from(PubMsg.encode({ guid, subject: 'foo' }).finish());
      const view = new PubMsgView();
      assert.ok(view.decode(pub));
      batch.addFrom(reply, view.buf, view.guidStart, view.guidEnd);
    }
    await nc.flush();
    assert.equal(sink.got.length, 0);
    gate.resume();
    batch.send(gate, null);
    await nc.flush();
    assert.deepEqual(sink.got, expected([...first, ...second]));
  });
});
