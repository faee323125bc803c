// Cluster settings from the config file and the command line, with the reference's
// names, and two bin/wirebus processes joined by flags alone.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfigText } from '../../src/config/conf.js';
import { parseCommandLine, UsageError } from '../../src/config/flags.js';
import { applyConfig } from '../../src/config/load.js';
import { connect } from 'nats';
import { resolveClusterSettings } from '../../src/cluster/config.js';
import { freePort, startWirebus } from '../helpers/process.js';
import { waitFor } from './helpers.js';

function settings(conf: string, argv: string[] = []): ReturnType<typeof resolveClusterSettings> {
  const config = conf === '' ? null : applyConfig(parseConfigText(conf, 'test.conf'), 'test.conf');
  return resolveClusterSettings(parseCommandLine(argv), config);
}

describe('cluster settings', () => {
  it('reads the cluster block', () => {
    const s = settings(`
      cluster {
        name: c1
        listen: 127.0.0.1:6333
        authorization { user: ruser, password: rpass, timeout: 3 }
        routes: [ nats-route://10.0.0.2:6222, nats-route://10.0.0.3:6222, nats-route://10.0.0.2:6222 ]
        advertise: "10.0.0.1:6333"
        no_advertise: true
        connect_retries: 5
        permissions { import: ["a.>"], export: { allow: ["b.>"], deny: ["b.secret"] } }
      }`);
    assert.equal(s.enabled, true);
    assert.deepEqual(s.options, {
      name: 'c1',
      host: '127.0.0.1',
      port: 6333,
      user: 'ruser',
      password: 'rpass',
      authTimeout: 3,
      routes: ['nats-route://10.0.0.2:6222', 'nats-route://10.0.0.3:6222'],
      advertise: '10.0.0.1:6333',
      noAdvertise: true,
      connectRetries: 5,
      permissions: {
        import: { allow: ['a.>'], deny: null },
        export: { allow: ['b.>'], deny: ['b.secret'] },
      },
    });
    assert.match(s.warnings[0] ?? '', /Duplicate route entry detected/);
  });

  it('takes port and host keys, and is off without a port', () => {
    assert.deepEqual(settings('cluster { host: 0.0.0.0, port: -1 }').options, {
      host: '0.0.0.0',
      port: -1,
    });
    const off = settings('cluster { name: x, routes: [nats-route://h:1] }');
    assert.equal(off.enabled, false);
    assert.match(off.warnings[0] ?? '', /no cluster port/);
  });

  it('refuses what the reference refuses', () => {
    for (const [conf, text] of [
      ['cluster { bogus: 1, port: 1 }', 'unknown field "bogus"'],
      ['cluster { authorization { token: t }, port: 1 }', 'does not support tokens'],
      [
        'cluster { authorization { users: [ {user: a, password: b} ] }, port: 1 }',
        'does not allow multiple users',
      ],
      ['cluster: 5', 'Expected map to define cluster'],
      ['cluster { routes: "x", port: 1 }', 'expected an array'],
    ] as const) {
      assert.throws(
        () => settings(conf),
        (err: Error) => err instanceof ConfigError && err.message.includes(text),
        conf,
      );
    }
  });

  it('reads the flags, which win over the file', () => {
    const s = settings('cluster { name: file, listen: 127.0.0.1:7000, routes: [nats://x:1] }', [
      '--cluster',
      'nats://u:p@127.0.0.1:-1',
      '--routes',
      'nats-route://a:1, nats-route://b:2',
      '--cluster_name',
      'flag',
      '--cluster_advertise',
      'pub.example:7000',
      '--no_advertise',
      '--connect_retries',
      '3',
    ]);
    assert.equal(s.enabled, true);
    assert.deepEqual(s.options, {
      name: 'flag',
      host: '127.0.0.1',
      port: -1,
      user: 'u',
      password: 'p',
      routes: ['nats-route://a:1', 'nats-route://b:2'],
      advertise: 'pub.example:7000',
      noAdvertise: true,
      connectRetries: 3,
    });
    assert.equal(settings('', ['--cluster_listen', 'nats://0.0.0.0:6222']).options.port, 6222);
  });

  it('refuses bad flags', () => {
    assert.throws(() => settings('', ['--cluster', 'nats://u@127.0.0.1:6222']), UsageError);
    assert.throws(() => settings('', ['--cluster', 'nats://127.0.0.1']), UsageError);
    assert.throws(() => settings('', ['--connect_retries', 'x']), UsageError);
  });
});

describe('bin/wirebus in a cluster', () => {
  it('rejoins a process killed with SIGKILL and started again', async () => {
    const [p1, p2, c1, c2] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const args = (c: number, other: number): string[] => [
      '--cluster',
      `nats://127.0.0.1:${c}`,
      '--cluster_name',
      'kill',
      '--routes',
      `nats-route://127.0.0.1:${other}`,
    ];
    const a = await startWirebus(p1, args(c1, c2));
    let b = await startWirebus(p2, args(c2, c1));
    try {
      const routes = (): number => a.log().split('Route connection created').length - 1;
      await waitFor('the route', () => routes() >= 1, 8000);
      const before = routes();
      b.child.kill('SIGKILL');
      await waitFor('the route gone', () => a.log().includes('Router connection closed'));
      b = await startWirebus(p2, args(c2, c1));
      await waitFor('the route again', () => routes() > before, 8000);
      const na = await connect({ servers: a.url });
      const nb = await connect({ servers: b.url });
      const got: string[] = [];
      nb.subscribe('after.kill', { callback: (_e, m) => got.push(m.string()) });
      await nb.flush();
      await waitFor(
        'delivery through the new route',
        () => {
          na.publish('after.kill', 'x');
          return got.length > 0;
        },
        5000,
      );
      await Promise.all([na.close(), nb.close()]);
    } finally {
      await b.stop();
      await a.stop();
    }
  });

  it('joins two processes given --cluster and --routes', async () => {
    const [p1, p2, c1, c2] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const a = await startWirebus(p1, [
      '--cluster',
      `nats://127.0.0.1:${c1}`,
      '--cluster_name',
      'cli',
    ]);
    try {
      const b = await startWirebus(p2, [
        '--cluster',
        `nats://127.0.0.1:${c2}`,
        '--cluster_name',
        'cli',
        '--routes',
        `nats-route://127.0.0.1:${c1}`,
      ]);
      try {
        await waitFor('the route', () => a.log().includes('Route connection created'));
        assert.match(a.log(), /Cluster name is cli/);
        assert.match(a.log(), new RegExp(`Listening for route connections on 127.0.0.1:${c1}`));
        assert.match(b.log(), /rid:\d+ - Route connection created/);
      } finally {
        await b.stop();
      }
      await waitFor('the close', () => a.log().includes('Router connection closed'));
    } finally {
      await a.stop();
    }
  });
});
