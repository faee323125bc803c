// Accounts: each is its own subject space; stream and service exports/imports link
// them, with subject mapping, and the response path of an imported service works
// for request/reply.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clients } from './clients.js';
import { connectLine, open, sleep, startWithConfig } from './helpers.js';

const CONF = `
accounts {
  A: {
    users: [ { user: a, password: a } ]
    exports: [
      { stream: "feed.>" }
      { stream: "private.>", accounts: [C] }
      { service: "svc.>" }
      { service: "multi", response_type: stream }
    ]
  }
  B: {
    users: [ { user: b, password: b } ]
    imports: [
      { stream: { account: A, subject: "feed.>" }, prefix: "fromA" }
      { service: { account: A, subject: "svc.time" }, to: "time" }
      { service: { account: A, subject: "svc.echo.*" } }
      { service: { account: A, subject: "multi" } }
    ]
  }
  C: {
    users: [ { user: c, password: c } ]
    imports: [
      { stream: { account: A, subject: "feed.news" }, to: "news" }
      { stream: { account: A, subject: "private.>" } }
    ]
  }
  D: { users: [ { user: d, password: d } ] }
}
`;

async function login(port: number, user: string) {
  const c = await open(port);
  assert.equal(await c.exchange(connectLine({ user, pass: user }) + 'PING\r\n'), 'PONG\r\n');
  return c;
}

