// Lame duck mode on an embedded server (spec §8): the listener closes, clients that
// take async INFO hear `"ldm":true`, and after the grace period the clients are
// closed one by one before the server shuts down.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { connect, Events } from 'nats';
import { C0, RawClient } from '../helpers/raw.js';
import { startLogged } from './helpers.js';

const P1 = 'CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\n';
const LDM_EVENT: string = Events.LDM;
const RECONNECT_EVENT: string = Events.Reconnect;

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => {
      resolve(true);
    });
  });
}

test('INFO with ldm:true reaches async-INFO clients only; clients close after the grace period, spread out', async () => {
  const { server, log } = await startLogged({ lameDuckDuration: 1000, lameDuckGracePeriod: 300 });
  const ready = await RawClient.open(server.port);
  assert.equal(await ready.exchange(`${P1}PING\r\n`), 'PONG\r\n');
  const early = await RawClient.open(server.port);
  early.send(P1);
  const old = await RawClient.open(server.port);
  assert.equal(await old.exchange(`${C0}PING\r\n`), 'PONG\r\n');
  await new Promise((r) => setTimeout(r, 30));

  const start = Date.now();
  const done = server.lameDuckShutdown();
  assert.equal(server.lameDuck, true);
  assert.equal(server.lameDuckShutdown(), done, 'a second call joins the first');
  assert.ok(await refused(server.port), 'new connections are refused');

  assert.ok(await ready.waitFor((t) => t.includes('\r\n')));
  const info = ready.take();
  assert.match(
    info,
    /^INFO \{"server_id":"N[A-Z0-9]{55}",.*"client_id":\d+,"client_ip":"127\.0\.0\.1","ldm":true\} \r\n$/,
  );
  assert.equal(early.take(), '', 'no INFO before the first PONG');
  assert.equal(old.take(), '', 'no INFO for protocol 0');

  const closedAt: number[] = [];
  await Promise.all(
    [ready, early, old].map(async (c) => {
      assert.ok(await c.waitClosed(3000));
      closedAt.push(Date.now() - start);
    }),
  );
  await done;
  closedAt.sort((a, b) => a - b);
  // Nobody goes before the grace period; the closes are spread over the remaining
  // 700 ms (at least half of 700/3 ms apart) and all done well within the duration.
  assert.ok(closedAt[0]! >= 290, `first close at ${closedAt[0]} ms`);
  assert.ok(closedAt[2]! - closedAt[0]! >= 200, `closes at ${closedAt.join(', ')} ms`);
  assert.ok(closedAt[2]! < 1500, `last close at ${closedAt[2]} ms`);
  assert.equal(server.shuttingDown, true);
  assert.deepEqual(
    log.lines.filter((l) => /lame duck|Closing existing|Shutdown/.test(l)),
    [
      '[INF] Entering lame duck mode, stop accepting new clients',
      '[INF] Closing existing clients',
      '[INF] Initiating Shutdown...',
    ],
  );
  // As the reference: the reason is Server Shutdown, with no -ERR.
  assert.deepEqual(
    server.closedClients.map((c) => c.reason),
    ['Server Shutdown', 'Server Shutdown', 'Server Shutdown'],
  );
});

test('without clients, lame duck mode shuts down at once', async () => {
  const { server } = await startLogged({ lameDuckDuration: 60_000, lameDuckGracePeriod: 10_000 });
  const start = Date.now();
  await server.lameDuckShutdown();
  assert.ok(Date.now() - start < 1000);
  assert.equal(server.shuttingDown, true);
});

test('close() during the grace period ends lame duck mode at once', async () => {
  const { server } = await startLogged({ lameDuckDuration: 60_000, lameDuckGracePeriod: 10_000 });
  const c = await RawClient.open(server.port);
  assert.equal(await c.exchange(`${C0}PING\r\n`), 'PONG\r\n');
  const start = Date.now();
  const done = server.lameDuckShutdown();
  await new Promise((r) => setTimeout(r, 50));
  await server.close();
  await done;
  assert.ok(Date.now() - start < 2000);
  assert.ok(await c.waitClosed());
});

test('a nats v2 client reports lame duck mode and is moved off', async () => {
  const { server } = await startLogged({ lameDuckDuration: 1000, lameDuckGracePeriod: 200 });
  const nc = await connect({
    servers: `127.0.0.1:${server.port}`,
    reconnect: false,
  });
  const events: string[] = [];
  void (async () => {
    for await (const s of nc.status()) events.push(s.type);
  })();
  await nc.flush(); // past the first PONG: eligible for async INFO
  const done = server.lameDuckShutdown();
  const closed = await nc.closed();
  await done;
  assert.ok(events.includes(LDM_EVENT), `events: ${events.join(', ')}`);
  assert.equal(closed, undefined, 'closed by the server without an error');
  assert.equal(nc.isClosed(), true);
});

test('a nats v2 client with another server in its list reconnects there', async () => {
  const a = await startLogged({ lameDuckDuration: 1000, lameDuckGracePeriod: 100 });
  const b = await startLogged({});
  const nc = await connect({
    servers: [`127.0.0.1:${a.server.port}`, `127.0.0.1:${b.server.port}`],
    noRandomize: true,
    reconnectTimeWait: 50,
  });
  try {
    const events: string[] = [];
    void (async () => {
      for await (const s of nc.status()) events.push(s.type);
    })();
    const sub = nc.subscribe('moved');
    await nc.flush();
    await a.server.lameDuckShutdown();
    await waitForEvent(events, RECONNECT_EVENT);
    assert.ok(events.includes(LDM_EVENT), `events: ${events.join(', ')}`);
    assert.equal(nc.getServer(), `127.0.0.1:${b.server.port}`);
    // The subscription came along: a message through the other server arrives.
    nc.publish('moved', 'hi');
    const iter = sub[Symbol.asyncIterator]();
    const m = await iter.next();
    assert.equal(m.done, false);
    assert.equal(m.value.string(), 'hi');
  } finally {
    await nc.close();
    await b.server.close();
  }
});

async function waitForEvent(events: string[], type: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!events.includes(type)) {
    if (Date.now() > deadline) throw new Error(`no ${type} event: ${events.join(', ')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
