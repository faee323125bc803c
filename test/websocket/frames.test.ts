// The frame reader on its own: every split point, fragments, control frames between
// fragments, compressed messages, and each framing error the reference names.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  closePayload,
  FrameReader,
  type FrameSink,
  frameHeader,
  Opcode,
} from '../../src/websocket/frames.js';
import { clientFrame, deflated } from './raw-ws.js';

class Collect implements FrameSink {
  text = '';
  pings: string[] = [];
  closes: Array<{ status: number; reason: string }> = [];
  errors: string[] = [];
  data(chunk: Buffer): void {
    this.text += chunk.toString('latin1');
  }
  ping(payload: Buffer): void {
    this.pings.push(payload.toString('latin1'));
  }
  close(status: number, reason: string): void {
    this.closes.push({ status, reason });
  }
  protocolError(message: string): void {
    this.errors.push(message);
  }
}

function read(
  bytes: Buffer,
  opts: { masked?: boolean; inflate?: boolean; split?: number[] } = {},
): Collect {
  const sink = new Collect();
  const r = new FrameReader(sink, opts.masked !== false, opts.inflate === true, 1 << 20);
  let at = 0;
  for (const cut of [...(opts.split ?? []), bytes.length]) {
    // The reader unmasks in place: give it its own copy of each chunk, as a socket would.
    r.push(Buffer.from(bytes.subarray(at, cut)));
    at = cut;
  }
  return sink;
}

describe('FrameReader', () => {
  it('reads masked messages of every length class', () => {
    for (const n of [0, 1, 125, 126, 65535, 65536, 200_000]) {
      const text = 'x'.repeat(n);
      assert.equal(read(clientFrame(Opcode.binary, text)).text, text, `length ${n}`);
    }
  });

  it('reads a stream split at every byte', () => {
    const bytes = Buffer.concat([
      clientFrame(Opcode.binary, 'CONNECT {}\r\n'),
      clientFrame(Opcode.ping, 'p'),
      clientFrame(Opcode.binary, 'PUB a 300\r\n' + 'y'.repeat(300) + '\r\n'),
    ]);
    const whole = read(bytes);
    for (let cut = 1; cut < bytes.length; cut++) {
      const split = read(bytes, { split: [cut] });
      assert.equal(split.text, whole.text, `cut at ${cut}`);
      assert.deepEqual(split.pings, ['p']);
    }
  });

  it('joins fragments and answers a ping between them', () => {
    const bytes = Buffer.concat([
      clientFrame(Opcode.binary, 'PI', { final: false }),
      clientFrame(Opcode.ping, 'between'),
      clientFrame(Opcode.continuation, 'NG', { final: false }),
      clientFrame(Opcode.continuation, '\r\n'),
    ]);
    const s = read(bytes);
    assert.equal(s.text, 'PING\r\n');
    assert.deepEqual(s.pings, ['between']);
    assert.deepEqual(s.errors, []);
  });

  it('inflates compressed messages, whole or fragmented', () => {
    const text = 'PUB subject 1000\r\n' + 'z'.repeat(1000) + '\r\n';
    const c = deflated(text);
    assert.equal(read(clientFrame(Opcode.binary, c, { rsv1: true }), { inflate: true }).text, text);
    const half = c.length >> 1;
    const frag = Buffer.concat([
      clientFrame(Opcode.binary, c.subarray(0, half), { rsv1: true, final: false }),
      clientFrame(Opcode.continuation, c.subarray(half)),
    ]);
    for (let cut = 1; cut < frag.length; cut += 7) {
      assert.equal(read(frag, { inflate: true, split: [cut] }).text, text, `cut ${cut}`);
    }
  });

  it('reads close frames: status and reason, none, and a reason that is not UTF-8', () => {
    assert.deepEqual(read(clientFrame(Opcode.close, closePayload(1000, 'bye'))).closes, [
      { status: 1000, reason: 'bye' },
    ]);
    assert.deepEqual(read(clientFrame(Opcode.close, '')).closes, [{ status: 1005, reason: '' }]);
    assert.deepEqual(read(clientFrame(Opcode.close, Buffer.from([3, 232, 0xff, 0xfe]))).closes, [
      { status: 1007, reason: 'invalid utf8 body in close frame' },
    ]);
  });

  it('names each framing error as the reference does', () => {
    const cases: Array<[Buffer, string, { inflate?: boolean }?]> = [
      [clientFrame(Opcode.binary, 'PING\r\n', { masked: false }), 'mask bit missing'],
      [clientFrame(3, 'x'), 'unknown opcode 3'],
      [
        clientFrame(Opcode.ping, 'x'.repeat(126)),
        'control frame length bigger than maximum allowed of 125 bytes',
      ],
      [
        clientFrame(Opcode.ping, 'x', { final: false }),
        'control frame does not have final bit set',
      ],
      [
        Buffer.concat([
          clientFrame(Opcode.binary, 'PI', { final: false }),
          clientFrame(Opcode.binary, 'NG\r\n'),
        ]),
        'new message started before final frame for previous message was received',
      ],
      [clientFrame(Opcode.continuation, 'x'), 'invalid continuation frame'],
      [clientFrame(Opcode.binary, 'xxxx', { rsv1: true }), 'compression not negotiated'],
    ];
    for (const [bytes, message, opts] of cases) {
      const s = read(bytes, opts);
      assert.deepEqual(s.errors, [message]);
      // Only a first, valid fragment may have been handed on before the error.
      assert.ok(s.text === '' || s.text === 'PI', message);
    }
    const bad = read(
      clientFrame(Opcode.binary, Buffer.from('not deflate data at all'), { rsv1: true }),
      {
        inflate: true,
      },
    );
    assert.equal(bad.errors.length, 1);
    assert.match(bad.errors[0]!, /^invalid compressed data/);
  });

  it('stops after the first error and never throws on random bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 512 }),
        fc.integer({ min: 1, max: 64 }),
        (bytes, step) => {
          const sink = new Collect();
          const r = new FrameReader(sink, true, true, 1 << 16);
          for (let i = 0; i < bytes.length; i += step)
            r.push(Buffer.from(bytes.subarray(i, i + step)));
          assert.ok(sink.errors.length <= 1);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('frameHeader', () => {
  it('encodes the three length forms and the flags', () => {
    assert.deepEqual([...frameHeader(Opcode.binary, 5)], [0x82, 5]);
    assert.deepEqual([...frameHeader(Opcode.binary, 300)], [0x82, 126, 1, 44]);
    assert.deepEqual(
      [...frameHeader(Opcode.binary, 70000)],
      [0x82, 127, 0, 0, 0, 0, 0, 1, 17, 112],
    );
    assert.deepEqual([...frameHeader(Opcode.binary, 1, { compressed: true })], [0xc2, 1]);
    assert.deepEqual([...frameHeader(Opcode.binary, 1, { first: false, final: false })], [0x00, 1]);
  });

  it('cuts a long close reason to 125 bytes with "..." as the reference', () => {
    const p = closePayload(1002, 'e'.repeat(200));
    assert.equal(p.length, 125);
    assert.equal(p.subarray(2).toString(), 'e'.repeat(120) + '...');
  });
});
