// Bad traffic on the route port gets a clear -ERR and a closed route, never a crash:
// malformed CONNECT, INFO and RS+, a client on the route port, wrong credentials,
// another cluster's name. The node keeps serving its cluster afterwards.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from 'nats';
import { RawClient } from '../helpers/raw.js';
import {
  CLUSTER,
  closeAll,
  routeUrl,
  sleep,
  startNode,
  waitMesh,
  expectCrossing,
  type Node,
} from './helpers.js';

const ROUTE_CONNECT = `CONNECT {"echo":true,"verbose":false,"pedantic":false,"tls_required":false,"headers":true,"name":"NFAKE","cluster":"${CLUSTER}"}\r\n`;

/** Sends bytes on a fresh route connection and returns what came back before the close. */
async function exchange(node: Node, bytes: string): Promise<{ text: string; closed: boolean }> {
  const raw = await RawClient.open(node.cluster.port);
  raw.send(bytes);
  const closed = await raw.waitClosed(2000);
  const text = raw.take();
  raw.close();
  return { text, closed };
}

describe('malformed route traffic', () => {
  let a: Node;
  let b: Node;

  before(async () => {
    a = await startNode();
    b = await startNode({ routes: [routeUrl(a)] });
    await waitMesh([a, b]);
  });

  after(async () => {
    await closeAll([a, b]);
  });

  it('sends a route INFO on accept', async () => {
    const raw = await RawClient.open(a.cluster.port);
    const info = raw.infoJson();
    raw.close();
    assert.equal(info.server_id, a.server.id);
    assert.equal(info.cluster, CLUSTER);
    assert.equal(info.port, a.cluster.port);
    assert.equal(info.proto, 2);
    assert.equal(info.headers, true);
    assert.ok(raw.info.endsWith('} \r\n'));
  });

  const cases: [string, string, string][] = [
    ['a CONNECT that is not JSON', 'CONNECT {bad}\r\n', "-ERR 'Parser Error'\r\n"],
    ['a CONNECT that is not an object', 'CONNECT [1]\r\n', "-ERR 'Parser Error'\r\n"],
    ['a CONNECT with a mistyped field', 'CONNECT {"name":5}\r\n', "-ERR 'Parser Error'\r\n"],
    ['an RS+ without a subject', `${ROUTE_CONNECT}RS+ $G\r\n`, "-ERR 'Parser Error'\r\n"],
    ['an RS+ with a bad weight', `${ROUTE_CONNECT}RS+ $G foo q -2\r\n`, "-ERR 'Parser Error'\r\n"],
    ['an RMSG with a bad size', `${ROUTE_CONNECT}RMSG $G foo x\r\n`, "-ERR 'Parser Error'\r\n"],
    [
      'an RMSG whose payload does not end in CRLF',
      `${ROUTE_CONNECT}RMSG $G foo 1\r\nxyz`,
      "-ERR 'Unknown Protocol Operation'\r\n",
    ],
    ['an INFO that is not JSON', `${ROUTE_CONNECT}INFO nope\r\n`, "-ERR 'Parser Error'\r\n"],
    ['an INFO without server_id', `${ROUTE_CONNECT}INFO {}\r\n`, "-ERR 'Parser Error'\r\n"],
    ['an unknown op', 'FOO bar\r\n', "-ERR 'Unknown Protocol Operation'\r\n"],
    [
      'a client PUB on the route port',
      'PUB foo 2\r\nhi\r\n',
      "-ERR 'Attempted To Connect To Route Port'\r\n",
    ],
    [
      'a client SUB on the route port',
      'SUB foo 1\r\n',
      "-ERR 'Attempted To Connect To Route Port'\r\n",
    ],
    [
      "a client's CONNECT (it names its lang)",
      'CONNECT {"verbose":false,"pedantic":false,"lang":"node","version":"2.29.3"}\r\n',
      "-ERR 'Attempted To Connect To Route Port'\r\n",
    ],
    [
      'another cluster',
      'CONNECT {"name":"NOTHER","cluster":"other"}\r\n',
      `-ERR 'Rejecting connection, cluster name "other" does not match "${CLUSTER}"'\r\n`,
    ],
    [
      'a gateway on the route port',
      `CONNECT {"name":"NGW","cluster":"${CLUSTER}","gateway":"gw1"}\r\n`,
      `-ERR 'Rejecting connection from gateway "gw1" on the Route port'\r\n`,
    ],
  ];
  for (const [name, bytes, err] of cases) {
    it(`closes a route on ${name}`, async () => {
      const r = await exchange(a, bytes);
      assert.ok(r.text.includes(err), JSON.stringify(r.text));
      assert.equal(r.closed, true);
    });
  }

  it('refuses an RS+ with an invalid subject but keeps the route', async () => {
    const raw = await RawClient.open(a.cluster.port);
    const reply = await raw.exchange(`${ROUTE_CONNECT}RS+ $G foo..bar\r\nPING\r\n`);
    assert.ok(reply.includes("-ERR 'Invalid Subscription'\r\n"), JSON.stringify(reply));
    assert.ok(reply.endsWith('PONG\r\n'));
    assert.equal(raw.closed, false);
    raw.close();
  });

  it('ignores interest in an account it does not have', async () => {
    const raw = await RawClient.open(a.cluster.port);
    const reply = await raw.exchange(`${ROUTE_CONNECT}RS+ $SYS $SYS.REQ.SERVER.PING\r\nPING\r\n`);
    assert.equal(reply, 'PONG\r\n');
    raw.close();
  });

  it('refuses a real client on the route port', async () => {
    await assert.rejects(
      connect({ servers: `127.0.0.1:${a.cluster.port}`, reconnect: false, timeout: 2000 }),
      (err: Error) => /route port/i.test(err.message) || /protocol/i.test(err.message),
    );
  });

  it('keeps serving the cluster after all of that', async () => {
    assert.equal(a.cluster.routes.size, 1);
    await expectCrossing(a, b, 'still.ok', 'yes');
  });
});

