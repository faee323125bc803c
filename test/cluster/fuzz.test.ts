// Random and mangled route traffic: the route parser never throws, whatever the
// bytes and however they are split; a node fed garbage on its route port closes
// those connections and keeps its cluster working.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { connect } from 'nats';
import { RouteParser, type RouteParserHandler } from '../../src/cluster/parser.js';
import { RawClient } from '../helpers/raw.js';
import { closeAll, routeUrl, startNode, waitFor, waitMesh, waitRouteInterest } from './helpers.js';

/** Reads every field the handlers of a real route would read. */
class Reader implements RouteParserHandler {
  ops = 0;
  onInfo(buf: Buffer, start: number, end: number): void {
    this.ops += buf.toString('utf8', start, end).length >= 0 ? 1 : 0;
  }
  onConnect(buf: Buffer, start: number, end: number): void {
    this.ops += buf.toString('utf8', start, end).length >= 0 ? 1 : 0;
  }
  onPing(): void {
    this.ops++;
  }
  onPong(): void {
    this.ops++;
  }
  onErr(): void {
    this.ops++;
  }
  onSub(p: RouteParser): void {
    p.argBuf.toString('latin1', p.subjectStart, p.subjectEnd);
    this.ops++;
  }
  onUnsub(p: RouteParser): void {
    p.argBuf.toString('latin1', p.subjectStart, p.subjectEnd);
    this.ops++;
  }
  onMsg(p: RouteParser): void {
    assert.ok(p.payloadEnd - p.payloadStart === p.size);
    assert.ok(p.payloadEnd <= p.payload.length);
    for (let i = 0; i < p.queueCount; i++) {
      const f = p.queueFirst + i;
      assert.ok(p.fieldEnd[f]! > p.fieldStart[f]!);
    }
    this.ops++;
  }
  onFailure(): void {
    this.ops++;
  }
}

const PIECES = [
  'RMSG $G foo 3\r\nabc\r\n',
  'RMSG $G foo + r q1 q2 1\r\nx\r\n',
  'RMSG $G foo | q 0\r\n\r\n',
  'HMSG $G foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\n',
  'RS+ $G foo q 2\r\n',
  'RS- $G foo\r\n',
  'PING\r\n',
  'PONG\r\n',
  'INFO {"server_id":"N"}\r\n',
  'CONNECT {}\r\n',
  '+OK\r\n',
  "-ERR 'x'\r\n",
  'RMSG',
  ' ',
  '\r\n',
  '999999999',
  'HMSG $G s 5 2\r\n',
];

describe('route parser fuzzing', () => {
  it('never throws on random bytes in random splits', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 400 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 20 }),
        (bytes, cuts) => {
          const p = new RouteParser(new Reader());
          const buf = Buffer.from(bytes);
          let i = 0;
          for (let k = 0; i < buf.length; k++) {
            const n = cuts[k % cuts.length]!;
            p.parse(buf.subarray(i, i + n));
            i += n;
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never throws on mangled protocol in random splits', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...PIECES), { maxLength: 30 }),
        fc.integer({ min: 1, max: 17 }),
        (pieces, cut) => {
          const reader = new Reader();
          const p = new RouteParser(reader);
          const buf = Buffer.from(pieces.join(''), 'latin1');
          for (let i = 0; i < buf.length; i += cut) p.parse(buf.subarray(i, i + cut));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('garbage on the route port', () => {
  it('closes the connections and keeps the cluster working', async () => {
    const a = await startNode();
    const b = await startNode({ routes: [routeUrl(a)] });
    try {
      await waitMesh([a, b]);
      const samples = fc.sample(fc.uint8Array({ minLength: 1, maxLength: 300 }), 30);
      const raws = await Promise.all(samples.map(() => RawClient.open(a.cluster.port)));
      samples.forEach((bytes, i) => {
        raws[i]!.send(Buffer.concat([Buffer.from(bytes), Buffer.from('\r\nFOO\r\n')]));
      });
      for (const raw of raws) {
        assert.equal(await raw.waitClosed(3000), true);
        raw.close();
      }
      assert.equal(a.cluster.routes.size, 1);
      const na = await connect({ servers: a.url });
      const nb = await connect({ servers: b.url });
      let got = 0;
      nb.subscribe('after.garbage', { callback: () => got++ });
      await nb.flush();
      await waitRouteInterest([a], 'after.garbage');
      na.publish('after.garbage');
      await na.flush();
      await waitFor('the message', () => got === 1);
      await Promise.all([na.close(), nb.close()]);
    } finally {
      await closeAll([a, b]);
    }
  });
});
