// A node without JetStream imports the system account's `$JS.API.>` into its accounts
// with JetStream, as nats-server does in a cluster (src/cluster/js-api.ts): a request
// goes to the servers that announced `RS+ $SYS $JS.API.>` as an HMSG in $SYS with the
// requester's client info in `Nats-Request-Info` and an `_R_.` reply of this server, and
// their answer on that reply comes back to the requester. Here the other server is a
// route spoken by hand, so every byte is checked; the bytes are nats-server 2.9.10's
// (recorded with -DV from a server without JetStream in a cluster of three with it):
//   RS+ $SYS _R_.RQtvV9.>
//   HMSG $SYS $JS.API.INFO _R_.RQtvV9.Ya7FHv 90 90
//   NATS/1.0\r\nNats-Request-Info: {"acc":"$G","rtt":2569494,"server":"plain","cluster":"C"}\r\n\r\n
// (wirebus leaves `rtt` out). test/cluster/jetstream-routes.test.ts runs the real thing
// with a cluster of nats-server -js nodes.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { connect, headers, type NatsConnection } from 'nats';
import { reloadSecurity } from '../../src/index.js';
import { RawClient } from '../helpers/raw.js';
import { CLUSTER, closeAll, sleep, startNode, waitFor, type Node } from './helpers.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A route spoken by hand: joins `node`'s cluster as server NFAKE. */
async function fakeRoute(node: Node): Promise<RawClient> {
  const raw = await RawClient.open(node.cluster.port);
  raw.send(
    `CONNECT {"echo":true,"verbose":false,"pedantic":false,"tls_required":false,"headers":true,"name":"NFAKE","cluster":"${CLUSTER}"}\r\n` +
      `INFO {"server_id":"NFAKE","server_name":"fake","version":"2.9.10","proto":2,"host":"127.0.0.1","port":1,"headers":true,"cluster":"${CLUSTER}"}\r\n` +
      'PING\r\n',
  );
  assert.ok(await raw.waitFor((t) => t.includes('PONG\r\n'), 3000), 'the route registered');
  return raw;
}

interface Received {
  /** The `HMSG`/`RMSG` line. */
  line: string;
  payload: string;
  /** What came before it since the last take. */
  before: string;
}

/** The next `HMSG`/`RMSG` (with its payload) the fake route receives, or null. */
async function nextMessage(raw: RawClient, ms = 2000): Promise<Received | null> {
  let found = null as Received | null;
  const re = /(?:^|\r\n)((?:HMSG|RMSG) [^\r\n]*)\r\n/;
  await raw.waitFor((t) => {
    const m = re.exec(t);
    if (m === null) return false;
    const fields = m[1]!.split(' ');
    const size = Number(fields[fields.length - 1]);
    const start = m.index + m[0].length;
    if (t.length < start + size + 2) return false;
    const before = t.slice(0, m.index + (m[0].startsWith('\r\n') ? 2 : 0));
    found = { line: m[1]!, payload: t.slice(start, start + size), before };
    return true;
  }, ms);
  if (found !== null) raw.take();
  return found;
}

const nodes: Node[] = [];
const conns: NatsConnection[] = [];
const raws: RawClient[] = [];
after(async () => {
  for (const r of raws) r.close();
  for (const c of conns) await c.close().catch(() => undefined);
  await closeAll(nodes);
});