describe('accounts', () => {
  it('a publish in one account never reaches another', async () => {
    const { port } = await startWithConfig(CONF);
    const a = await login(port, 'a');
    const d = await login(port, 'd');
    const d2 = await login(port, 'd');
    assert.equal(await a.exchange('SUB > 1\r\nPING\r\n'), 'PONG\r\n');
    assert.equal(await d.exchange('SUB > 1\r\nPING\r\n'), 'PONG\r\n');
    await d2.exchange('PUB x 1\r\n1\r\nPING\r\n');
    await a.exchange('PUB y 1\r\n2\r\nPING\r\n');
    await sleep(50);
    assert.equal(await d.exchange('PING\r\n'), 'MSG x 1 1\r\n1\r\nPONG\r\n');
    assert.equal(
      await a.exchange('PING\r\n'),
      'PONG\r\n',
      'a saw its own publish only (already read)',
    );
  });

  it('stream import with prefix and with to; an export limited to some accounts', async () => {
    const { port } = await startWithConfig(CONF);
    const a = await login(port, 'a');
    const b = await login(port, 'b');
    const c = await login(port, 'c');
    const d = await login(port, 'd');
    assert.equal(await b.exchange('SUB > 1\r\nPING\r\n'), 'PONG\r\n');
    assert.equal(await c.exchange('SUB > 1\r\nPING\r\n'), 'PONG\r\n');
    assert.equal(await d.exchange('SUB > 1\r\nPING\r\n'), 'PONG\r\n');
    await a.exchange(
      'PUB feed.news 2\r\nhi\r\nPUB private.x 1\r\np\r\nPUB other 1\r\no\r\nPING\r\n',
    );
    await sleep(50);
    assert.equal(await b.exchange('PING\r\n'), 'MSG fromA.feed.news 1 2\r\nhi\r\nPONG\r\n');
    const gotC = await c.exchange('PING\r\n');
    assert.ok(gotC.includes('MSG news 1 2\r\nhi\r\n'), gotC);
    assert.ok(gotC.includes('MSG private.x 1 1\r\np\r\n'), gotC);
    assert.equal(await d.exchange('PING\r\n'), 'PONG\r\n');
  });

  it('service import: the request is mapped into the exporter and the reply comes back', async () => {
    const { port } = await startWithConfig(CONF);
    const a = await login(port, 'a');
    const b = await login(port, 'b');
    assert.equal(await a.exchange('SUB svc.> 1\r\nPING\r\n'), 'PONG\r\n');
    assert.equal(
      await b.exchange('SUB _INBOX.r 5\r\nPUB time _INBOX.r 1\r\n?\r\nPING\r\n'),
      'PONG\r\n',
    );
    assert.ok(await a.waitFor((t) => t.includes('\r\n?\r\n')));
    const m = /^MSG svc\.time 1 (_R_\.\S+) 1\r\n\?\r\n$/.exec(a.take());
    assert.ok(m !== null, 'the exporter sees the exported subject and a _R_ reply');
    await a.exchange(`PUB ${m[1]} 3\r\nnow\r\nPING\r\n`);
    assert.ok(await b.waitFor((t) => t === 'MSG _INBOX.r 5 3\r\nnow\r\n'));
    b.take();
    // A singleton service answers once: a second response is dropped.
    await a.exchange(`PUB ${m[1]} 4\r\nlate\r\nPING\r\n`);
    await sleep(50);
    assert.equal(await b.exchange('PING\r\n'), 'PONG\r\n');
  });

  it('a stream response type lets several responses through', async () => {
    const { port } = await startWithConfig(CONF);
    const a = await login(port, 'a');
    const b = await login(port, 'b');
    await a.exchange('SUB multi 1\r\nPING\r\n');
    await b.exchange('SUB _INBOX.m 5\r\nPUB multi _INBOX.m 1\r\n?\r\nPING\r\n');
    assert.ok(await a.waitFor((t) => t.includes('\r\n?\r\n')));
    const reply = /(_R_\.\S+)/.exec(a.take())![1]!;
    await a.exchange(`PUB ${reply} 1\r\n1\r\nPUB ${reply} 1\r\n2\r\nPING\r\n`);
    assert.ok(await b.waitFor((t) => t === 'MSG _INBOX.m 5 1\r\n1\r\nMSG _INBOX.m 5 1\r\n2\r\n'));
  });

  it('no responders comes back when the exporter has no subscriber', async () => {
    const { port } = await startWithConfig(CONF);
    const b = await open(port);
    const line = connectLine({ user: 'b', pass: 'b', headers: true, no_responders: true });
    assert.equal(
      await b.exchange(line + 'SUB _INBOX.z 2\r\nPUB time _INBOX.z 1\r\n?\r\nPING\r\n'),
      'HMSG _INBOX.z 2 16 16\r\nNATS/1.0 503\r\n\r\n\r\nPONG\r\n',
    );
  });

  for (const k of clients) {
    it(`${k.name}: request/reply through an imported service, wildcard subject`, async () => {
      const { port } = await startWithConfig(CONF);
      const responder = await k.connect(port, { user: 'a', pass: 'a' });
      const sub = responder.subscribe('svc.echo.*');
      void (async () => {
        for await (const m of sub) m.respond(`${m.subject}:${m.string()}`);
      })();
      await responder.flush();
      const requester = await k.connect(port, { user: 'b', pass: 'b' });
      const reply = await requester.request('svc.echo.x', 'ping', { timeout: 2000 });
      assert.equal(reply.string(), 'svc.echo.x:ping');
      const reply2 = await requester
        .request('time', 't', { timeout: 2000 })
        .catch((e: unknown) => e);
      assert.ok(reply2 instanceof Error, 'svc.time has no responder: no responders');
      // Account D cannot reach A's service at all.
      const outsider = await k.connect(port, { user: 'd', pass: 'd' });
      const denied = await outsider
        .request('svc.echo.x', 'x', { timeout: 500 })
        .catch((e: unknown) => e);
      assert.ok(denied instanceof Error);
      await Promise.all([responder.close(), requester.close(), outsider.close()]);
    });
  }

  it('an import the exporter does not grant is a config error, as the reference', async () => {
    await assert.rejects(
      startWithConfig(`accounts {
        A: { exports: [ { stream: "foo.>", accounts: [C] } ] }
        B: { imports: [ { stream: { account: A, subject: "foo.>" }, prefix: p } ] }
        C: {}
      }`),
      /Error adding stream import "foo\.>": stream import not authorized/,
    );
    await assert.rejects(
      startWithConfig(`accounts { B: { imports: [ { service: { account: Z, subject: "x" } } ] } }`),
      /"Z" account not defined for service import/,
    );
    await assert.rejects(startWithConfig('accounts { $G: {} }'), /"\$G" is a Reserved Account/);
    await assert.rejects(
      startWithConfig(
        'authorization { token: t }\naccounts { A: { users: [ { user: a, password: a } ] } }',
      ),
      /Can not have a token and accounts/,
    );
  });
});
