// The listener and the smaller endpoints: /healthz before and after the client
// listener is up, /routez, /accountz, /leafz, /gatewayz, /jsz, the index page, 404s,
// JSONP, the CORS header, http_base_path, /metrics, and extension by register().

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Server } from '../../src/index.js';
import { createMonitor } from '../../src/monitor/index.js';
import {
  fixture,
  get,
  getJson,
  populate,
  recordedAnswers,
  shapeDiff,
  withMonitor,
} from './helpers.js';

/**
 * Fields of the reference's answers that wirebus deliberately lacks: it runs no
 * system services in its system account, hence none of the service imports the
 * reference adds to $G for them.
 */
const ABSENT = ['account_detail.imports'];

describe('monitoring listener', () => {
  it("answers /routez, /healthz, /accountz, /leafz, /gatewayz, /jsz in the reference's shapes", async () => {
    await withMonitor({}, async (s) => {
      const pop = await populate(s.port);
      try {
        const cases: [string, string][] = [
          ['routez', '/routez'],
          ['healthz', '/healthz'],
          ['accountz', '/accountz'],
          ['accountz-detail', '/accountz?acc=$G'],
          ['leafz', '/leafz'],
          ['gatewayz', '/gatewayz'],
          ['jsz', '/jsz'],
        ];
        for (const [name, path] of cases) {
          const z = await getJson(s, path);
          assert.deepEqual(shapeDiff(fixture(name), z, ABSENT), [], path);
        }
        assert.deepEqual((await getJson(s, '/accountz')).accounts, ['$G', '$SYS']);
        const detail = (await getJson(s, '/accountz?acc=$G')).account_detail as Record<
          string,
          unknown
        >;
        assert.equal(detail.client_connections, 2);
        assert.equal(detail.subscriptions, 4);
        // /healthz is compact JSON, as the reference writes it.
        assert.equal((await get(s, '/healthz')).text, '{"status":"ok"}');
      } finally {
        pop.close();
      }
    });
  });

  it('reports /healthz 503 until the client listener accepts connections', async () => {
    const server = new Server({ host: '127.0.0.1', port: 0, httpPort: -1, quiet: true });
    const monitor = createMonitor(server);
    await monitor.start();
    try {
      const before = await get(monitor.port, '/healthz');
      assert.equal(before.status, 503);
      assert.deepEqual(JSON.parse(before.text), {
        status: 'error',
        error: 'failed to be ready for connections after 1ms: server',
      });
      await server.start();
      const after = await get(monitor.port, '/healthz');
      assert.equal(after.status, 200);
      assert.deepEqual(JSON.parse(after.text), { status: 'ok' });
    } finally {
      await monitor.close();
      await server.close();
    }
  });

  it('opens with the server and closes with it', async () => {
    let port = 0;
    await withMonitor({}, async (s) => {
      port = s.httpPort;
      assert.ok(port > 0);
      assert.equal(s.monitor?.port, port);
      assert.equal((await get(s, '/healthz')).status, 200, 'ready when startServer resolves');
    });
    await assert.rejects(fetch(`http://127.0.0.1:${port}/varz`));
    await withMonitor({ httpPort: 0 }, (s) => {
      assert.equal(s.httpPort, 0);
      assert.equal(s.monitor, null);
      return Promise.resolve();
    });
  });

  it('sends JSON with the CORS header, JSONP with a callback, 404 as the reference', async () => {
    const recorded = recordedAnswers();
    await withMonitor({}, async (s) => {
      const plain = await get(s, '/varz');
      assert.equal(plain.contentType, 'application/json');
      // As the reference from 2.9.22 on; 2.9.10 sends no CORS header.
      assert.equal(plain.headers.get('access-control-allow-origin'), '*');
      assert.ok(plain.text.startsWith('{\n  "server_id": '), '2-space indent');

      const jsonp = await get(s, '/varz?callback=cb');
      assert.equal(jsonp.contentType, recorded['/varz?callback=cb']!.contentType);
      assert.match(jsonp.text, /^cb\(\{\n[\s\S]*\}\)$/);
      JSON.parse(jsonp.text.slice(3, -1));
      assert.equal((await get(s, '/healthz?callback=x.y')).text, 'x.y({"status":"ok"})');
      // Not a JavaScript name: refused rather than echoed into a script.
      const evil = await get(s, '/varz?callback=alert(1)//');
      assert.equal(evil.status, 400);

      for (const path of ['/nope', '/varz/']) {
        const a = await get(s, path);
        assert.equal(a.status, 404, path);
        assert.equal(a.contentType, recorded[path]!.contentType);
        assert.equal(a.text, recorded[path]!.body);
      }
      const bad = await get(s, '/%zz');
      assert.equal(bad.status, 400);

      for (const path of ['/healthz?js-enabled-only=x', '/routez?subs=x', '/accountz?acc=nope']) {
        const a = await get(s, path);
        assert.equal(a.status, 400, path);
        assert.deepEqual(JSON.parse(a.text), { error: recorded[path]!.body }, path);
      }
    });
  });

  it('serves an index page linking the endpoints', async () => {
    await withMonitor({}, async (s) => {
      const index = await get(s, '/');
      assert.equal(index.status, 200);
      assert.equal(index.contentType, recordedAnswers()['/']!.contentType);
      for (const p of ['varz', 'connz', 'subsz', 'routez', 'healthz', 'accountz', 'metrics']) {
        assert.ok(index.text.includes(`href="./${p}"`), p);
      }
    });
  });

  it('serves every path below http_base_path', async () => {
    await withMonitor({ httpBasePath: 'nats/' }, async (s) => {
      assert.equal((await get(s, '/nats/varz')).status, 200);
      assert.equal((await get(s, '/varz')).status, 404);
      const index = await get(s, '/nats');
      assert.equal(index.status, 200);
      assert.ok(index.text.includes('href="./nats/connz"'));
      const v = await getJson(s, '/nats/varz');
      assert.equal(v.http_base_path, 'nats/');
      assert.deepEqual(v.http_req_stats, { '/': 1, '/varz': 2 });
    });
  });

  it('lets other layers register endpoints on the same listener', async () => {
    await withMonitor({}, async (s) => {
      s.monitor!.register('/streaming/serverz', (req) => ({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ cluster_id: req.query.get('id') ?? '' }),
      }));
      s.monitor!.register('/broken', () => {
        throw new Error('boom');
      });
      assert.deepEqual(await getJson(s, '/streaming/serverz?id=test'), { cluster_id: 'test' });
      assert.equal((await get(s, '/broken')).status, 500);
      assert.equal((await get(s, '/varz')).status, 200, 'still serving');
      assert.ok((await get(s, '/')).text.includes('href="./streaming/serverz"'));
    });
  });

  it('exposes the /varz counters as Prometheus text', async () => {
    await withMonitor({}, async (s) => {
      const pop = await populate(s.port);
      try {
        const m = await get(s, '/metrics');
        assert.equal(m.status, 200);
        assert.match(m.contentType, /^text\/plain; version=0\.0\.4/);
        const values = new Map<string, number>();
        const types = new Map<string, string>();
        for (const line of m.text.split('\n')) {
          if (line === '') continue;
          const t = /^# TYPE (\w+) (counter|gauge)$/.exec(line);
          if (t !== null) {
            types.set(t[1]!, t[2]!);
            continue;
          }
          if (line.startsWith('# HELP ')) continue;
          const sample = /^(\w+)\{server_id="([A-Z0-9]+)"\} (-?[0-9.e+]+)$/.exec(line);
          assert.ok(sample !== null, `not a sample line: ${line}`);
          assert.equal(sample[2], s.server.id);
          values.set(sample[1]!, Number(sample[3]));
        }
        assert.equal(values.get('gnatsd_varz_connections'), 2);
        assert.equal(values.get('gnatsd_varz_total_connections'), 3);
        assert.equal(values.get('gnatsd_varz_subscriptions'), 4);
        assert.equal(values.get('gnatsd_varz_in_msgs'), 2);
        assert.equal(values.get('gnatsd_varz_out_msgs'), 2);
        assert.equal(values.get('gnatsd_varz_in_bytes'), 10);
        assert.equal(values.get('gnatsd_varz_out_bytes'), 10);
        assert.equal(values.get('gnatsd_varz_slow_consumers'), 0);
        assert.equal(types.get('gnatsd_varz_in_msgs'), 'counter');
        assert.equal(types.get('gnatsd_varz_connections'), 'gauge');
        for (const name of values.keys()) assert.ok(types.has(name), `${name} has a TYPE`);
      } finally {
        pop.close();
      }
    });
  });
});
