// A queue message whose local member left while the message was on its way: the
// server it was routed to passes it on to another server's member of the group
// instead of dropping it, as nats-server 2.9.10 does (processMsgResults keeps the
// first remote member for that case). A fake server on a raw route connection
// sends the RMSG, so the member can be gone for certain; the same bytes go to a
// wirebus node and to the reference, each with the group's only member on a server
// of the other kind.

import assert from 'node:assert/strict';
import { connect as tcp, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import {
  CLUSTER,
  closeAll,
  hasRouteInterest,
  referenceMissing,
  referenceRouteSubs,
  routeUrl,
  sleep,
  startNode,
  startReference,
  waitFor,
  waitForAsync,
  type Node,
} from './helpers.js';

const missing = referenceMissing();

/** A server that is nothing but a route connection: it says who it is, then sends what it is told. */
class FakeRoute {
  private readonly socket: Socket;
  received = '';

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setEncoding('latin1');
    socket.on('data', (t: string) => {
      this.received += t;
      if (t.includes('PING\r\n')) socket.write('PONG\r\n');
    });
    socket.on('error', () => undefined);
  }

  static async open(port: number): Promise<FakeRoute> {
    const socket = tcp({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const id = 'NFAKEROUTEFAKEROUTEFAKEROUTEFAKEROUTEFAKEROUTEFAKEROUTE';
    const connectJson = { echo: true, verbose: false, pedantic: false, tls_required: false };
    const info = {
      server_id: id,
      server_name: 'fake',
      version: '2.9.10',
      proto: 2,
      host: '127.0.0.1',
      port: 9,
      headers: true,
      max_payload: 1048576,
      cluster: CLUSTER,
    };
    socket.write(
      `CONNECT ${JSON.stringify({ ...connectJson, headers: true, name: id, cluster: CLUSTER })}\r\n` +
        `INFO ${JSON.stringify(info)}\r\n`,
    );
    return new FakeRoute(socket);
  }

  send(text: string): void {
    this.socket.write(text);
  }

  close(): void {
    this.socket.destroy();
  }
}

describe('a routed queue message without a local member', { skip: missing ?? false }, () => {
  it('goes on to the other server of the group, at wirebus and at the reference', async () => {
    const w = await startNode();
    const ref = await startReference([routeUrl(w)]);
    const conns: NatsConnection[] = [];
    const fakes: FakeRoute[] = [];
    try {
      await waitFor('the route', () => w.cluster.routes.size === 1, 8000);
      const [atW, atRef] = await Promise.all([
        connect({ servers: w.url }),
        connect({ servers: ref.url }),
      ]);
      conns.push(atW, atRef);
      const got: string[] = [];
      // Each group's only member sits on the server the fake route does not talk to.
      atRef.subscribe('work.w', { queue: 'q', callback: (_e, m) => got.push(`ref ${m.string()}`) });
      atW.subscribe('work.r', { queue: 'q', callback: (_e, m) => got.push(`wb ${m.string()}`) });
      await Promise.all([atW.flush(), atRef.flush()]);
      await waitFor('the reference member at wirebus', () => hasRouteInterest(w, 'work.w', 'q'));
      await waitForAsync('the wirebus member at the reference', async () =>
        [...(await referenceRouteSubs(ref)).values()].some((l) => l.includes('work.r')),
      );
      const toW = await FakeRoute.open(w.cluster.port);
      const toRef = await FakeRoute.open(ref.clusterPort);
      fakes.push(toW, toRef);
      await waitFor('both fake routes registered', () =>
        [toW, toRef].every((f) => f.received.includes('INFO ')),
      );
      await sleep(200);
      toW.send('RMSG $G work.w | q 2\r\nw1\r\nRMSG $G work.w + _INBOX.x q 2\r\nw2\r\n');
      toRef.send('RMSG $G work.r | q 2\r\nr1\r\nRMSG $G work.r + _INBOX.x q 2\r\nr2\r\n');
      await waitFor('the forwarded messages', () => got.length >= 4);
      await sleep(200);
      assert.deepEqual(got.sort(), ['ref w1', 'ref w2', 'wb r1', 'wb r2']);
      // A member of the group at the server the message reaches takes it there.
      const local: string[] = [];
      atW.subscribe('work.w', { queue: 'q', callback: (_e, m) => local.push(m.string()) });
      await atW.flush();
      toW.send('RMSG $G work.w | q 2\r\nw3\r\n');
      await waitFor('the local delivery', () => local.length === 1);
      await sleep(200);
      assert.deepEqual(local, ['w3']);
      assert.equal(got.length, 4);
    } finally {
      for (const f of fakes) f.close();
      await Promise.all(conns.map((c) => c.close()));
      await closeAll([w] as Node[]);
      await ref.stop();
    }
  });
});
