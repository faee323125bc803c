// Publish and subscribe permissions: the reference's exact -ERR texts (Go-quoted),
// the connection staying open, denied subscriptions not registered, queue
// permissions, allow_responses, and deny rules under a wider wildcard subscription.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clients } from './clients.js';
import { connectLine, open, sleep, startWithConfig } from './helpers.js';

const CONF = `
authorization {
  users = [
    { user: a, password: a, permissions: {
        publish:   { allow: ["foo.>", "_INBOX.>"], deny: ["foo.secret"] }
        subscribe: { allow: ["bar.*", "q.x grp1", "foo.>", "wild.>"], deny: ["bar.secret", "wild.*.hidden", "foo.z grp9"] }
    } }
    { user: s, password: s, permissions: { subscribe: "svc", publish: { deny: ">" }, allow_responses: true } }
    { user: m, password: m, permissions: { subscribe: ["svc"], allow_responses: { max: 2, expires: "1m" } } }
    { user: l, password: l, permissions: { publish: ["x", "y.*"], subscribe: ">" } }
    { user: t, password: t, permissions: { allow_responses: { max: 1, expires: "100ms" }, subscribe: svc } }
    { user: free, password: free }
  ]
}
`;

async function login(port: number, user: string, verbose = false) {
  const c = await open(port);
  const line = connectLine({ user, pass: user, verbose });
  assert.equal(await c.exchange(line + 'PING\r\n'), (verbose ? '+OK\r\n' : '') + 'PONG\r\n');
  return c;
}

