// Slow consumers: a subscriber that stops reading is cut off (at max_pending at once,
// or when its socket writes nothing for write_deadline), its publisher is held for
// a while but never closed, and nobody else waits for it (docs/design/slow-consumers.md).
// Behaviour only: which connection closes with which reason, who keeps getting
// answers; how fast is bench/slow-consumer-isolation.ts's business.

import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import type { RunningServer } from '../../src/index.js';
import { C0, RawClient } from '../helpers/raw.js';
import { getJson, type JsonObject, withMonitor } from '../monitor/helpers.js';

const MAX_PENDING = 2 * 1024 * 1024;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function connectLine(name: string): string {
  return `CONNECT {"verbose":false,"pedantic":false,"name":"${name}"}\r\n`;
}

/** A subscriber that subscribes, then stops reading, so that its TCP window fills. */
async function stoppedSubscriber(port: number, name: string, sub: string): Promise<Socket> {
  const s = connect({ port, host: '127.0.0.1' });
  await new Promise<void>((r) => s.once('connect', r));
  let text = '';
  const onData = (d: Buffer): void => {
    text += d.toString('latin1');
  };
  s.on('data', onData);
  s.on('error', () => undefined);
  s.write(`${connectLine(name)}SUB ${sub} 1\r\nPING\r\n`);
  for (let i = 0; i < 200 && !text.includes('PONG'); i++) await sleep(10);
  assert.ok(text.includes('PONG'), `${name} subscribed`);
  s.off('data', onData);
  s.pause();
  return s;
}

/** Closed connections by name, as /connz?state=closed lists them. */
async function closedByName(s: RunningServer): Promise<Map<string, JsonObject>> {
  const z = await getJson(s, '/connz?state=closed');
  const out = new Map<string, JsonObject>();
  for (const c of z.connections as JsonObject[]) out.set(c.name as string, c);
  return out;
}

/** A publisher on a raw socket writing batches of PUB frames as fast as the socket takes them. */
class Flood {
  readonly socket: Socket;
  inbound = '';
  closed = false;
  sent = 0;
  private stopped = false;

  constructor(port: number) {
    this.socket = connect({ port, host: '127.0.0.1' });
    this.socket.on('data', (d: Buffer) => (this.inbound += d.toString('latin1')));
    this.socket.on('close', () => (this.closed = true));
    this.socket.on('error', () => (this.closed = true));
  }

  /** Publishes until stop() or until `cap` bytes of payload went out. */
  async run(subject: string, size: number, cap: number): Promise<void> {
    await new Promise<void>((r) => this.socket.once('connect', r));
    this.socket.write(connectLine('flood'));
    const frame = `PUB ${subject} ${size}\r\n${'x'.repeat(size)}\r\n`;
    const count = Math.max(1, Math.floor((128 * 1024) / frame.length));
    const batch = Buffer.from(frame.repeat(count), 'latin1');
    while (!this.stopped && !this.closed && this.sent < cap) {
      this.sent += count * size;
      if (!this.socket.write(batch)) {
        // Held by the server: wait for the socket, or look again a little later.
        await new Promise<void>((r) => {
          const done = (): void => {
            clearTimeout(t);
            this.socket.off('drain', done);
            r();
          };
          const t = setTimeout(done, 50);
          this.socket.on('drain', done);
        });
      } else if (this.sent % (4 * 1024 * 1024) < count * size) {
        // Let the other clients of this process run now and then.
        await new Promise((r) => setImmediate(r));
      }
    }
  }

  stop(): void {
    this.stopped = true;
  }

  /** True once the server answered a PING sent after everything published. */
  async answersPing(): Promise<boolean> {
    this.inbound = '';
    this.socket.write('PING\r\n');
    for (let i = 0; i < 3000 && !this.closed; i++) {
      if (this.inbound.includes('PONG')) return true;
      await sleep(10);
    }
    return false;
  }
}

/** Round trips of an unrelated client: PUB to its own subject and PING, then MSG and PONG. */
class Probe {
  trips = 0;
  failed = '';
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly client: RawClient) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const reply = await this.client.exchange('PUB probe 2\r\nhi\r\nPING\r\n', 'PONG\r\n', 30_000);
      // A keep-alive PING of the server may come between.
      if (reply.replace(/PING\r\n/g, '') !== 'MSG probe 1 2\r\nhi\r\nPONG\r\n') {
        this.failed = JSON.stringify(reply);
        return;
      }
      this.trips++;
      await sleep(5);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

