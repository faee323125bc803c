// The JetStream file store: the conformance suite (with restarts), then what only a
// file store has: torn and damaged records, files freed as limits remove messages,
// block rolling, recovery without the payloads in memory, many keys.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileStorage, type FileStorageOptions } from '../../../src/jetstream/storage/file.js';
import type { StreamStore, StreamStoreConfig } from '../../../src/jetstream/storage/types.js';
import { cleanupDirs, tempDir } from '../../streaming/file-fixtures.js';
import { storageConformance, streamConfig } from './conformance.js';

after(cleanupDirs);

const NS = 1e6;

storageConformance('file', {
  storage: 'file',
  survivesRestart: true,
  fresh: async () => {
    const dir = await tempDir();
    return () => {
      const storage = new FileStorage({ storeDir: dir, warn: () => undefined });
      return Promise.resolve({ provider: storage.account('$G'), close: () => storage.close() });
    };
  },
});

storageConformance('file, sync always, small blocks', {
  storage: 'file',
  survivesRestart: true,
  fresh: async () => {
    const dir = await tempDir();
    return () => {
      const storage = new FileStorage({
        storeDir: dir,
        syncInterval: 'always',
        blockSize: 512,
        warn: () => undefined,
      });
      return Promise.resolve({ provider: storage.account('ACC'), close: () => storage.close() });
    };
  },
});

interface Opened {
  storage: FileStorage;
  store: StreamStore;
  warnings: string[];
  msgsDir: string;
}

function open(
  dir: string,
  cfg: StreamStoreConfig,
  options: Partial<FileStorageOptions> = {},
): Opened {
  const warnings: string[] = [];
  const storage = new FileStorage({ storeDir: dir, ...options, warn: (w) => warnings.push(w) });
  const store = storage.account('$G').openStream(cfg, Buffer.from('{}'));
  return {
    storage,
    store,
    warnings,
    msgsDir: join(dir, 'jetstream', '$G', 'streams', cfg.name, 'msgs'),
  };
}

const files = (dir: string, ext: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith(ext))
    .sort();
const diskBytes = (dir: string): number =>
  readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);

function storeN(
  s: StreamStore,
  n: number,
  subject: (i: number) => string = () => 'foo',
  size = 64,
): void {
  const data = Buffer.alloc(size, 7);
  for (let i = 0; i < n; i++) s.storeMsg(subject(i), Buffer.alloc(0), data, Date.now() * NS);
}

describe('file store: damage and recovery', () => {
  it('a torn last record is cut; every earlier message is kept', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('TORN', 'file');
    let o = open(dir, cfg);
    storeN(o.store, 10);
    await o.storage.close();
    const blk = join(o.msgsDir, files(o.msgsDir, '.blk')[0]!);
    const size = statSync(blk).size;
    // Half a record at the end, as a crash in the middle of a write leaves it.
    const whole = readFileSync(blk);
    appendFileSync(blk, whole.subarray(whole.length - 70, whole.length - 30));
    o = open(dir, cfg);
    assert.equal(o.store.state().msgs, 10);
    assert.equal(o.store.state().lastSeq, 10);
    assert.equal(statSync(blk).size, size);
    assert.match(o.warnings.join('\n'), /torn record at offset \d+; 40 bytes cut/);
    assert.equal(
      o.store.storeMsg('foo', Buffer.alloc(0), Buffer.from('after'), Date.now() * NS),
      11,
    );
    await o.storage.close();
    o = open(dir, cfg);
    assert.equal(o.store.loadMsg(11)!.data.toString(), 'after');
    await o.storage.close();
  });

  it('a flipped byte loses that record only; later ones are kept', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('FLIP', 'file');
    let o = open(dir, cfg);
    storeN(o.store, 10, (i) => `s.${i}`);
    const m5 = o.store.loadMsg(5)!;
    await o.storage.close();
    const blk = join(o.msgsDir, files(o.msgsDir, '.blk')[0]!);
    const b = readFileSync(blk);
    const at = b.indexOf(Buffer.from('s.5'));
    b[at + 40] = b[at + 40]! ^ 0xff;
    writeFileSync(blk, b);
    o = open(dir, cfg);
    const st = o.store.state(true);
    assert.deepEqual([st.msgs, st.firstSeq, st.lastSeq], [9, 1, 10]);
    assert.deepEqual(st.deleted, [6]);
    assert.equal(o.store.loadMsg(5)!.data.toString(), m5.data.toString());
    assert.equal(o.store.loadMsg(7)!.subject, 's.6');
    assert.match(o.warnings.join('\n'), /checksum mismatch at offset \d+; \d+ bytes skipped/);
    await o.storage.close();
  });

  it('a damaged length field: the reader finds the next sound record', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('LEN', 'file');
    let o = open(dir, cfg);
    storeN(o.store, 6, (i) => `s.${i}`);
    await o.storage.close();
    const blk = join(o.msgsDir, files(o.msgsDir, '.blk')[0]!);
    const b = readFileSync(blk);
    const at = b.indexOf(Buffer.from('s.2')) - 22;
    b.writeUInt32LE(0x7ffffff0, at);
    writeFileSync(blk, b);
    o = open(dir, cfg);
    assert.deepEqual(o.store.state(true).deleted, [3]);
    assert.equal(o.store.state().msgs, 5);
    await o.storage.close();
  });

  it('a damaged consumer state file: the consumer starts over, the stream is intact', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('CS', 'file');
    let o = open(dir, cfg);
    storeN(o.store, 3);
    o.store.consumerStore('d').updateDelivered(1, 1, 1, 1);
    await o.storage.close();
    const dat = join(dir, 'jetstream', '$G', 'streams', 'CS', 'obs', 'd', 'o.dat');
    const b = readFileSync(dat);
    b[b.length - 3] = b[b.length - 3]! ^ 0x55;
    writeFileSync(dat, b);
    o = open(dir, cfg);
    assert.deepEqual(o.store.consumerStore('d').state().delivered, { consumer: 0, stream: 0 });
    assert.match(o.warnings.join('\n'), /checksum mismatch; the consumer starts without it/);
    assert.equal(o.store.state().msgs, 3);
    await o.storage.close();
  });
});

