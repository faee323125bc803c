// Plain connections read into one shared buffer (src/server/shared-read.ts): every
// byte that outlives a read must have been copied out before the next read, from
// any connection, overwrites it. Each test leaves part of a message pending on
// one connection, makes another connection read, and checks the bytes that come out.

import assert from 'node:assert/strict';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import bcrypt from 'bcrypt';
import { withServer } from '../helpers/server.js';
import { C0, RawClient } from '../helpers/raw.js';
import { connectLine, startSecure } from '../auth/helpers.js';
import { adoptByMove, adoptSharedReads, isShared } from '../../src/server/shared-read.js';

/** Another connection's read that fills the start of the buffer with other bytes. */
async function overwrite(other: RawClient, size = 300): Promise<void> {
  const junk = 'Z'.repeat(size);
  assert.equal(
    await other.exchange(`PUB nobody.listens ${size}\r\n${junk}\r\nPING\r\n`),
    'PONG\r\n',
  );
}

/** Waits for a condition, failing the test if it does not come within ms. */
async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function ready(port: number): Promise<RawClient> {
  const c = await RawClient.open(port);
  assert.equal(await c.exchange(`${C0}PING\r\n`), 'PONG\r\n');
  return c;
}

/**
 * Subscribes to `subject`, publishes `pieces` on one connection with another
 * connection's read between each two, and returns what the subscriber got
 * (ending with the PONG of a PING).
 */
async function acrossReads(subject: string, pieces: string[]): Promise<string> {
  return withServer({}, async (s) => {
    const [sub, pub, other] = [await ready(s.port), await ready(s.port), await ready(s.port)];
    try {
      assert.equal(await sub.exchange(`SUB ${subject} 1\r\nPING\r\n`), 'PONG\r\n');
      for (let i = 0; i < pieces.length - 1; i++) {
        pub.send(pieces[i]!);
        await overwrite(other);
      }
      assert.equal(await pub.exchange(`${pieces[pieces.length - 1]!}PING\r\n`), 'PONG\r\n');
      return await sub.exchange('PING\r\n');
    } finally {
      for (const c of [sub, pub, other]) c.close();
    }
  });
}

