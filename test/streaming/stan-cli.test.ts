// bin/wirebus with streaming: the reference's flags and config section, -st FILE
// needing --dir, and the streaming layer as a TCP client of another server (-ns).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseCommandLine } from '../../src/config/flags.js';
import { applyConfig } from '../../src/config/load.js';
import { parseConfigText } from '../../src/config/conf.js';
import { startServer } from '../../src/index.js';
import { resolveStreamingSettings } from '../../src/streaming/config.js';
import { StreamingServer } from '../../src/streaming/server.js';
import { freePort, startWirebus } from '../helpers/process.js';
import { repoRoot } from './paths.js';
import { closeStan, connect, eventually, publish, subscribe } from './stan.js';

describe('streaming settings', () => {
  it('flags: the reference names and short forms', () => {
    const cl = parseCommandLine([
      '-cid',
      'c1',
      '-mm',
      '5',
      '-mb',
      '1GB',
      '-ma',
      '1h',
      '-msu',
      '7',
      '-mc',
      '3',
      '-mi',
      '10m',
      '-hbi',
      '2s',
      '-hbt',
      '500ms',
      '-hbf',
      '4',
      '-SD',
      '--replace_durable',
    ]);
    const s = resolveStreamingSettings(cl, null);
    assert.equal(s.enabled, true);
    assert.deepEqual(s.options.limits, {
      maxMsgs: 5,
      maxBytes: 1024 ** 3,
      maxAge: 3_600_000,
      maxSubscriptions: 7,
      maxChannels: 3,
      maxInactivity: 600_000,
    });
    assert.equal(s.options.clusterId, 'c1');
    assert.equal(s.options.hbInterval, 2000);
    assert.equal(s.options.hbTimeout, 500);
    assert.equal(s.options.hbFailCount, 4);
    assert.equal(s.options.debug, true);
    assert.equal(s.options.replaceDurable, true);
    assert.equal(resolveStreamingSettings(parseCommandLine(['-p', '4222']), null).enabled, false);
    assert.equal(resolveStreamingSettings(parseCommandLine(['--streaming']), null).enabled, true);
  });

  it('config file: streaming section with aliases, 0 per channel means unlimited', () => {
    const tree = parseConfigText(
      `port: 4222
       streaming {
         cluster_id: cfg
         store: memory
         hb_interval: "3s"
         hb_fail_count: 2
         limits { mm: 70, max_bytes: 10MB, max_age: "1h", channels { "foo.*": { max_msgs: 0 }, "bar": { max_subs: 4 } } }
         file_options { buffer_size: 2MB }
       }`,
      'test.conf',
    );
    const config = applyConfig(tree, 'test.conf');
    const s = resolveStreamingSettings(parseCommandLine(['-mm', '80']), config);
    assert.equal(s.enabled, true);
    assert.equal(s.options.clusterId, 'cfg');
    assert.equal(s.options.storeType, 'MEMORY');
    assert.equal(s.options.hbInterval, 3000);
    // The flag wins over the file.
    const limits = s.options.limits!;
    assert.equal(limits.maxMsgs, 80);
    assert.equal(limits.maxBytes, 10 * 1024 * 1024);
    assert.deepEqual(limits.perChannel, {
      'foo.*': { maxMsgs: -1 },
      bar: { maxSubscriptions: 4 },
    });
    assert.deepEqual(s.options.fileOptions, { bufferSize: 2 * 1024 * 1024 });
    assert.equal(s.warnings.length, 0);
    assert.throws(
      () =>
        resolveStreamingSettings(
          parseCommandLine([]),
          applyConfig(parseConfigText('streaming { nope: 1 }', 'x.conf'), 'x.conf'),
        ),
      /x\.conf:1:13: unknown field "nope" in streaming/,
    );
  });
});

