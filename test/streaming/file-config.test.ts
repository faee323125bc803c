// The FILE store from the command line and the config file: the reference's --file_*
// flags and file_options keys, and bin/wirebus -st FILE --dir across a restart
// (spec §9 scenario 41, captures F to H: storez type FILE, state recovered).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigText } from '../../src/config/conf.js';
import { parseCommandLine } from '../../src/config/flags.js';
import { applyConfig } from '../../src/config/load.js';
import { resolveStreamingSettings } from '../../src/streaming/config.js';
import { freePort, startWirebus, type WirebusProcess } from '../helpers/process.js';
import { cleanupDirs, tempDir } from './file-fixtures.js';
import { closeStan, connect, eventually, publish, subscribe } from './stan.js';

after(cleanupDirs);

describe('FILE store settings', () => {
  it('--file_* flags', () => {
    const cl = parseCommandLine([
      '-st',
      'FILE',
      '--dir',
      '/data',
      '--file_sync=false',
      '--file_auto_sync',
      '5s',
      '--file_slice_max_msgs',
      '1000',
      '--file_slice_max_bytes',
      '16MB',
      '--file_slice_max_age',
      '1h',
      '--file_fds_limit',
      '64',
      '--file_truncate_bad_eof',
      '--file_compact_interval',
      '60',
      '--file_compact_min_size',
      '2MB',
      '--file_read_buffer_size',
      '1MB',
      '--file_crc_poly',
      '2197175160',
      '--file_slice_archive_script',
      '/opt/archive.sh',
    ]);
    const s = resolveStreamingSettings(cl, null);
    assert.equal(s.enabled, true);
    assert.equal(s.options.storeType, 'FILE');
    assert.equal(s.options.dir, '/data');
    assert.deepEqual(s.options.fileOptions, {
      sync: false,
      autoSync: 5000,
      sliceMaxMsgs: 1000,
      sliceMaxBytes: 16 * 1024 * 1024,
      sliceMaxAge: 3_600_000,
      fdsLimit: 64,
      truncateBadEof: true,
      compactInterval: 60_000,
      compactMinSize: 2 * 1024 * 1024,
      readBufferSize: 1024 * 1024,
      crcPoly: 0x82f63b78,
      sliceArchiveScript: '/opt/archive.sh',
    });
    assert.equal(
      resolveStreamingSettings(parseCommandLine(['--file_sync=false']), null).enabled,
      true,
    );
    assert.throws(
      () => resolveStreamingSettings(parseCommandLine(['--file_slice_max_msgs', 'x']), null),
      /invalid value "x" for flag -file_slice_max_msgs/,
    );
  });

  it('file_options in the config file, with aliases; flags win field by field', () => {
    const tree = parseConfigText(
      `streaming {
         store: file
         dir: "/data"
         file_options {
           sync_on_flush: false
           slice_max_msgs: 100
           slice_max_bytes: 10MB
           slice_max_age: "2h"
           auto_sync: "2s"
           file_descriptors_limit: 50
           truncate_bad_eof: true
           compact_frag: 40
           crc_poly: 2197175160
           slice_archive_script: "/usr/local/bin/archive.sh"
         }
       }`,
      'test.conf',
    );
    const s = resolveStreamingSettings(
      parseCommandLine(['--file_slice_max_msgs', '7']),
      applyConfig(tree, 'test.conf'),
    );
    assert.deepEqual(s.options.fileOptions, {
      sync: false,
      sliceMaxMsgs: 7,
      sliceMaxBytes: 10 * 1024 * 1024,
      sliceMaxAge: 7_200_000,
      autoSync: 2000,
      fdsLimit: 50,
      truncateBadEof: true,
      compactFrag: 40,
      crcPoly: 0x82f63b78,
      sliceArchiveScript: '/usr/local/bin/archive.sh',
    });
    assert.deepEqual(s.warnings, []);
    assert.throws(
      () =>
        resolveStreamingSettings(
          parseCommandLine([]),
          applyConfig(parseConfigText('streaming { file { nope: 1 } }', 'x.conf'), 'x.conf'),
        ),
      /unknown field "nope" in file_options/,
    );
  });
});

interface Storez {
  type: string;
  limits: { max_msgs: number; max_channels: number };
  total_msgs: number;
  total_bytes: number;
}

interface Channelz {
  msgs: number;
  bytes: number;
  first_seq: number;
  last_seq: number;
  subscriptions: {
    durable_name?: string;
    is_offline: boolean;
    last_sent: number;
    pending_count: number;
  }[];
}

async function get<T>(mport: number, path: string): Promise<T> {
  return (await (await fetch(`http://127.0.0.1:${mport}${path}`)).json()) as T;
}

describe('bin/wirebus -st FILE', () => {
  it('restarts with its channels, messages, clients and durables (sequences go on, unacked redelivered first)', async () => {
    const dir = await tempDir();
    const port = await freePort();
    const mport = await freePort();
    const args = ['-m', String(mport), '-st', 'FILE', '--dir', dir, '-mm', '500'];
    let proc: WirebusProcess = await startWirebus(port, args, 'Streaming Server is ready');
    try {
      const sc = await connect(proc.url, 'test-cluster', 'client1');
      for (let i = 0; i < 10; i++) await publish(sc, 'foo', `msg-${i}`);
      // A durable that acks all but the last two.
      const opts = sc
        .subscriptionOptions()
        .setDurableName('dur')
        .setManualAckMode(true)
        .setDeliverAllAvailable();
      const r = await subscribe(sc, 'foo', opts, undefined, (m) => {
        if (m.getSequence() <= 8) m.ack();
      });
      await r.waitFor(10);
      await eventually(async () => {
        const ch = await get<Channelz>(mport, '/streaming/channelsz?channel=foo&subs=1');
        return ch.subscriptions[0]?.pending_count === 2;
      }, 'acks of 1..8');
      const storez = await get<Storez>(mport, '/streaming/storez');
      assert.equal(storez.type, 'FILE');
      assert.equal(storez.limits.max_msgs, 500);
      // 10 × "msg-N" on foo: 24 bytes each + 40, as the reference (capture F).
      assert.deepEqual([storez.total_msgs, storez.total_bytes], [10, 640]);
      await closeStan(sc);
    } finally {
      await proc.stop();
    }

    proc = await startWirebus(port, args, 'Streaming Server is ready');
    try {
      const ch = await get<Channelz>(mport, '/streaming/channelsz?channel=foo&subs=1');
      assert.deepEqual([ch.msgs, ch.bytes, ch.first_seq, ch.last_seq], [10, 640, 1, 10]);
      assert.equal(ch.subscriptions[0]!.durable_name, 'dur');
      assert.equal(ch.subscriptions[0]!.is_offline, true);
      assert.equal(ch.subscriptions[0]!.last_sent, 10);
      assert.equal(ch.subscriptions[0]!.pending_count, 2);
      const storez = await get<Storez>(mport, '/streaming/storez');
      assert.equal(storez.type, 'FILE');

      const sc = await connect(proc.url, 'test-cluster', 'client1');
      await publish(sc, 'foo', 'msg-10');
      const opts = sc.subscriptionOptions().setDurableName('dur').setManualAckMode(true);
      const r = await subscribe(sc, 'foo', opts, undefined, (m) => {
        m.ack();
      });
      await r.waitFor(3);
      assert.deepEqual(r.seqs(), [9, 10, 11]);
      assert.deepEqual(
        r.msgs.map((m) => m.isRedelivered()),
        [true, true, false],
      );
      await closeStan(sc);
    } finally {
      await proc.stop();
    }
  });
});