describe('the shared read buffer', () => {
  it('plain connections read through it (Node still lets an accepted handle move)', async () => {
    await withServer({}, async (s) => {
      const c = await ready(s.port);
      try {
        const clients = [...s.server.clients.values()].filter((x) => x.kind === 'client');
        assert.equal(clients.length, 1);
        assert.equal(clients[0]!.sharedReads, true);
      } finally {
        c.close();
      }
    });
  });

  for (const [how, adopt] of [
    ['in place (Node 20: the accepted socket itself)', adoptSharedReads],
    ['by moving the handle to a new socket (any other Node)', adoptByMove],
  ] as const) {
    it(`an accepted socket adopted ${how} reads into it, ends and closes`, async () => {
      const reads: string[] = [];
      let adopted: Socket | null = null;
      const listener = createServer({ pauseOnConnect: true }, (accepted) => {
        adopted = adopt(accepted, (chunk) => {
          assert.equal(isShared(chunk), true);
          reads.push(chunk.toString('latin1'));
        });
        // In place means no second socket: the one accepted reads.
        assert.equal(adopted === accepted, adopt === adoptSharedReads);
        adopted!.resume();
      });
      await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
      const { port } = listener.address() as AddressInfo;
      const peer = connect(port, '127.0.0.1');
      try {
        await until(() => adopted !== null);
        const ended = new Promise<void>((r) => adopted!.once('end', r));
        const closed = new Promise<void>((r) => adopted!.once('close', r));
        peer.write('first');
        await until(() => reads.join('') === 'first');
        peer.end('second');
        await ended;
        adopted!.end();
        await closed;
        assert.equal(reads.join(''), 'firstsecond');
        // The listener's count of connections is settled: it closes.
        await new Promise<void>((r, j) => listener.close((err) => (err ? j(err) : r())));
      } finally {
        peer.destroy();
        listener.close();
      }
    });
  }

  it('a message whose payload goes on in a later read keeps its subject and reply', async () => {
    assert.equal(
      await acrossReads('long.subject.>', [
        'PUB long.subject.name reply.inbox.7 10\r\n01234',
        '56789\r\n',
      ]),
      'MSG long.subject.name 1 reply.inbox.7 10\r\n0123456789\r\nPONG\r\n',
    );
  });

  it('a payload whose CRLF comes in a later read is delivered as it was read', async () => {
    assert.equal(
      await acrossReads('a', ['PUB a 5\r\nhello', '\r', '\n']),
      'MSG a 1 5\r\nhello\r\nPONG\r\n',
    );
  });

  it('a control line split across reads is whole when its end arrives', async () => {
    assert.equal(
      await acrossReads('split.>', ['PUB split.subj', 'ect 3\r\nab', 'c\r\n']),
      'MSG split.subject 1 3\r\nabc\r\nPONG\r\n',
    );
  });

  it('large payloads queued for a subscriber that does not read stay intact', async () => {
    await withServer({ maxPending: 64 * 1024 * 1024 }, async (s) => {
      const [pub, other] = [await ready(s.port), await ready(s.port)];
      // A subscriber that stops reading, so the server's writes to it stay pending
      // in the socket, holding the payloads (16 KiB and up go by reference).
      const sub: Socket = connect({ port: s.port, host: '127.0.0.1' });
      const received: Buffer[] = [];
      let receivedBytes = 0;
      sub.on('data', (chunk: Buffer) => {
        received.push(chunk);
        receivedBytes += chunk.length;
      });
      await new Promise<void>((resolve) => sub.once('connect', resolve));
      sub.write(`${C0}SUB big 1\r\nPING\r\n`);
      await until(() => Buffer.concat(received).toString('latin1').includes('PONG\r\n'));
      received.length = 0;
      receivedBytes = 0;
      sub.pause();
      try {
        const size = 20 * 1024;
        const count = 800; // 16 MB: more than the loopback socket buffers hold
        for (let i = 0; i < count; i++) {
          const payload = Buffer.alloc(size, 0x41 + (i % 26));
          pub.send(
            Buffer.concat([Buffer.from(`PUB big ${size}\r\n`), payload, Buffer.from('\r\n')]),
          );
          if (i % 20 === 19) {
            assert.equal(await pub.exchange('PING\r\n'), 'PONG\r\n');
            await overwrite(other, size);
          }
        }
        assert.equal(await pub.exchange('PING\r\n'), 'PONG\r\n');
        await overwrite(other, size);
        const subscriber = [...s.server.clients.values()].find((c) => c.subs.size > 0);
        assert.ok(
          (subscriber?.socket?.writableLength ?? 0) > 0,
          'the socket still holds unwritten payloads, so the check below means something',
        );
        sub.resume();
        const header = `MSG big 1 ${size}\r\n`;
        const each = header.length + size + 2;
        await until(() => receivedBytes >= count * each, 20_000);
        const all = Buffer.concat(received);
        for (let i = 0; i < count; i++) {
          const at = i * each;
          assert.equal(all.toString('latin1', at, at + header.length), header, `message ${i}`);
          const body = all.subarray(at + header.length, at + header.length + size);
          assert.ok(body.equals(Buffer.alloc(size, 0x41 + (i % 26))), `payload ${i} intact`);
        }
      } finally {
        sub.destroy();
        pub.close();
        other.close();
      }
    });
  });

  it('an in-process subscriber may keep the payload it was given', async () => {
    await withServer({}, async (s) => {
      const kept: { headers: Buffer | null; data: Buffer }[] = [];
      const internal = s.server.createInternalClient('keeper');
      s.server.subscribeInternal(internal, 'keep.>', null, (_subject, _reply, headers, data) => {
        kept.push({ headers, data });
      });
      const pub = await RawClient.open(s.port);
      const other = await RawClient.open(s.port);
      try {
        assert.equal(
          await pub.exchange('CONNECT {"verbose":false,"headers":true}\r\nPING\r\n'),
          'PONG\r\n',
        );
        assert.equal(await other.exchange(`${C0}PING\r\n`), 'PONG\r\n');
        const hdr = 'NATS/1.0\r\nK: v\r\n\r\n';
        assert.equal(
          await pub.exchange(
            `PUB keep.a 5\r\nfirst\r\nHPUB keep.b ${hdr.length} ${hdr.length + 6}\r\n${hdr}second\r\nPING\r\n`,
          ),
          'PONG\r\n',
        );
        await overwrite(other, 2000);
        assert.equal(kept.length, 2);
        assert.equal(kept[0]!.data.toString(), 'first');
        assert.equal(kept[0]!.headers, null);
        assert.equal(kept[1]!.headers?.toString(), hdr);
        assert.equal(kept[1]!.data.toString(), 'second');
      } finally {
        pub.close();
        other.close();
      }
    });
  });

  it('ops read behind a CONNECT awaiting its bcrypt check survive other reads', async () => {
    const hash = bcrypt.hashSync('pw', 10);
    const { port } = await startSecure({
      users: [
        { user: 'u', password: hash },
        { user: 'o', password: 'o' },
      ],
    });
    const c = await RawClient.open(port);
    const other = await RawClient.open(port);
    try {
      assert.equal(
        await other.exchange(connectLine({ user: 'o', pass: 'o' }) + 'PING\r\n'),
        'PONG\r\n',
      );
      c.send(
        connectLine({ user: 'u', pass: 'pw' }) +
          'SUB held.subject 1\r\nPUB held.subject 4\r\nkept\r\n',
      );
      // While the check runs in the thread pool, another connection reads.
      await overwrite(other, 500);
      assert.equal(await c.exchange('PING\r\n'), 'MSG held.subject 1 4\r\nkept\r\nPONG\r\n');
    } finally {
      c.close();
      other.close();
    }
  });
});