describe('bin/wirebus with streaming', () => {
  it('runs streaming with -cid and the limits flags; monitoring shows them', async () => {
    const port = await freePort();
    const mport = await freePort();
    const proc = await startWirebus(port, ['-m', String(mport), '-cid', 'cli-cluster', '-mm', '3']);
    try {
      await eventually(() => proc.log().includes('Streaming Server is ready'), 'streaming ready');
      const sc = await connect(proc.url, 'cli-cluster', 'c');
      for (let i = 0; i < 5; i++) await publish(sc, 'foo', `m${i}`);
      const r = await subscribe(sc, 'foo', sc.subscriptionOptions().setDeliverAllAvailable());
      await r.waitFor(3);
      assert.deepEqual(r.seqs(), [3, 4, 5]);
      const storez = (await (await fetch(`http://127.0.0.1:${mport}/streaming/storez`)).json()) as {
        cluster_id: string;
        limits: { max_msgs: number };
      };
      assert.equal(storez.cluster_id, 'cli-cluster');
      assert.equal(storez.limits.max_msgs, 3);
      await closeStan(sc);
      assert.match(proc.log(), /STAN: Starting nats-streaming-server\[cli-cluster\]/);
    } finally {
      await proc.stop();
    }
  });

  it('without streaming flags the core runs alone', async () => {
    const port = await freePort();
    const proc = await startWirebus(port, []);
    try {
      assert.doesNotMatch(proc.log(), /STAN/);
    } finally {
      await proc.stop();
    }
  });

  it('-st FILE without --dir fails with a clear error; bad streaming flags exit 2', () => {
    const run = (args: string[]): { status: number | null; stderr: string } => {
      const r = spawnSync(process.execPath, ['bin/wirebus', '-p', '0', ...args], {
        cwd: repoRoot,
        encoding: 'utf8',
        timeout: 10_000,
      });
      return { status: r.status, stderr: r.stderr };
    };
    const file = run(['-st', 'FILE']);
    assert.equal(file.status, 1);
    assert.match(file.stderr, /--dir is required for the FILE store/);
    assert.equal(run(['-st', 'NOPE']).status, 2);
    assert.equal(run(['-ma', 'forever']).status, 2);
    const dir = mkdtempSync(join(tmpdir(), 'wirebus-stan-'));
    const conf = join(dir, 'bad.conf');
    writeFileSync(conf, 'streaming {\n  store_limits { max_msgs: "many" }\n}\n');
    const bad = run(['-c', conf]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /bad\.conf:2:/);
  });
});

describe('streaming over TCP (-ns)', () => {
  it('a streaming server on another NATS server serves clients there', async () => {
    const nats = await startServer({ host: '127.0.0.1', port: 0 });
    const stan = new StreamingServer(null, { natsServer: nats.url, clusterId: 'remote' });
    try {
      await stan.start();
      const sc = await connect(nats.url, 'remote', 'tcp-client');
      const r = await subscribe(sc, 'foo', sc.subscriptionOptions().setManualAckMode(true));
      await publish(sc, 'foo', 'over tcp');
      await r.waitFor(1);
      r.msgs[0]!.ack();
      await eventually(() => stan.channels.get('foo')!.plain[0]!.pending.size === 0, 'ack');
      await closeStan(sc);
      assert.equal(stan.clients.size, 0);
    } finally {
      await stan.close();
      await nats.close();
    }
  });
});

describe('bin/wirebus -ns', () => {
  it('opens no client listener of its own and serves streaming on the external server', async () => {
    const nats = await startServer({ host: '127.0.0.1', port: 0 });
    const unused = await freePort();
    const child = spawn(
      process.execPath,
      ['bin/wirebus', '-a', '127.0.0.1', '-p', String(unused), '-ns', nats.url, '-cid', 'ext'],
      { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (t: string) => (log += t));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await eventually(() => log.includes('Streaming Server is ready'), 'streaming ready');
      assert.match(log, /No client listener/);
      // Nothing listens on the port given with -p: the reference embeds no server with -ns.
      const refused = await new Promise<boolean>((resolve) => {
        const s = createConnection({ host: '127.0.0.1', port: unused });
        s.once('connect', () => {
          s.destroy();
          resolve(false);
        });
        s.once('error', () => resolve(true));
      });
      assert.equal(refused, true);
      const sc = await connect(nats.url, 'ext', 'via-external');
      const r = await subscribe(sc, 'bar', sc.subscriptionOptions());
      await publish(sc, 'bar', 'hello');
      await r.waitFor(1);
      await closeStan(sc);
    } finally {
      child.kill('SIGTERM');
      await exited;
      await nats.close();
    }
  });
});
