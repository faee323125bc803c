// Config reload on an embedded server: what takes effect on existing connections,
// what is refused (with the reference's "config reload not supported for <Field>"
// text) and leaves the running config untouched, and the hooks other layers use.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigText } from '../../src/config/conf.js';
import type { ServerOptions } from '../../src/config/options.js';
import { applyConfig, registerConfigKeys } from '../../src/config/load.js';
import { ReloadError, rememberConfig, type ReloadContext } from '../../src/server/reload.js';
import { goDuration } from '../../src/config/duration-format.js';
import { C0, RawClient } from '../helpers/raw.js';
import { startLogged } from './helpers.js';

const P1 = 'CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\n';

test('max_payload: existing parsers enforce the new limit, INFO goes to protocol-1 clients past their first PONG', async () => {
  const { server, log } = await startLogged({ maxPayload: 1024 });
  try {
    const ready = await RawClient.open(server.port); // protocol 1, first PONG sent
    assert.equal(await ready.exchange(`${P1}PING\r\n`), 'PONG\r\n');
    const early = await RawClient.open(server.port); // protocol 1, no PING yet
    early.send(P1);
    const old = await RawClient.open(server.port); // protocol 0
    assert.equal(await old.exchange(`${C0}PING\r\n`), 'PONG\r\n');
    // Let the CONNECT of `early` arrive.
    assert.equal(await early.exchange('SUB x 1\r\n', 'never', 100), '');

    const options = server.options;
    const changed = server.applyReload({ maxPayload: 512 });
    assert.deepEqual(changed, ['maxPayload']);
    assert.equal(server.options, options, 'the options object is kept');
    assert.equal(server.options.maxPayload, 512);
    assert.ok(log.grep('Reloaded: max_payload = 512').length === 1);
    assert.equal(log.lines.at(-1), '[INF] Reloaded server configuration');

    assert.ok(await ready.waitFor((t) => t.includes('"max_payload":512')));
    const info = ready.take();
    assert.match(
      info,
      /^INFO \{.*"max_payload":512,"client_id":\d+,"client_ip":"127\.0\.0\.1"\} \r\n$/,
    );
    // Not yet eligible: nothing now, the INFO comes right after its first PONG.
    assert.equal(early.take(), '');
    early.send('PING\r\n');
    assert.ok(await early.waitFor((t) => t.includes('INFO ')));
    assert.match(early.take(), /^PONG\r\nINFO \{.*"max_payload":512,/);
    assert.equal(old.take(), '', 'a protocol-0 client gets no async INFO');

    // The new limit holds on a connection opened before the reload.
    const big = 'x'.repeat(600);
    const reply = await old.exchange(`PUB a ${big.length}\r\n${big}\r\n`, "'\r\n");
    assert.equal(reply, "-ERR 'Maximum Payload Violation'\r\n");
    ready.close();
    early.close();
    old.close();
  } finally {
    await server.close();
  }
});

test('the INFO after the first PONG carries the new max_payload', async () => {
  const { server } = await startLogged({ maxPayload: 1024 });
  try {
    const c = await RawClient.open(server.port);
    c.send(P1);
    await new Promise((r) => setTimeout(r, 50));
    server.applyReload({ maxPayload: 2048 });
    c.send('PING\r\n');
    assert.ok(await c.waitFor((t) => t.includes('INFO ')));
    const text = c.take();
    assert.ok(text.startsWith('PONG\r\nINFO {'), text);
    assert.match(text, /"max_payload":2048/);
    c.close();
  } finally {
    await server.close();
  }
});

test('max_control_line reaches existing parsers', async () => {
  const { server } = await startLogged({ maxControlLine: 1024 });
  try {
    const c = await RawClient.open(server.port);
    assert.equal(await c.exchange(`${C0}PING\r\n`), 'PONG\r\n');
    server.applyReload({ maxControlLine: 16 });
    const reply = await c.exchange(`SUB ${'a'.repeat(40)} 1\r\n`, "'\r\n");
    assert.equal(reply, "-ERR 'Maximum Control Line Exceeded'\r\n");
    assert.ok(await c.waitClosed());
  } finally {
    await server.close();
  }
});

test('a change to a field that cannot be reloaded is refused and nothing changes', async () => {
  const { server } = await startLogged({ maxPayload: 1024, serverName: 'a' });
  try {
    const cases: [Record<string, unknown>, string][] = [
      [{ serverName: 'b' }, 'config reload not supported for ServerName: old=a, new=b'],
      [{ host: '0.0.0.0' }, 'config reload not supported for Host: old=127.0.0.1, new=0.0.0.0'],
      [{ port: 4999 }, `config reload not supported for Port: old=0, new=4999`],
      [
        { maxPending: 32 * 1024 * 1024 },
        'config reload not supported for MaxPending: old=10485760, new=33554432',
      ],
      [{ maxSubscriptions: 5 }, 'config reload not supported for MaxSubs: old=0, new=5'],
      [
        { lameDuckDuration: 40_000 },
        'config reload not supported for LameDuckDuration: old=2m0s, new=40s',
      ],
      [
        { noHeaderSupport: true },
        'config reload not supported for NoHeaderSupport: old=false, new=true',
      ],
      [{ httpPort: 8333 }, 'config reload not supported for HTTPPort: old=0, new=8333'],
    ];
    for (const [change, message] of cases) {
      const before = { ...server.options };
      assert.throws(
        // A reloadable change beside it is not applied either.
        () => server.applyReload({ maxPayload: 100, ...change }),
        (err: unknown) => err instanceof ReloadError && err.message === message,
        message,
      );
      assert.deepEqual(server.options, before);
    }
  } finally {
    await server.close();
  }
});

test('options that no longer validate are refused with the validation message', async () => {
  const { server } = await startLogged({});
  try {
    assert.throws(() => server.applyReload({ maxPayload: 100 * 1024 * 1024 }), {
      message: 'max_payload (104857600) cannot be higher than max_pending (10485760)',
    });
    assert.equal(server.options.maxPayload, 1024 * 1024);
  } finally {
    await server.close();
  }
});

test('reloadable core fields are logged as the reference does', async () => {
  const { server, log } = await startLogged({});
  try {
    log.lines.length = 0;
    server.applyReload({
      clientAdvertise: 'foo:1234',
      trace: true,
      debug: true,
      logtime: false,
      maxConnections: 10,
      pingInterval: 5000,
      pingMax: 3,
      maxControlLine: 2048,
      writeDeadline: 3000,
      authTimeout: 0.5,
    });
    assert.deepEqual(log.lines, [
      '[INF] Reload: client_advertise = foo:1234',
      '[INF] Reloaded: trace = true',
      '[INF] Reloaded: debug = true',
      '[INF] Reloaded: logtime = false',
      '[INF] Reloaded: max_connections = 10',
      '[INF] Reloaded: ping_interval = 5s',
      '[INF] Reloaded: ping_max = 3',
      '[INF] Reloaded: authorization timeout = 0.5',
      '[INF] Reloaded: max_control_line = 2048',
      '[INF] Reloaded: write_deadline = 3s',
      '[INF] Reloaded server configuration',
    ]);
    // The logger took the new levels.
    assert.equal(log.traceEnabled, true);
    assert.equal(log.debugEnabled, true);
    // The INFO advertises the new address.
    const c = await RawClient.open(server.port);
    assert.equal(c.infoJson().host, 'foo');
    assert.equal(c.infoJson().port, 1234);
    c.close();
    // A whole configuration: options it leaves out go back to their defaults.
    log.lines.length = 0;
    server.reloadConfig({ host: '127.0.0.1', port: 0, clientAdvertise: 'foo:1234' }, null);
    assert.ok(log.grep('Reloaded: trace = false').length === 1);
    assert.equal(server.options.pingInterval, 120_000);
  } finally {
    await server.close();
  }
});

test('lowering max_connections closes the newest connections', async () => {
  const { server, log } = await startLogged({});
  try {
    const clients: RawClient[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await RawClient.open(server.port);
      assert.equal(await c.exchange(`${C0}PING\r\n`), 'PONG\r\n');
      clients.push(c);
    }
    server.applyReload({ maxConnections: 1 });
    assert.ok(await clients[2]!.waitClosed());
    assert.ok(await clients[1]!.waitClosed());
    assert.equal(clients[1]!.take(), "-ERR 'Maximum Connections Exceeded'\r\n");
    assert.equal(clients[0]!.closed, false);
    assert.deepEqual(log.grep('max_connections'), [
      '[INF] Closed 2 connections to fall within max_connections',
      '[INF] Reloaded: max_connections = 1',
    ]);
    clients[0]!.close();
  } finally {
    await server.close();
  }
});

test('reload hooks: a layer sees its config section, may refuse, and runs only once all accepted', async () => {
  const { server, log } = await startLogged({});
  try {
    const seen: ReloadContext[] = [];
    const applied: string[] = [];
    let refuse = false;
    server.reloadHooks.push({
      name: 'auth (test)',
      sections: ['x_test_layer'],
      prepare: (ctx) => {
        seen.push(ctx);
        if (refuse) throw new Error('authorization: users must not be empty');
        const section = ctx.config?.sections.get('x_test_layer');
        return section === undefined ? null : () => applied.push('auth');
      },
    });
    server.reloadHooks.push({
      name: 'second',
      prepare: () => () => applied.push('second'),
    });
    // A test-only key stands for a layer's own section (authorization, streaming...).
    registerConfigKeys(['x_test_layer']);
    const config = applyConfig(
      parseConfigText('max_payload: 2KB\nx_test_layer { timeout: 1 }\n', 'test.conf'),
      'test.conf',
    );
    server.applyReload(config.options, config);
    assert.deepEqual(applied, ['auth', 'second']);
    assert.deepEqual([...seen[0]!.changed], ['maxPayload']);
    assert.deepEqual([...seen[0]!.changedSections], ['x_test_layer']);
    assert.equal(seen[0]!.previous.maxPayload, 1024 * 1024);
    assert.equal(seen[0]!.next.maxPayload, 2048);

    refuse = true;
    applied.length = 0;
    assert.throws(() => server.applyReload({ maxPayload: 4096 }), {
      message: 'authorization: users must not be empty',
    });
    assert.deepEqual(applied, []);
    assert.equal(server.options.maxPayload, 2048);
    assert.equal(log.grep('Reloaded server configuration').length, 1);
  } finally {
    await server.close();
  }
});

test('a hook can claim an option the core does not reload', async () => {
  const { server } = await startLogged({});
  try {
    // Without a claim, max_pending is refused (as the reference)...
    assert.throws(() => server.applyReload({ maxPending: 1 << 25 }), ReloadError);
    // An option of another layer that nobody reloads: named, its value not printed.
    const secret = { xLayerPassword: 's3cret' } as Partial<ServerOptions>;
    assert.throws(() => server.applyReload(secret), {
      message: 'config reload not supported for xLayerPassword',
    });
    // ...with one, the layer that claims it takes it.
    let got = 0;
    server.reloadHooks.push({
      name: 'pending (test)',
      options: ['maxPending'],
      prepare: (ctx) => () => {
        got = ctx.next.maxPending;
      },
    });
    server.applyReload({ maxPending: 1 << 25 });
    assert.equal(got, 1 << 25);
    assert.equal(server.options.maxPending, 1 << 25);
  } finally {
    await server.close();
  }
});

test('a random port in the new config means the bound port, as the reference', async () => {
  const { server } = await startLogged({ port: -1 });
  try {
    assert.deepEqual(server.reloadConfig({ host: '127.0.0.1', port: -1 }, null), []);
    assert.deepEqual(server.reloadConfig({ host: '127.0.0.1', port: 0 }, null), []);
  } finally {
    await server.close();
  }
});

test('goDuration prints durations as Go does', () => {
  assert.equal(goDuration(120_000), '2m0s');
  assert.equal(goDuration(40_000), '40s');
  assert.equal(goDuration(1500), '1.5s');
  assert.equal(goDuration(500), '500ms');
  assert.equal(goDuration(3_600_000), '1h0m0s');
  assert.equal(goDuration(0), '0s');
  assert.equal(goDuration(0.5), '500µs');
});

test('a changed config section that no layer reloads is refused; an unchanged one is fine', async () => {
  const { server } = await startLogged({});
  try {
    registerConfigKeys(['x_fixed_layer']);
    const load = (text: string) => applyConfig(parseConfigText(text, 'x.conf'), 'x.conf');
    rememberConfig(server, load('x_fixed_layer { size: 1 }\n'));
    // Same content, other positions and spelling: not a change.
    assert.deepEqual(
      server.reloadConfig({ host: '127.0.0.1', port: 0 }, load('\n\nX_FIXED_LAYER: { size: 1 }\n')),
      [],
    );
    assert.throws(
      () =>
        server.reloadConfig({ host: '127.0.0.1', port: 0 }, load('x_fixed_layer { size: 2 }\n')),
      { message: 'config reload not supported for x_fixed_layer' },
    );
    assert.throws(() => server.reloadConfig({ host: '127.0.0.1', port: 0 }, load('')), {
      message: 'config reload not supported for x_fixed_layer',
    });
  } finally {
    await server.close();
  }
});