describe('route authorization', () => {
  let a: Node | null = null;
  let good: Node | null = null;
  let bad: Node | null = null;

  after(async () => {
    await closeAll([a, good, bad]);
  });

  it('admits servers with the cluster credentials and no others', async () => {
    a = await startNode({ user: 'ruser', password: 's3cret', authTimeout: 0.5 });
    const port = a.cluster.port;
    good = await startNode({
      user: 'ruser',
      password: 's3cret',
      routes: [`nats-route://ruser:s3cret@127.0.0.1:${port}`],
    });
    bad = await startNode({ routes: [`nats-route://ruser:wrong@127.0.0.1:${port}`] });
    await waitMesh([a, good], 0);
    await sleep(300);
    assert.equal(a.cluster.routes.size, 1);
    assert.equal(bad.cluster.routes.size, 0);

    const info = (await RawClient.open(port)).infoJson();
    assert.equal(info.auth_required, true);

    const wrong = await exchange(
      a,
      `CONNECT {"user":"ruser","pass":"nope","name":"NX","cluster":"${CLUSTER}"}\r\n`,
    );
    assert.ok(wrong.text.includes("-ERR 'Authorization Violation'\r\n"), wrong.text);
    assert.equal(wrong.closed, true);

    // Route ops before CONNECT are an authorization violation.
    const early = await exchange(a, 'RS+ $G foo\r\n');
    assert.ok(early.text.includes("-ERR 'Authorization Violation'\r\n"), early.text);

    // Nothing at all: the authorization timeout.
    const raw = await RawClient.open(port);
    assert.equal(await raw.waitClosed(3000), true);
    assert.ok(raw.take().includes("-ERR 'Authorization Timeout'\r\n"));
  });
});
