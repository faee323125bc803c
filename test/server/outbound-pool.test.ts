// Output blocks go back to a pool once a socket has written them (src/server/outbound.ts)
// and are filled again by any connection: no byte may change before the kernel has it.
// Subscribers that stop reading make the server's sockets hold a backlog of blocks;
// what they finally read must be every message, whole and in order, while blocks
// went round the pool between the connections.

import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { Outbound, pooledBlocks } from '../../src/server/outbound.js';
import { withServer } from '../helpers/server.js';
import { C0, RawClient } from '../helpers/raw.js';

// 8 MB per subscriber and round: more than loopback's socket buffers take.
const SIZE = 4000;
const COUNT = 2000;

/** The payload of message i of a publisher: its own bytes, told apart from any other's. */
function payload(tag: string, i: number): string {
  const head = `${tag}:${i}:`;
  return head + String.fromCharCode(97 + (i % 26)).repeat(SIZE - head.length);
}

/**
 * A subscriber on a raw socket that reads only when told; the payloads of its MSG
 * lines, checked for framing as they come (the server's own PINGs are skipped).
 */
class SlowSub {
  readonly got: string[] = [];
  private rest = '';
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => this.parse(text));
  }

  static async open(port: number, subject: string): Promise<SlowSub> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const sub = new SlowSub(socket);
    socket.write(`${C0}SUB ${subject} 1\r\nPING\r\n`);
    await sub.until(() => sub.rest.includes('PONG\r\n'));
    sub.rest = '';
    socket.pause();
    return sub;
  }

  private parse(text: string): void {
    let t = this.rest + text;
    for (;;) {
      const eol = t.indexOf('\r\n');
      if (eol < 0 || !t.startsWith('MSG ')) {
        if (t.startsWith('PING\r\n')) {
          t = t.slice(6);
          continue;
        }
        break;
      }
      const n = Number(t.slice(t.lastIndexOf(' ', eol) + 1, eol));
      if (t.length < eol + 4 + n) break;
      assert.equal(t.slice(eol + 2 + n, eol + 4 + n), '\r\n');
      this.got.push(t.slice(eol + 2, eol + 2 + n));
      t = t.slice(eol + 4 + n);
    }
    this.rest = t;
  }

  /** Reads on until `done` holds. */
  async until(done: () => boolean): Promise<void> {
    this.socket.resume();
    const deadline = Date.now() + 20_000;
    while (!done()) {
      if (Date.now() > deadline)
        assert.fail(
          `timed out with ${this.got.length} messages; ${this.rest.length} bytes: ${JSON.stringify(this.rest.slice(0, 80))}`,
        );
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

describe('outbound block pool', () => {
  it('keeps every byte of backlogged subscribers while blocks go round', async () => {
    // Subscribers that stop reading for seconds are not cut off here.
    await withServer({ writeDeadline: 60_000, maxPending: 64 * 1024 * 1024 }, async (s) => {
      const pub = await RawClient.open(s.port);
      const subs = [await SlowSub.open(s.port, 'a'), await SlowSub.open(s.port, 'b')];
      try {
        assert.equal(await pub.exchange(`${C0}PING\r\n`), 'PONG\r\n');
        // The server's own keep-alive PINGs may come in between.
        const answered = async (bytes: string): Promise<void> => {
          const reply = await pub.exchange(bytes, 'PONG\r\n', 10_000);
          assert.equal(reply.replaceAll('PING\r\n', ''), 'PONG\r\n');
        };
        // Two rounds: the first fills the sockets' backlogs (and, once read, the pool);
        // the second is written into blocks taken from the pool while the first's
        // subscriber still holds a backlog.
        const expected: Record<string, string[]> = { a: [], b: [] };
        let seen = 0;
        for (let round = 0; round < 2; round++) {
          let batch = '';
          for (let i = 0; i < COUNT; i++) {
            for (const subject of ['a', 'b']) {
              const p = payload(`${subject}${round}`, i);
              expected[subject]!.push(p);
              batch += `PUB ${subject} ${p.length}\r\n${p}\r\n`;
            }
            if (batch.length > 200_000) {
              pub.send(batch);
              batch = '';
            }
          }
          await answered(`${batch}PING\r\n`);
          // Only one subscriber reads its backlog now; the other keeps its own.
          if (round === 0) {
            const a = subs[0]!;
            await a.until(() => a.got.length >= COUNT);
            seen = pooledBlocks();
          }
        }
        await Promise.all(subs.map((sub) => sub.until(() => sub.got.length >= 2 * COUNT)));
        assert.deepEqual(subs[0]!.got, expected.a);
        assert.deepEqual(subs[1]!.got, expected.b);
        assert.ok(seen > 0, 'blocks came back to the pool once written');
      } finally {
        pub.close();
        for (const sub of subs) sub.close();
      }
    });
  });

  it('thousands of small writes waiting on one socket: every byte, in order', async () => {
    // One write per flush, 5,000 of them held by a reader that does not read: the
    // queue of writes waiting for their callback is trimmed as they come back.
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const accepted = new Promise<Socket>((r) => server.once('connection', r));
    const reader = connect((server.address() as { port: number }).port, '127.0.0.1');
    const socket = await accepted;
    const chunks: Buffer[] = [];
    reader.on('data', (c: Buffer) => chunks.push(c));
    reader.pause();
    try {
      const out = new Outbound();
      out.recycles = true;
      const expected: Buffer[] = [];
      for (let i = 0; i < 5000; i++) {
        const line = Buffer.from(`${i}:${'x'.repeat(i % 700)}\n`);
        expected.push(line);
        out.reserve(line.length);
        line.copy(out.buf, out.pos);
        out.pos += line.length;
        out.flush(socket);
      }
      const total = Buffer.concat(expected);
      reader.resume();
      const deadline = Date.now() + 20_000;
      while (chunks.reduce((n, c) => n + c.length, 0) < total.length) {
        if (Date.now() > deadline) assert.fail('timed out');
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.ok(Buffer.concat(chunks).equals(total));
    } finally {
      reader.destroy();
      socket.destroy();
      server.close();
    }
  });
});
