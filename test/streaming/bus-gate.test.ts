// The clustered node's gated bus (bus-gate.ts) on the `-ns` bus (a real NATS client
// of a wirebus core server), with a plain `nats` client as the world outside: while
// held, nothing comes in to the handlers and nothing goes out; resume() lets both
// through in their order, discard() drops them and a held request answers null.
//
// "Nothing yet" is observed without waiting: a sentinel sent after the held messages
// on the same connections (through the inner bus, which the gate does not hold)
// arrives after them, as NATS keeps the order of one connection's messages.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { startServer, type RunningServer } from '../../src/index.js';
import { GatedBus } from '../../src/streaming/bus-gate.js';
import { NatsBus } from '../../src/streaming/bus-nats.js';
import type { Bus } from '../../src/streaming/bus.js';

describe('the gated bus of a clustered node', () => {
  let running: RunningServer;
  let world: NatsConnection;
  let inner: Bus;
  let gate: GatedBus;
  let open = true;
  /** What the node's handlers got, in order. */
  const handled: string[] = [];
  /** What the world received from the node, in order. */
  const received: string[] = [];

  /** Resolves once `subject` came through `via` (after everything sent before it). */
  async function sentinel(via: 'in' | 'out', tag: string): Promise<void> {
    if (via === 'in') {
      const seen = new Promise<void>((resolve) => {
        const sub = inner.subscribe(`sentinel.${tag}`, () => {
          sub.unsubscribe();
          resolve();
        });
      });
      await inner.flush();
      world.publish(`sentinel.${tag}`);
      await seen;
      return;
    }
    const seen = new Promise<void>((resolve) => {
      const sub = world.subscribe(`sentinel.${tag}`, {
        callback: () => {
          sub.unsubscribe();
          resolve();
        },
      });
    });
    await world.flush();
    inner.publish(`sentinel.${tag}`, null, Buffer.alloc(0));
    await seen;
  }

  before(async () => {
    running = await startServer({ host: '127.0.0.1', port: 0 });
    const url = `nats://127.0.0.1:${running.port}`;
    world = await connect({ servers: url });
    world.subscribe('out.>', {
      callback: (_err, m) => {
        received.push(`${m.subject} ${Buffer.from(m.data).toString()}`);
      },
    });
    world.subscribe('ask', {
      callback: (_err, m) => {
        m.respond(Buffer.from('answer'));
      },
    });
    await world.flush();
    inner = await NatsBus.connect(url, 'gate test');
    gate = new GatedBus(inner, () => open);
    gate.subscribe('in.plain', (_s, reply, data) => {
      handled.push(
        `plain ${data.toString()}${reply !== null && reply !== '' ? ` reply=${reply}` : ''}`,
      );
    });
    gate.subscribeRange('in.range', (_s, _r, buf, start, end) => {
      handled.push(`range ${buf.toString('utf8', start, end)}`);
    });
    await inner.flush();
  });

  after(async () => {
    await gate.close();
    await world.close();
    await running.close();
  });

  it('passes everything while open', async () => {
    world.publish('in.plain', Buffer.from('a'));
    world.publish('in.range', Buffer.from('b'));
    await sentinel('in', 'open');
    gate.publish('out.x', null, Buffer.from('c'));
    await sentinel('out', 'open');
    assert.deepEqual(handled.splice(0), ['plain a', 'range b']);
    assert.deepEqual(received.splice(0), ['out.x c']);
    assert.equal(gate.holding, false);
  });

  it('holds both ways, then lets through in order on resume', async () => {
    gate.hold();
    world.publish('in.plain', Buffer.from('1'), { reply: 'r.1' });
    world.publish('in.range', Buffer.from('2'));
    await sentinel('in', 'held');
    // The node's own sends while held: a reused buffer must not change what goes out.
    const reused = Buffer.from('3');
    gate.publish('out.x', null, reused);
    reused.write('X');
    const range = Buffer.from('..4..');
    gate.publishRange('out.y', null, range, 2, 3);
    const answer = gate.request('ask', Buffer.from('q'), 5000);
    await sentinel('out', 'held');
    assert.deepEqual(handled, []);
    assert.deepEqual(received, []);
    gate.resume();
    assert.deepEqual(handled.splice(0), ['plain 1 reply=r.1', 'range 2']);
    assert.equal(String(await answer), 'answer');
    await sentinel('out', 'resumed');
    assert.deepEqual(received.splice(0), ['out.x 3', 'out.y 4']);
    assert.equal(gate.holding, false);
  });

  it('closes by itself when open() is false, and discard() drops what it held', async () => {
    open = false;
    world.publish('in.plain', Buffer.from('lost'));
    await sentinel('in', 'closed');
    assert.equal(gate.holding, true);
    gate.publish('out.x', null, Buffer.from('lost too'));
    const answer = gate.request('ask', Buffer.from('q'), 5000);
    open = true;
    gate.discard();
    assert.equal(await answer, null);
    await sentinel('out', 'discarded');
    assert.deepEqual(handled, []);
    assert.deepEqual(received, []);
    // Open again afterwards.
    world.publish('in.plain', Buffer.from('after'));
    await sentinel('in', 'after');
    assert.deepEqual(handled.splice(0), ['plain after']);
  });
});