describe('file store: disk', () => {
  it('frees disk as max_msgs drops old messages: whole blocks are deleted', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('LIMIT', 'file', { maxMsgs: 100 });
    const o = open(dir, cfg, { blockSize: 4096 });
    storeN(o.store, 5000, () => 'foo', 100);
    await o.storage.io.flush();
    await o.storage.io.idle();
    const blocks = files(o.msgsDir, '.blk');
    // 100 messages of ~134 bytes fit in 4 blocks of 4 KB, plus the one being written.
    assert.ok(blocks.length <= 6, `${blocks.length} block files left`);
    assert.ok(diskBytes(o.msgsDir) < 6 * 4096 + 1024);
    await o.storage.close();
    const again = open(dir, cfg, { blockSize: 4096 });
    assert.deepEqual([again.store.state().msgs, again.store.state().firstSeq], [100, 4901]);
    await again.storage.close();
  });

  it('frees disk as per-subject limits remove messages: sparse blocks are rewritten', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('KVD', 'file', { maxMsgsPerSubject: 1 });
    const o = open(dir, cfg, { blockSize: 512 * 1024 });
    // 200 keys written over and over: each block ends up with few live records.
    for (let round = 0; round < 60; round++) storeN(o.store, 200, (i) => `$KV.b.k${i}`, 300);
    await o.storage.io.flush();
    await o.storage.io.idle();
    const live = o.store.state().bytes;
    const disk = diskBytes(o.msgsDir);
    assert.equal(o.store.state().msgs, 200);
    // 60 rounds wrote ~20 MB; what is left on disk is a small multiple of what is live.
    assert.ok(disk < live * 2 + 2 * 512 * 1024, `${disk} bytes on disk for ${live} live`);
    await o.storage.close();
    const again = open(dir, cfg, { blockSize: 512 * 1024 });
    assert.equal(again.store.state().msgs, 200);
    assert.equal(again.store.loadLastMsg('$KV.b.k42')!.seq, 59 * 200 + 43);
    await again.storage.close();
  });
});

