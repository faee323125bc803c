// /varz against the reference's recorded answer (fixtures/varz.json), and its numbers.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../auth/helpers.js';
import { ProcessUsage } from '../../src/monitor/varz.js';
import { fixture, getJson, type JsonObject, populate, shapeDiff, withMonitor } from './helpers.js';

/** Fields of the reference's /varz that wirebus deliberately lacks: none now. */
const VARZ_ABSENT: string[] = [];

describe('/varz', () => {
  it("has the reference's field names, nesting and value types", async () => {
    await withMonitor({}, async (s) => {
      const pop = await populate(s.port);
      try {
        const v = await getJson(s, '/varz');
        assert.deepEqual(shapeDiff(fixture('varz'), v, VARZ_ABSENT), []);
        // Field order as the reference writes it, too.
        const refKeys = Object.keys(fixture('varz') as object).filter(
          (k) => !VARZ_ABSENT.includes(k),
        );
        assert.deepEqual(Object.keys(v), refKeys);
      } finally {
        pop.close();
      }
    });
  });

  it('reports counters, settings in nanoseconds and process figures', async () => {
    const options = { pingInterval: 30_000, writeDeadline: 2_500, maxSubscriptions: 7 };
    await withMonitor(options, async (s) => {
      const pop = await populate(s.port);
      try {
        const v = await getJson(s, '/varz');
        assert.equal(v.server_id, s.server.id);
        assert.equal(v.port, s.port);
        assert.equal(v.http_port, s.httpPort);
        assert.equal(v.http_host, '127.0.0.1');
        assert.equal(v.ping_interval, 30_000_000_000);
        assert.equal(v.write_deadline, 2_500_000_000);
        assert.equal(v.max_subscriptions, 7);
        assert.equal(v.auth_timeout, 1);
        assert.equal(v.connections, 2);
        assert.equal(v.total_connections, 3);
        assert.equal(v.in_msgs, 2);
        assert.equal(v.in_bytes, 10);
        assert.equal(v.out_msgs, 2);
        assert.equal(v.out_bytes, 10);
        assert.equal(v.subscriptions, 4);
        assert.equal(v.slow_consumers, 0);
        assert.ok(typeof v.mem === 'number' && v.mem > 1_000_000, 'mem is the RSS in bytes');
        assert.ok(typeof v.cores === 'number' && v.cores >= 1);
        assert.equal(v.gomaxprocs, v.cores);
        assert.ok(typeof v.cpu === 'number' && v.cpu >= 0);
        assert.match(v.uptime as string, /^(\d+y)?(\d+d)?(\d+h)?(\d+m)?\d+s$/);
        assert.ok(Date.parse(v.now as string) >= Date.parse(v.start as string));
      } finally {
        pop.close();
      }
    });
  });

  it('names the system account: $SYS, the configured one, or none', async () => {
    // As the reference: $SYS by default (and listed in /accountz), system_account
    // names another, no_system_account removes it.
    await withMonitor({}, async (s) => {
      assert.equal((await getJson(s, '/varz')).system_account, '$SYS');
      const z = await getJson(s, '/accountz');
      assert.equal(z.system_account, '$SYS');
      assert.deepEqual(z.accounts, ['$G', '$SYS']);
      const detail = (await getJson(s, '/accountz?acc=$SYS')).account_detail as JsonObject;
      assert.equal(detail.account_name, '$SYS');
      assert.equal(detail.client_connections, 0);
    });
    await withMonitor({ systemAccount: 'OPS' }, async (s) => {
      assert.equal((await getJson(s, '/varz')).system_account, 'OPS');
    });
    await withMonitor({ noSystemAccount: true }, async (s) => {
      assert.equal('system_account' in (await getJson(s, '/varz')), false);
      const z = await getJson(s, '/accountz');
      assert.equal('system_account' in z, false);
      assert.deepEqual(z.accounts, ['$G']);
    });
    // A configured system account that is no account stops the start, as the reference.
    const conf = join(tempDir(), 'sys.conf');
    writeFileSync(conf, 'listen: 127.0.0.1:-1\nsystem_account: NOPE\n');
    const bin = fileURLToPath(new URL('../../../bin/wirebus', import.meta.url));
    const r = spawnSync(process.execPath, [bin, '-c', conf], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'wirebus: error resolving system account: account missing\n');
  });

  it('counts requests per endpoint in http_req_stats', async () => {
    await withMonitor({}, async (s) => {
      await getJson(s, '/connz');
      await getJson(s, '/connz');
      await getJson(s, '/varz');
      const v = await getJson(s, '/varz');
      assert.deepEqual(v.http_req_stats, { '/connz': 2, '/varz': 2 });
    });
  });

  it('measures CPU use over windows of a second', () => {
    const usage = new ProcessUsage();
    assert.equal(usage.cpu(), 0, 'no full window yet');
    const until = Date.now() + 1100;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    assert.ok(x > 0);
    const cpu = usage.cpu();
    assert.ok(cpu > 0, `busy loop gives CPU use, got ${cpu}`);
    assert.equal(Math.round(cpu * 10), cpu * 10, 'one decimal');
  });
});