interface FloodCase {
  readonly name: string;
  readonly size: number;
  readonly subs: readonly string[];
}

const CASES: readonly FloodCase[] = [];
for (const size of [128, 65536]) {
  (CASES as FloodCase[]).push(
    { name: `one subscriber, ${size} B`, size, subs: ['sc.x'] },
    { name: `four subscribers, ${size} B`, size, subs: ['sc.x', 'sc.x', 'sc.x', 'sc.x'] },
    { name: `a wildcard subscriber, ${size} B`, size, subs: ['sc.>'] },
    { name: `a queue group member, ${size} B`, size, subs: ['sc.x q'] },
  );
}

describe('slow consumers', () => {
  for (const c of CASES) {
    it(`${c.name}: cut off at max_pending while an unrelated client keeps its answers`, async () => {
      // A write deadline far away: only the pending bytes may cut the subscribers off.
      const options = { maxPending: MAX_PENDING, writeDeadline: 120_000 };
      await withMonitor(options, async (s) => {
        const slow: Socket[] = [];
        for (let i = 0; i < c.subs.length; i++) {
          slow.push(await stoppedSubscriber(s.port, `slow-${i}`, c.subs[i]!));
        }
        const probeClient = await RawClient.open(s.port);
        assert.equal(
          await probeClient.exchange(`${connectLine('probe')}SUB probe 1\r\nPING\r\n`),
          'PONG\r\n',
        );
        const rss0 = process.memoryUsage.rss();
        let rssPeak = rss0;
        const sampler = setInterval(() => {
          rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
        }, 10);
        const flood = new Flood(s.port);
        const probe = new Probe(probeClient);
        const flooding = flood.run('sc.x', c.size, 4 * 1024 * 1024 * 1024);
        try {
          // The flood goes on until every slow subscriber is cut off and the probe
          // had answers to five round trips meanwhile.
          const startTrips = probe.trips;
          for (;;) {
            const cut = s.server.slowConsumers === c.subs.length;
            if ((cut && probe.trips - startTrips >= 5) || probe.failed !== '') break;
            assert.ok(!flood.closed, 'the publisher is never closed');
            assert.ok(flood.sent < 4 * 1024 * 1024 * 1024, 'cut off before 4 GiB');
            await sleep(10);
          }
          assert.equal(probe.failed, '', 'every round trip of the probe was answered');
          flood.stop();
          await flooding;
          clearInterval(sampler);
          await probe.stop();

          const closed = await closedByName(s);
          for (let i = 0; i < c.subs.length; i++) {
            assert.equal(closed.get(`slow-${i}`)?.reason, 'Slow Consumer (Pending Bytes)');
          }
          assert.equal(closed.has('flood'), false, 'the publisher is open');
          assert.equal(closed.has('probe'), false, 'the probe is open');
          assert.equal(await flood.answersPing(), true, 'the publisher gets its PONG');
          assert.doesNotMatch(flood.inbound, /-ERR/);
          const v = await getJson(s, '/varz');
          assert.equal(v.slow_consumers, c.subs.length);
          // Each slow subscriber held at most max_pending here, plus what one read
          // adds past it and what Node keeps of it until its socket is gone.
          const growth = rssPeak - rss0;
          const bound = c.subs.length * 4 * MAX_PENDING + 96 * 1024 * 1024;
          assert.ok(growth < bound, `RSS grew ${growth} bytes (bound ${bound})`);
        } finally {
          clearInterval(sampler);
          flood.stop();
          await flooding.catch(() => undefined);
          await probe.stop().catch(() => undefined);
          flood.socket.destroy();
          probeClient.close();
          for (const sock of slow) sock.destroy();
        }
      });
    });
  }

  it('gets -ERR Slow Consumer as the last bytes it reads', async () => {
    await withMonitor({ maxPending: MAX_PENDING, writeDeadline: 120_000 }, async (s) => {
      const sub = await stoppedSubscriber(s.port, 'slow', 'sc.x');
      let received = '';
      sub.on('data', (d: Buffer) => {
        received += d.toString('latin1');
        if (received.length > 4096) received = received.slice(-4096);
      });
      const gone = new Promise<void>((r) => sub.once('close', () => r()));
      const flood = new Flood(s.port);
      const flooding = flood.run('sc.x', 1024, 1024 * 1024 * 1024);
      try {
        while (s.server.slowConsumers === 0) {
          assert.ok(!flood.closed && flood.sent < 1024 * 1024 * 1024);
          await sleep(10);
        }
        flood.stop();
        await flooding;
        // It reads again: what was already in its socket, then the -ERR and the close.
        sub.resume();
        await gone;
        assert.ok(
          received.endsWith("-ERR 'Slow Consumer'\r\n"),
          JSON.stringify(received.slice(-64)),
        );
      } finally {
        flood.stop();
        await flooding.catch(() => undefined);
        flood.socket.destroy();
        sub.destroy();
      }
    });
  });

  it('a socket that writes nothing for write_deadline is cut off below max_pending', async () => {
    // max_pending far above what is published, so only the deadline can cut it off.
    const options = { maxPending: 256 * 1024 * 1024, writeDeadline: 500 };
    await withMonitor(options, async (s) => {
      const sub = await stoppedSubscriber(s.port, 'stalled', 'sc.x');
      const flood = new Flood(s.port);
      try {
        // More than the kernel buffers of both sockets take, far below max_pending.
        await flood.run('sc.x', 65536, 48 * 1024 * 1024);
        for (let i = 0; i < 500 && s.server.slowConsumers === 0; i++) await sleep(10);
        const closed = await closedByName(s);
        assert.equal(closed.get('stalled')?.reason, 'Slow Consumer (Write Deadline)');
        assert.equal(await flood.answersPing(), true, 'the publisher is open');
      } finally {
        flood.socket.destroy();
        sub.destroy();
      }
    });
  });

  it('a subscriber that pauses briefly is waited for, not cut off', async () => {
    // The publisher is held while the subscriber is behind; once it reads again,
    // everything arrives and nobody was cut off.
    await withMonitor({ maxPending: MAX_PENDING, writeDeadline: 120_000 }, async (s) => {
      const sub = await stoppedSubscriber(s.port, 'pausing', 'sc.x');
      let count = 0;
      let tail = '';
      sub.on('data', (d: Buffer) => {
        const text = tail + d.toString('latin1');
        const parts = text.split('MSG sc.x 1 1024\r\n');
        count += parts.length - 1;
        tail = parts[parts.length - 1]!.slice(-20);
      });
      const flood = new Flood(s.port);
      const total = 32 * 1024 * 1024;
      const flooding = flood.run('sc.x', 1024, total);
      try {
        await sleep(200);
        sub.resume();
        await flooding;
        assert.equal(await flood.answersPing(), true);
        const expected = flood.sent / 1024;
        for (let i = 0; i < 1000 && count < expected; i++) await sleep(10);
        assert.equal(count, expected, 'every message arrived');
        assert.equal(s.server.slowConsumers, 0);
      } finally {
        flood.socket.destroy();
        sub.destroy();
      }
    });
  });

  it('output queued outside a read (a keep-alive PING) never holds an unrelated client', async () => {
    // The subscriber is past half of max_pending when the server's keep-alive PING
    // is queued for it; the next client to read must not be held for it.
    const options = {
      maxPending: MAX_PENDING,
      writeDeadline: 120_000,
      pingInterval: 100,
      pingMax: 1000,
    };
    await withMonitor(options, async (s) => {
      const sub = await stoppedSubscriber(s.port, 'behind', 'sc.x');
      const c = [...s.server.clients.values()].find((x) => x.name === 'behind')!;
      const pub = await RawClient.open(s.port);
      const probe = await RawClient.open(s.port);
      try {
        assert.equal(await probe.exchange(`${C0}SUB probe 1\r\nPING\r\n`), 'PONG\r\n');
        pub.send(C0);
        const frame = `PUB sc.x 65536\r\n${'x'.repeat(65536)}\r\n`;
        // Until its backlog passes half of max_pending (the kernel takes some first).
        for (let i = 0; i < 4096 && c.out.queued + c.socketPending <= MAX_PENDING / 2; i++) {
          pub.send(frame);
          await pub.exchange('PING\r\n', 'PONG\r\n', 200);
        }
        assert.ok(c.out.queued + (c.socket?.writableLength ?? 0) > MAX_PENDING / 2);
        // Keep-alive PINGs are queued for it meanwhile.
        await sleep(300);
        for (let i = 0; i < 5; i++) {
          const reply = await probe.exchange('PUB probe 2\r\nhi\r\nPING\r\n', 'PONG\r\n', 30_000);
          assert.equal(reply.replace(/PING\r\n/g, ''), 'MSG probe 1 2\r\nhi\r\nPONG\r\n');
        }
      } finally {
        pub.close();
        probe.close();
        sub.destroy();
      }
    });
  });
});