describe('file store: disk freed by every kind of removal', () => {
  const settle = async (o: Opened): Promise<void> => {
    await o.storage.io.flush();
    await o.storage.io.idle();
  };

  it('max_bytes: whole blocks of the dropped messages are deleted', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('BYTES', 'file', { maxBytes: 20_000 });
    const o = open(dir, cfg, { blockSize: 4096 });
    storeN(o.store, 5000, () => 'foo', 100);
    await settle(o);
    assert.ok(o.store.state().bytes <= 20_000);
    const disk = diskBytes(o.msgsDir);
    // 500 KB written; what is left is the 20 KB limit and the blocks around its edges.
    assert.ok(disk < 20_000 + 3 * 4096 + 1024, `${disk} bytes on disk`);
    await o.storage.close();
  });

  it('max_age: expired messages take their blocks with them', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('AGED', 'file', { maxAgeNs: 200 * 1e6 });
    const o = open(dir, cfg, { blockSize: 4096 });
    const old = (Date.now() - 150) * NS;
    const data = Buffer.alloc(100, 1);
    for (let i = 0; i < 2000; i++) o.store.storeMsg('old', Buffer.alloc(0), data, old);
    o.store.storeMsg('new', Buffer.alloc(0), data, (Date.now() + 60_000) * NS);
    await settle(o);
    const before = diskBytes(o.msgsDir);
    const deadline = Date.now() + 10_000;
    while (o.store.state().msgs > 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(o.store.state().msgs, 1);
    await settle(o);
    const disk = diskBytes(o.msgsDir);
    assert.ok(before > 200_000 && disk < 2 * 4096, `${before} bytes before, ${disk} after`);
    await o.storage.close();
  });

  it('purge, purge by subject and compact: the files shrink or go', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('PURGED', 'file');
    // Blocks of 512 KB: smaller ones are not worth rewriting (COMPACT_MIN).
    const o = open(dir, cfg, { blockSize: 512 * 1024 });
    storeN(o.store, 30_000, (i) => (i % 3 === 0 ? 'keep' : 'drop'), 200);
    await settle(o);
    const full = diskBytes(o.msgsDir);
    // Two thirds of every block go (a block under half live is rewritten with the rest).
    assert.equal(o.store.purgeEx('drop', 0, 0), 20_000);
    await settle(o);
    const third = diskBytes(o.msgsDir);
    assert.ok(third < full * 0.4, `${third} of ${full} bytes after purging one subject`);
    // Everything before 20,001 goes: the blocks holding only those are deleted.
    o.store.compact(20_001);
    await settle(o);
    const tail = diskBytes(o.msgsDir);
    assert.ok(tail < third * 0.45, `${tail} of ${third} bytes after compacting to 20,001`);
    o.store.purge();
    await settle(o);
    assert.ok(diskBytes(o.msgsDir) < 1024, `${diskBytes(o.msgsDir)} bytes after a purge`);
    await o.storage.close();
    const again = open(dir, cfg, { blockSize: 512 * 1024 });
    assert.deepEqual([again.store.state().msgs, again.store.state().firstSeq], [0, 30_001]);
    await again.storage.close();
  });

  it('deleting messages one by one: emptied blocks go, sparse ones are rewritten', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('DELETED', 'file');
    const o = open(dir, cfg, { blockSize: 512 * 1024 });
    storeN(o.store, 30_000, () => 'foo', 200);
    await settle(o);
    const full = diskBytes(o.msgsDir);
    // Every message but one in ten, interior ones included.
    for (let seq = 1; seq <= 30_000; seq++) if (seq % 10 !== 0) o.store.removeMsg(seq);
    await settle(o);
    const left = diskBytes(o.msgsDir);
    assert.equal(o.store.state().msgs, 3000);
    assert.ok(left < full * 0.3, `${left} of ${full} bytes left`);
    await o.storage.close();
    const again = open(dir, cfg, { blockSize: 512 * 1024 });
    assert.deepEqual([again.store.state().msgs, again.store.loadMsg(4000)?.seq], [3000, 4000]);
    assert.equal(again.store.loadMsg(4001), undefined);
    await again.storage.close();
  });

  it('deleting the stream removes its directory', async () => {
    const dir = await tempDir();
    const o = open(dir, streamConfig('GONE', 'file'));
    storeN(o.store, 1000, () => 'foo', 100);
    await settle(o);
    await o.store.delete();
    assert.deepEqual(readdirSync(join(dir, 'jetstream', '$G', 'streams')), []);
    await o.storage.close();
  });
});

