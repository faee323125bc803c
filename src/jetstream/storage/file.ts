// JetStream's file storage: one FileStorage per server (its store_dir, one I/O
// scheduler, one read cache, one sync timer), one provider per account. The layout is
// nats-server's (FILE-FORMAT.md has the records):
//
//   <store_dir>/jetstream/<account>/streams/<stream>/meta.inf    stream config JSON
//                                                   /meta.sum    its CRC32, hex
//                                                   /msgs/<n>.blk, <n>.dlt
//                                                   /obs/<consumer>/meta.inf, meta.sum, o.dat
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type {
  RecoveredStream,
  StreamStore,
  StreamStoreConfig,
  StreamStoreProvider,
} from './types.js';
import { FileIo, syncDir, writeDurably } from './file-io.js';
import { CONSUMERS_DIR, FileStreamStore } from './file-stream.js';
import { checkName } from './file-names.js';

export const META_FILE = 'meta.inf';
export const META_SUM_FILE = 'meta.sum';

export interface FileStorageOptions {
  /** The server's store_dir: JetStream's files go under `<storeDir>/jetstream`. */
  readonly storeDir: string;
  /**
   * `always`: every write is synced before onDurable's callbacks (PubAcks). Otherwise
   * the milliseconds between background syncs (nats-server's sync_interval; default
   * 2 minutes). A process crash (kill -9) loses nothing written either way; a power
   * loss may lose up to one interval.
   */
  readonly syncInterval?: number | 'always';
  /** Bytes per block file; 0 (default): from the stream's max_bytes, at most 8 MB. */
  readonly blockSize?: number;
  /** Bytes of message blocks read back from disk kept in memory (default 64 MB). */
  readonly cacheBytes?: number;
  /** Open files at most, besides the ones being written (default 256). */
  readonly fdLimit?: number;
  /** Milliseconds between writes of a busy consumer's state (default 100). */
  readonly consumerFlushMs?: number;
  /** Losses found at recovery (torn or damaged records) and other warnings. */
  readonly warn?: (text: string) => void;
}

export const DEFAULT_SYNC_INTERVAL_MS = 2 * 60 * 1000;

export class FileStorage {
  readonly root: string;
  readonly io: FileIo;
  private readonly accounts = new Map<string, FileStreamStoreProvider>();
  readonly syncAlways: boolean;

  constructor(readonly options: FileStorageOptions) {
    this.root = join(options.storeDir, 'jetstream');
    mkdirSync(this.root, { recursive: true });
    const interval = options.syncInterval ?? DEFAULT_SYNC_INTERVAL_MS;
    this.syncAlways = interval === 'always';
    this.io = new FileIo({
      syncAlways: this.syncAlways,
      syncIntervalMs: interval === 'always' ? 0 : interval,
      cacheBytes: options.cacheBytes ?? 64 * 1024 * 1024,
      fdLimit: options.fdLimit ?? 256,
    });
  }

  warn(text: string): void {
    (this.options.warn ?? ((t: string) => process.emitWarning(t)))(text);
  }

  /** The stores of one account (created on first use). */
  account(name: string): FileStreamStoreProvider {
    checkName('account', name);
    let p = this.accounts.get(name);
    if (p === undefined) {
      p = new FileStreamStoreProvider(this, join(this.root, name, 'streams'));
      this.accounts.set(name, p);
    }
    return p;
  }

  /** Accounts with a directory under the store (recovery at start-up). */
  accountNames(): string[] {
    return existsSync(this.root)
      ? readdirSync(this.root, { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => d.name)
      : [];
  }

  /** Stops every open stream (writing and syncing everything), then the scheduler. */
  async close(): Promise<void> {
    for (const p of this.accounts.values()) await p.stopAll();
    await this.io.close();
  }
}

export class FileStreamStoreProvider implements StreamStoreProvider {
  private readonly open = new Map<string, FileStreamStore>();

  constructor(
    private readonly storage: FileStorage,
    readonly dir: string,
  ) {}