describe("the system account's JetStream API on a node without JetStream", () => {
  it('forwards a request to the servers that serve the API and brings the answer back', async () => {
    const node = await startNode({}, { serverName: 'wbn' });
    nodes.push(node);
    const raw = await fakeRoute(node);
    raws.push(raw);
    const subs = raw.take();
    assert.equal(subs.includes('$SYS'), false, 'nothing in $SYS before a request');
    assert.equal(subs.includes('$JS.API'), false, 'the import itself is not announced');
    raw.send('RS+ $SYS $JS.API.>\r\nPING\r\n');
    await raw.waitFor((t) => t.includes('PONG\r\n'));
    raw.take();

    const nc = await connect({ servers: node.url });
    conns.push(nc);
    const answer = nc.request('$JS.API.INFO', new Uint8Array(0), { timeout: 3000 });
    const req = await nextMessage(raw);
    assert.ok(req !== null, 'the request reached the route');
    // This server's responses, announced with the first request, ahead of it.
    const announced = /RS\+ \$SYS (_R_\.[A-Za-z0-9]{6}\.)>\r\n$/.exec(req.before);
    assert.ok(announced !== null, JSON.stringify(req.before));
    const prefix = announced[1]!;
    const info = `{"acc":"$G","server":"wbn","cluster":"${CLUSTER}"}`;
    const hdr = `NATS/1.0\r\nNats-Request-Info: ${info}\r\n\r\n`;
    const m = new RegExp(
      `^HMSG \\$SYS \\$JS\\.API\\.INFO (${prefix.replace(/\./g, '\\.')}[A-Za-z0-9]{6}) ${hdr.length} ${hdr.length}$`,
    ).exec(req.line);
    assert.ok(m !== null, req.line);
    assert.equal(req.payload, hdr);
    const reply = m[1]!;
    raw.send(`RMSG $SYS ${reply} 9\r\n{"ok":42}\r\n`);
    const got = await answer;
    assert.equal(dec.decode(got.data), '{"ok":42}');
    assert.equal(got.headers, undefined);
    // Singleton: a second answer on the same reply goes nowhere.
    let late = 0;
    const inbox = nc.subscribe('_INBOX.>', { callback: () => late++ });
    await nc.flush();
    raw.send(`RMSG $SYS ${reply} 2\r\nno\r\nPING\r\n`);
    await raw.waitFor((t) => t.includes('PONG\r\n'));
    await nc.flush();
    await sleep(50);
    assert.equal(late, 0);
    inbox.unsubscribe();

    // A request with headers and a body keeps them; a Nats-Request-Info of the
    // client's own is replaced, as the reference's setHeader does.
    const h = headers();
    h.set('X-Mine', '1');
    h.set('Nats-Request-Info', '{"acc":"SPOOF"}');
    const create = nc.request('$JS.API.STREAM.CREATE.S', enc.encode('{"name":"S"}'), {
      timeout: 3000,
      headers: h,
    });
    const req2 = await nextMessage(raw);
    assert.ok(req2 !== null);
    const hdr2 = `NATS/1.0\r\nX-Mine: 1\r\nNats-Request-Info: ${info}\r\n\r\n`;
    const size2 = hdr2.length + '{"name":"S"}'.length;
    const reply2 = req2.line.split(' ')[3]!;
    assert.equal(req2.line, `HMSG $SYS $JS.API.STREAM.CREATE.S ${reply2} ${hdr2.length} ${size2}`);
    assert.equal(req2.payload, hdr2 + '{"name":"S"}');
    raw.send(`RMSG $SYS ${reply2} 2\r\nok\r\n`);
    assert.equal(dec.decode((await create).data), 'ok');

    // A request that came from another server was imported there already: not again.
    let seen = 0;
    const local = nc.subscribe('$JS.API.>', { callback: () => seen++ });
    await nc.flush();
    raw.send('RMSG $G $JS.API.INFO _INBOX.other 0\r\n\r\nPING\r\n');
    await raw.waitFor((t) => t.includes('PONG\r\n'));
    await nc.flush();
    assert.equal(seen, 1, 'a local subscriber still gets it');
    local.unsubscribe();
    assert.equal(await nextMessage(raw, 200), null);

    // A consumer's MSG.NEXT and a stream's DIRECT.GET go in the account itself: with no
    // server announcing them there, nobody answers (503), and nothing goes in $SYS.
    for (const subject of ['$JS.API.CONSUMER.MSG.NEXT.S.C', '$JS.API.DIRECT.GET.S']) {
      await assert.rejects(
        nc.request(subject, enc.encode('{}'), { timeout: 2000 }),
        (e: Error & { code?: string }) => e.code === '503',
        subject,
      );
    }
    // Announced in $G, they go there.
    raw.send('RS+ $G $JS.API.CONSUMER.MSG.NEXT.S.C\r\nPING\r\n');
    await raw.waitFor((t) => t.includes('PONG\r\n'));
    raw.take();
    nc.publish('$JS.API.CONSUMER.MSG.NEXT.S.C', enc.encode('{"batch":1}'), { reply: 'in.1' });
    const next = await nextMessage(raw);
    assert.equal(next?.line, 'RMSG $G $JS.API.CONSUMER.MSG.NEXT.S.C in.1 11');
    assert.equal(next.payload, '{"batch":1}');

    // Once no server serves the API, a request gets 503 at once, as on a server
    // without JetStream (the reference's import would take it and time out).
    raw.send('RS- $SYS $JS.API.>\r\nPING\r\n');
    await raw.waitFor((t) => t.includes('PONG\r\n'));
    raw.take();
    await assert.rejects(
      nc.request('$JS.API.INFO', new Uint8Array(0), { timeout: 2000 }),
      (e: Error & { code?: string }) => e.code === '503',
    );
    assert.equal(await nextMessage(raw, 200), null);
  });

  it('imports into the accounts with JetStream, and follows a reload', async () => {
    const accounts = {
      A: { users: [{ user: 'a', password: 'a' }], jetstream: true },
      B: { users: [{ user: 'b', password: 'b' }] },
    };
    const node = await startNode({}, { serverName: 'wbacc', security: { accounts } });
    nodes.push(node);
    assert.deepEqual(
      node.cluster.jsApi?.importers().map((a) => a.name),
      ['A'],
    );
    const raw = await fakeRoute(node);
    raws.push(raw);
    raw.send('RS+ $SYS $JS.API.>\r\nPING\r\n');
    await raw.waitFor((t) => t.includes('PONG\r\n'));
    raw.take();
    const a = await connect({ servers: node.url, user: 'a', pass: 'a' });
    const b = await connect({ servers: node.url, user: 'b', pass: 'b' });
    conns.push(a, b);

    const fromA = a.request('$JS.API.INFO', new Uint8Array(0), { timeout: 3000 });
    const req = await nextMessage(raw);
    assert.ok(req !== null);
    assert.equal(
      req.payload,
      `NATS/1.0\r\nNats-Request-Info: {"acc":"A","server":"wbacc","cluster":"${CLUSTER}"}\r\n\r\n`,
    );
    raw.send(`RMSG $SYS ${req.line.split(' ')[3]!} 1\r\nA\r\n`);
    assert.equal(dec.decode((await fromA).data), 'A');
    // B has no JetStream: not imported, no responders.
    await assert.rejects(
      b.request('$JS.API.INFO', new Uint8Array(0), { timeout: 2000 }),
      (e: Error & { code?: string }) => e.code === '503',
    );

    // A reload gives B JetStream and takes it from A.
    reloadSecurity(node.server, {
      accounts: {
        A: { users: [{ user: 'a', password: 'a' }] },
        B: { users: [{ user: 'b', password: 'b' }], jetstream: true },
      },
    });
    await waitFor('the import to follow the reload', () => {
      const names = node.cluster.jsApi?.importers().map((x) => x.name) ?? [];
      return names.length === 1 && names[0] === 'B';
    });
    const fromB = b.request('$JS.API.INFO', new Uint8Array(0), { timeout: 3000 });
    const reqB = await nextMessage(raw);
    assert.ok(reqB !== null);
    assert.match(reqB.payload, /\{"acc":"B",/);
    raw.send(`RMSG $SYS ${reqB.line.split(' ')[3]!} 1\r\nB\r\n`);
    assert.equal(dec.decode((await fromB).data), 'B');
    await assert.rejects(
      a.request('$JS.API.INFO', new Uint8Array(0), { timeout: 2000 }),
      (e: Error & { code?: string }) => e.code === '503',
    );
  });

  it('uses the configured system account, and none with no_system_account', async () => {
    const accounts = {
      SYS: { users: [{ user: 's', password: 's' }] },
      A: { users: [{ user: 'a', password: 'a' }], jetstream: true },
    };
    const node = await startNode(
      {},
      { serverName: 'wbsys', systemAccount: 'SYS', security: { accounts } },
    );
    nodes.push(node);
    assert.equal(node.cluster.jsApi?.system, node.server.accounts.get('SYS'));
    const raw = await fakeRoute(node);
    raws.push(raw);
    raw.send('RS+ SYS $JS.API.>\r\nPING\r\n');
    await raw.waitFor((t) => t.includes('PONG\r\n'));
    raw.take();
    const a = await connect({ servers: node.url, user: 'a', pass: 'a' });
    conns.push(a);
    const answer = a.request('$JS.API.INFO', new Uint8Array(0), { timeout: 3000 });
    const req = await nextMessage(raw);
    assert.ok(req !== null);
    assert.match(req.before, /RS\+ SYS _R_\.[A-Za-z0-9]{6}\.>\r\n$/);
    assert.match(
      req.line,
      /^HMSG SYS \$JS\.API\.INFO _R_\.[A-Za-z0-9]{6}\.[A-Za-z0-9]{6} \d+ \d+$/,
    );
    assert.match(req.payload, /"acc":"A"/);
    raw.send(`RMSG SYS ${req.line.split(' ')[3]!} 3\r\nsys\r\n`);
    assert.equal(dec.decode((await answer).data), 'sys');

    const none = await startNode({}, { noSystemAccount: true });
    nodes.push(none);
    assert.equal(none.cluster.jsApi, null);
  });

  it('is not there on a node that runs JetStream itself', async () => {
    const node = await startNode({}, { jetstream: true });
    nodes.push(node);
    assert.equal(node.cluster.jsApi, null);
  });
});