describe('file store: reads and erase', () => {
  it('keeps subjects as UTF-8: ASCII, non-ASCII, and past the short-subject length', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('UTF', 'file');
    const subjects = [
      'utf.a',
      'utf.\u00e9t\u00e9',
      'utf.\u65e5\u672c.x',
      `utf.${'k'.repeat(59)}`,
      `utf.${'k'.repeat(60)}`,
      `utf.${'k'.repeat(200)}`,
      `utf.${'k'.repeat(70)}.\u00fc`,
      'utf.a',
    ];
    let o = open(dir, cfg);
    for (const subject of subjects) {
      o.store.storeMsg(subject, Buffer.alloc(0), Buffer.from(subject), Date.now() * NS);
    }
    const check = (): void => {
      for (let i = 0; i < subjects.length; i++) {
        const m = o.store.loadMsg(i + 1)!;
        assert.equal(m.subject, subjects[i]);
        assert.equal(m.data.toString(), subjects[i]);
      }
      assert.equal(o.store.loadLastMsg('utf.\u00e9t\u00e9')!.seq, 2);
    };
    check();
    await o.storage.close();
    o = open(dir, cfg);
    assert.deepEqual(o.warnings, []);
    check();
    await o.storage.close();
  });

  it('serves a stream far larger than its read cache from disk, in order and at random', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('BIG', 'file');
    let o = open(dir, cfg, { blockSize: 256 * 1024 });
    const n = 4000;
    for (let i = 1; i <= n; i++) {
      o.store.storeMsg(
        `big.${i % 13}`,
        Buffer.alloc(0),
        Buffer.alloc(1500, i % 251),
        Date.now() * NS,
      );
    }
    await o.storage.close();
    o = open(dir, cfg, { blockSize: 256 * 1024, cacheBytes: 64 * 1024 });
    for (let seq = 1; seq <= n; seq++) {
      const m = o.store.loadMsg(seq)!;
      assert.equal(m.subject, `big.${seq % 13}`);
      assert.ok(m.data.length === 1500 && m.data[0] === seq % 251 && m.data[1499] === seq % 251);
    }
    for (let k = 0; k < 2000; k++) {
      const seq = 1 + Math.floor(Math.random() * n);
      assert.equal(o.store.loadMsg(seq)!.data[7], seq % 251);
    }
    assert.equal(o.store.loadNextMsg('big.5', false, 100)!.seq, 109);
    await o.storage.close();
  });

  it('serves what it wrote from memory, pages across two chunks included, within the cache', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('RECENT', 'file');
    // Sizes that put record ends everywhere across 16 KB pages and the write chunks.
    const size = (seq: number): number => 90 + ((seq * 7919) % 2900);
    const hdrOf = (seq: number): Buffer =>
      seq % 5 === 0 ? Buffer.from(`NATS/1.0\r\nN: ${seq}\r\n\r\n`) : Buffer.alloc(0);
    const check = (store: StreamStore, seq: number): void => {
      const m = store.loadMsg(seq)!;
      assert.equal(m.subject, `recent.${seq % 7}`);
      assert.deepEqual(m.hdr, hdrOf(seq), `header of ${seq}`);
      assert.ok(
        m.data.length === size(seq) && m.data[0] === seq % 251 && m.data.at(-1) === seq % 251,
        `data of ${seq}`,
      );
    };
    // Blocks of 1 MB: several are sealed (their chunks handed over), the last is still
    // written (its older chunks handed over, the newest kept for appends).
    let o = open(dir, cfg, { blockSize: 1024 * 1024 });
    const n = 5000;
    for (let seq = 1; seq <= n; seq++) {
      o.store.storeMsg(
        `recent.${seq % 7}`,
        hdrOf(seq),
        Buffer.alloc(size(seq), seq % 251),
        Date.now() * NS,
      );
      if (seq % 700 === 0) await o.storage.io.flush();
    }
    await o.storage.io.flush();
    for (let seq = 1; seq <= n; seq++) check(o.store, seq);
    assert.equal(o.storage.io.readBack, 0, 'nothing read back from disk');
    await o.storage.close();
    // A cache smaller than what was written: the oldest pages go, and are read back.
    o = open(dir, cfg, { blockSize: 1024 * 1024, cacheBytes: 256 * 1024 });
    for (let seq = n + 1; seq <= 2 * n; seq++) {
      o.store.storeMsg(
        `recent.${seq % 7}`,
        hdrOf(seq),
        Buffer.alloc(size(seq), seq % 251),
        Date.now() * NS,
      );
    }
    await o.storage.io.flush();
    for (let seq = 2 * n; seq >= 1; seq -= 3) check(o.store, seq);
    assert.ok(o.storage.io.readBack > 0);
    await o.storage.close();
  });

  it('writes new chunks into the memory of those the cache let go unread, never of one a load was given', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('REUSE', 'file');
    // 2 MB of cache: a quarter of it for written chunks nobody read, so 1 MB chunks come
    // and go many times over 24 MB; 8 MB blocks, so chunks grow to 1 MB and stay so.
    const o = open(dir, cfg, { blockSize: 8 * 1024 * 1024, cacheBytes: 2 * 1024 * 1024 });
    const n = 24_000;
    const fill = (seq: number): number => (seq * 31) % 251;
    let kept: Buffer | undefined;
    let keptSeq = 0;
    for (let seq = 1; seq <= n; seq++) {
      o.store.storeMsg('reuse.x', Buffer.alloc(0), Buffer.alloc(1000, fill(seq)), Date.now() * NS);
      if (seq % 500 === 0) await o.storage.io.flush();
      // A load of a message still in memory: its chunk is lent (the view is kept here).
      if (seq === 6000) {
        kept = o.store.loadMsg(5990)!.data;
        keptSeq = 5990;
      }
    }
    await o.storage.io.flush();
    assert.ok(o.storage.io.chunksReused > 5, `${o.storage.io.chunksReused} chunks reused`);
    assert.ok(
      kept!.length === 1000 && kept!.every((b) => b === fill(keptSeq)),
      'a view a load gave out is never written over',
    );
    for (let seq = 1; seq <= n; seq += 7) {
      const m = o.store.loadMsg(seq)!;
      assert.ok(m.data.length === 1000 && m.data.every((b) => b === fill(seq)), `data of ${seq}`);
    }
    await o.storage.close();
  });

  it('erase overwrites a message already on disk; the rest of its block is intact', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('ERASE', 'file');
    let o = open(dir, cfg);
    o.store.storeMsg('a', Buffer.alloc(0), Buffer.from('keep-1'), Date.now() * NS);
    o.store.storeMsg('b', Buffer.alloc(0), Buffer.from('secret-payload'), Date.now() * NS);
    o.store.storeMsg('a', Buffer.alloc(0), Buffer.from('keep-3'), Date.now() * NS);
    await o.storage.io.flush();
    assert.equal(o.store.eraseMsg(2), true);
    await o.storage.close();
    const blk = join(o.msgsDir, files(o.msgsDir, '.blk')[0]!);
    assert.equal(readFileSync(blk).indexOf('secret-payload'), -1);
    o = open(dir, cfg);
    assert.deepEqual(o.store.state(true).deleted, [2]);
    assert.equal(o.store.loadMsg(3)!.data.toString(), 'keep-3');
    assert.deepEqual(o.warnings, []);
    await o.storage.close();
  });

  it('an erased message keeps its time: getSeqFromTime after a restart', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('ERASE_TS', 'file');
    let o = open(dir, cfg);
    const t0 = 1_700_000_000_000 * NS;
    for (let i = 0; i < 5; i++)
      o.store.storeMsg('a', Buffer.alloc(0), Buffer.from(`m${i}`), t0 + i * 1000 * NS);
    o.store.eraseMsg(3);
    await o.storage.close();
    o = open(dir, cfg);
    assert.equal(o.store.getSeqFromTime(t0 + 500 * NS), 2);
    assert.equal(o.store.getSeqFromTime(t0 + 1500 * NS), 4);
    await o.storage.close();
  });
});