describe('permissions', () => {
  it('rows 77 and 78: denied PUB and SUB, the quoted texts, the connection stays open', async () => {
    const { port } = await startWithConfig(CONF);
    const c = await login(port, 'a');
    assert.equal(
      await c.exchange('PUB baz 1\r\na\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Publish to "baz"'\r\nPONG\r\n`,
    );
    assert.equal(
      await c.exchange('SUB baz 1\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Subscription to "baz"'\r\nPONG\r\n`,
    );
    assert.equal(
      await c.exchange('PUB foo.secret 1\r\na\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Publish to "foo.secret"'\r\nPONG\r\n`,
    );
    assert.equal(
      await c.exchange('SUB bar.secret 2\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Subscription to "bar.secret"'\r\nPONG\r\n`,
    );
    assert.equal(c.closed, false);
  });

  it('row 79: queue permissions', async () => {
    const { port } = await startWithConfig(CONF);
    const c = await login(port, 'a');
    assert.equal(
      await c.exchange('SUB q.x grp2 1\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Subscription to "q.x" using queue "grp2"'\r\nPONG\r\n`,
    );
    assert.equal(
      await c.exchange('SUB q.x 2\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Subscription to "q.x"'\r\nPONG\r\n`,
    );
    assert.equal(await c.exchange('SUB q.x grp1 3\r\nPING\r\n'), 'PONG\r\n');
    // A queue deny entry refuses that queue only.
    assert.equal(
      await c.exchange('SUB foo.z grp9 4\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Subscription to "foo.z" using queue "grp9"'\r\nPONG\r\n`,
    );
    assert.equal(await c.exchange('SUB foo.z grp8 5\r\nPING\r\n'), 'PONG\r\n');
  });

  it('row 80: verbose gives +OK for what passes and only -ERR for what is denied', async () => {
    const { port } = await startWithConfig(CONF);
    const c = await login(port, 'a', true);
    assert.equal(
      await c.exchange('PUB baz 1\r\na\r\nSUB baz 1\r\nPUB foo.ok 1\r\na\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Publish to "baz"'\r\n-ERR 'Permissions Violation for Subscription to "baz"'\r\n+OK\r\nPONG\r\n`,
    );
  });

  it('a denied SUB is not registered and a denied PUB is not delivered', async () => {
    const { port } = await startWithConfig(CONF);
    const a = await login(port, 'a');
    const free = await login(port, 'free');
    assert.equal(await free.exchange('SUB > 1\r\nPING\r\n'), 'PONG\r\n');
    await a.exchange('SUB nope 7\r\nPUB baz 1\r\nx\r\nPUB foo.ok 1\r\ny\r\nPING\r\n');
    await sleep(50);
    assert.equal(
      await free.exchange('PUB nope 1\r\nz\r\nPING\r\n'),
      'MSG foo.ok 1 1\r\ny\r\nMSG nope 1 1\r\nz\r\nPONG\r\n',
    );
    assert.equal(await a.exchange('PING\r\n'), 'PONG\r\n', 'the denied SUB 7 got nothing');
  });

  it('a deny rule filters messages out of a wider allowed wildcard subscription', async () => {
    const { port } = await startWithConfig(CONF);
    const a = await login(port, 'a');
    const free = await login(port, 'free');
    // bar.* is allowed and bar.secret denied; wild.> is allowed and wild.*.hidden denied.
    assert.equal(
      await a.exchange('SUB bar.* 1\r\nSUB wild.> 2\r\nSUB wild.> q 3\r\nPING\r\n'),
      'PONG\r\n',
    );
    free.send(
      'PUB bar.secret 1\r\n1\r\nPUB bar.open 1\r\n2\r\nPUB wild.x.hidden 1\r\n3\r\nPUB wild.x.shown 1\r\n4\r\n',
    );
    await free.exchange('PING\r\n');
    await sleep(50);
    const got = await a.exchange('PING\r\n');
    assert.ok(!got.includes('secret') && !got.includes('hidden'), got);
    assert.ok(got.includes('MSG bar.open 1 1\r\n2\r\n'), got);
    assert.ok(got.includes('MSG wild.x.shown 2 1\r\n4\r\n'), got);
    assert.ok(got.includes('MSG wild.x.shown 3 1\r\n4\r\n'), got);
  });

  it('string, list and {allow, deny} forms; wildcards in permissions', async () => {
    const { port } = await startWithConfig(CONF);
    const l = await login(port, 'l');
    assert.equal(
      await l.exchange('SUB > 1\r\nPUB x 1\r\na\r\nPUB y.z 1\r\nb\r\nPING\r\n'),
      'MSG x 1 1\r\na\r\nMSG y.z 1 1\r\nb\r\nPONG\r\n',
    );
    assert.equal(
      await l.exchange('PUB y.z.w 1\r\nc\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Publish to "y.z.w"'\r\nPONG\r\n`,
    );
    // The same subject again comes from the per-connection cache, same answer.
    for (let i = 0; i < 3; i++) {
      assert.equal(
        await l.exchange('PUB y.z.w 1\r\nc\r\nPING\r\n'),
        `-ERR 'Permissions Violation for Publish to "y.z.w"'\r\nPONG\r\n`,
      );
    }
  });

  it('Go quoting of unusual subjects', async () => {
    const { port } = await startWithConfig(CONF);
    const a = await login(port, 'a');
    assert.equal(
      await a.exchange('PUB a"b\\c 1\r\na\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Publish to "a\\"b\\\\c"'\r\nPONG\r\n`,
    );
  });

  it('allow_responses: true allows one reply to a received reply subject', async () => {
    const { port } = await startWithConfig(CONF);
    const s = await login(port, 's');
    const requester = await login(port, 'free');
    assert.equal(await s.exchange('SUB svc 1\r\nPING\r\n'), 'PONG\r\n');
    // Publishing anywhere else, or to a reply subject not received, is denied.
    assert.equal(
      await s.exchange('PUB _INBOX.1 1\r\na\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Publish to "_INBOX.1"'\r\nPONG\r\n`,
    );
    assert.equal(
      await requester.exchange('SUB _INBOX.1 9\r\nPUB svc _INBOX.1 3\r\nreq\r\nPING\r\n'),
      'PONG\r\n',
    );
    assert.ok(await s.waitFor((t) => t.includes('MSG svc 1 _INBOX.1 3\r\nreq\r\n')));
    s.take();
    assert.equal(await s.exchange('PUB _INBOX.1 2\r\nok\r\nPING\r\n'), 'PONG\r\n');
    assert.ok(await requester.waitFor((t) => t.includes('MSG _INBOX.1 9 2\r\nok\r\n')));
    assert.equal(
      await s.exchange('PUB _INBOX.1 2\r\nno\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Publish to "_INBOX.1"'\r\nPONG\r\n`,
    );
  });

  it('allow_responses { max: 2 } allows two replies; expires ends the permission', async () => {
    const { port } = await startWithConfig(CONF);
    const m = await login(port, 'm');
    const t = await login(port, 't');
    const requester = await login(port, 'free');
    await m.exchange('SUB svc 1\r\nPING\r\n');
    await t.exchange('SUB svc 1\r\nPING\r\n');
    await requester.exchange('PUB svc _INBOX.2 1\r\nr\r\nPING\r\n');
    await m.waitFor((x) => x.includes('MSG svc'));
    await t.waitFor((x) => x.includes('MSG svc'));
    m.take();
    t.take();
    assert.equal(
      await m.exchange('PUB _INBOX.2 1\r\n1\r\nPUB _INBOX.2 1\r\n2\r\nPING\r\n'),
      'PONG\r\n',
    );
    assert.equal(
      await m.exchange('PUB _INBOX.2 1\r\n3\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Publish to "_INBOX.2"'\r\nPONG\r\n`,
    );
    await sleep(150);
    assert.equal(
      await t.exchange('PUB _INBOX.2 1\r\n1\r\nPING\r\n'),
      `-ERR 'Permissions Violation for Publish to "_INBOX.2"'\r\nPONG\r\n`,
    );
  });

  it('permission subjects are validated when the file is read', async () => {
    await assert.rejects(
      startWithConfig(
        'authorization { users: [ { user: a, password: a, permissions: { publish: "foo..bar" } } ] }',
      ),
      /server\.conf:1:\d+: subject "foo\.\.bar" is not a valid subject/,
    );
    await assert.rejects(
      startWithConfig(
        'authorization { users: [ { user: a, password: a, permissions: { publish: { allow: "x", bogus: 1 } } } ] }',
      ),
      /Unknown field name "bogus" parsing subject permissions/,
    );
  });

  for (const k of clients) {
    it(`${k.name}: a permission violation is reported and the connection stays usable`, async () => {
      const { port } = await startWithConfig(CONF);
      const nc = await k.connect(port, { user: 'a', pass: 'a' });
      const errors: string[] = [];
      void (async () => {
        for await (const s of nc.status()) {
          // v2 reports its error code in data, v3 the server's text in error.
          const show = (v: unknown): string => (v instanceof Error ? v.message : JSON.stringify(v));
          errors.push(`${s.type} ${show(s.data)} ${show(s.error)}`);
        }
      })();
      const sub = nc.subscribe('foo.>');
      nc.publish('baz', 'x');
      nc.publish('foo.ok', 'y');
      for await (const m of sub) {
        assert.equal(m.subject, 'foo.ok');
        break;
      }
      await nc.flush();
      assert.equal(nc.isClosed(), false);
      assert.ok(
        errors.some((e) => /permissions[ _]violation/i.test(e)),
        errors.join('\n'),
      );
      await nc.close();
    });
  }
});