  openStream(cfg: StreamStoreConfig, meta: Buffer): StreamStore {
    checkName('stream', cfg.name);
    if (this.open.has(cfg.name)) throw new Error(`file store: stream ${cfg.name} is already open`);
    const dir = join(this.dir, cfg.name);
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true });
      syncDir(this.dir);
    }
    writeMeta(dir, meta);
    const o = this.storage.options;
    const store = new FileStreamStore(cfg, {
      dir,
      io: this.storage.io,
      blockSize: o.blockSize ?? 0,
      syncAlways: this.storage.syncAlways,
      consumerFlushMs: o.consumerFlushMs ?? 100,
      warn: (t) => this.storage.warn(t),
      onClose: (s) => {
        if (this.open.get(cfg.name) === s) this.open.delete(cfg.name);
      },
    });
    this.open.set(cfg.name, store);
    return store;
  }

  writeStreamMeta(stream: string, meta: Buffer): void {
    checkName('stream', stream);
    writeMeta(join(this.dir, stream), meta);
  }

  writeConsumerMeta(stream: string, consumer: string, meta: Buffer): void {
    checkName('stream', stream);
    checkName('consumer', consumer);
    const dir = join(this.dir, stream, CONSUMERS_DIR, consumer);
    mkdirSync(dir, { recursive: true });
    writeMeta(dir, meta);
  }

  removeConsumerMeta(stream: string, consumer: string): void {
    checkName('stream', stream);
    checkName('consumer', consumer);
    rmSync(join(this.dir, stream, CONSUMERS_DIR, consumer), { recursive: true, force: true });
  }

  recover(): RecoveredStream[] {
    const out: RecoveredStream[] = [];
    if (!existsSync(this.dir)) return out;
    for (const d of readdirSync(this.dir, { withFileTypes: true })) {
      if (!d.isDirectory()) continue;
      const dir = join(this.dir, d.name);
      const meta = readMeta(dir, (t) => this.storage.warn(t));
      if (meta === undefined) continue;
      const consumers: RecoveredStream['consumers'] = [];
      const odir = join(dir, CONSUMERS_DIR);
      if (existsSync(odir)) {
        for (const c of readdirSync(odir, { withFileTypes: true })) {
          if (!c.isDirectory()) continue;
          const cmeta = readMeta(join(odir, c.name), (t) => this.storage.warn(t));
          if (cmeta !== undefined) consumers.push({ name: c.name, meta: cmeta });
        }
      }
      out.push({ meta, consumers });
    }
    return out;
  }

  async stopAll(): Promise<void> {
    for (const s of [...this.open.values()]) await s.stop();
  }
}

/** meta.inf + meta.sum, each replaced atomically (a new file renamed over the old). */
function writeMeta(dir: string, meta: Buffer): void {
  const path = join(dir, META_FILE);
  if (existsSync(path) && readFileSync(path).equals(meta)) return;
  replaceFile(path, meta);
  replaceFile(join(dir, META_SUM_FILE), Buffer.from(crc32(meta).toString(16).padStart(8, '0')));
  syncDir(dir);
}

function replaceFile(path: string, bytes: Buffer): void {
  const tmp = `${path}.tmp`;
  writeDurably(tmp, bytes);
  renameSync(tmp, path);
}

function readMeta(dir: string, warn: (text: string) => void): Buffer | undefined {
  let meta: Buffer;
  try {
    meta = readFileSync(join(dir, META_FILE));
  } catch {
    return undefined;
  }
  try {
    const sum = readFileSync(join(dir, META_SUM_FILE), 'utf8').trim();
    if (sum !== crc32(meta).toString(16).padStart(8, '0')) {
      warn(`file store: ${join(dir, META_FILE)}: checksum mismatch; skipped`);
      return undefined;
    }
  } catch {
    warn(`file store: ${join(dir, META_SUM_FILE)} is missing; ${META_FILE} used as it is`);
  }
  return meta;
}