describe('file store: scale', () => {
  it('a million keys: per-subject limit, last-by-subject and recovery', async () => {
    const dir = await tempDir();
    const cfg = streamConfig('MILLION', 'file', { maxMsgsPerSubject: 1 });
    let o = open(dir, cfg);
    const keys = 1_000_000;
    const data = Buffer.from('v');
    for (let k = 0; k < keys; k++)
      o.store.storeMsg(`$KV.m.${k}`, Buffer.alloc(0), data, Date.now() * NS);
    for (let k = 0; k < keys; k += 1000)
      o.store.storeMsg(`$KV.m.${k}`, Buffer.alloc(0), Buffer.from('w'), Date.now() * NS);
    assert.equal(o.store.state().msgs, keys);
    assert.equal(o.store.loadLastMsg('$KV.m.5000')!.data.toString(), 'w');
    assert.equal(o.store.loadLastMsg('$KV.m.5001')!.data.toString(), 'v');
    await o.storage.close();
    o = open(dir, cfg);
    assert.equal(o.store.state().numSubjects, keys);
    assert.equal(o.store.loadLastMsg('$KV.m.999000')!.seq, keys + 1000);
    assert.deepEqual(o.store.filteredState(1, '$KV.m.77'), { msgs: 1, first: 78, last: 78 });
    await o.storage.close();
  });
});

describe('file store: names', () => {
  it('refuses names that would leave their directory', async () => {
    const dir = await tempDir();
    const storage = new FileStorage({ storeDir: dir, warn: () => undefined });
    assert.throws(() => storage.account('../x'), /invalid account name/);
    const p = storage.account('$G');
    assert.throws(
      () => p.openStream(streamConfig('a/b', 'file'), Buffer.from('{}')),
      /invalid stream name/,
    );
    const s = p.openStream(streamConfig('ok', 'file'), Buffer.from('{}'));
    assert.throws(() => s.consumerStore('..'), /invalid consumer name/);
    assert.throws(
      () => p.writeConsumerMeta('ok', 'x\\y', Buffer.from('{}')),
      /invalid consumer name/,
    );
    await storage.close();
  });
});
