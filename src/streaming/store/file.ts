// The FILE store (`-st FILE --dir DIR`): durable streaming state in a directory.
//
// On-disk format, version 1 (also in FILE-FORMAT.md). All integers little-endian.
//
//   DIR/VERSION                "wirebus-file-store 1\n"; another number is refused
//   DIR/.rootdir.lck           lock: JSON owner (host, pid, id), mtime refreshed each second
//   DIR/server.dat             ServerInfo, replaced atomically (tmp + fsync + rename)
//   DIR/clients.dat            typed log: 1 add (ClientInfo), 2 delete (ClientDelete)
//   DIR/channels/<name>/       one directory per channel, named as the channel
//     msgs.<N>.dat             slice N of the message log: untyped records, MsgProto
//     msgs.<N>.idx             its index: 32-byte records, rebuildable from the .dat
//     subs.dat                 typed log: 1 new, 2 update (SubState), 3 delete
//                              (SubStateDelete), 4 ack, 5 sent (SubStateUpdate{ID, seqno})
//     channel.dat              the channel's first sequence (limits survive restarts)
//
//   file header (8)            "WBFS" (u32 0x53464257) + u32 format version (1)
//   record                     u32 size (typed: type << 24 | size) + u32 CRC32 + payload;
//                              the CRC (IEEE) covers the size field's 4 bytes, then payload
//   index record (32)          u64 seq + u64 .dat offset + i64 timestamp + u32 size
//                              + u32 CRC32 of the previous 28 bytes
//
// A message costs its MsgProto plus 40 bytes (8 of record header, 32 of index), which
// is what `bytes` and max_bytes count, as in the reference.
//
// Durability: records are copied into per-file buffers as they are stored and written
// once per event-loop turn (file-io.ts). flush() resolves once everything stored
// before it is written: with `sync` (--file_sync, the default) also on disk (O_DSYNC
// writes; .idx files excepted: recovery rebuilds them), so a PubAck survives a power loss;
// without it the OS has the bytes (a process crash loses nothing acknowledged) and
// `autoSync` bounds what a power loss can take.
//
// Recovery reads every file from start to end through a bounded window and checks
// every CRC; the first unreadable record of a file either cuts the file there
// (`truncateBadEof`) or stops the start with an error naming the file and offset.
import { renameSync, mkdirSync } from 'node:fs';
import { rm, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ChannelRegistry, RegistryStore } from './channel-registry.js';
import { StoreError } from './errors.js';
import { FileChannel, recoverChannel, type RecoveredChannel } from './file-channel.js';
import { IoScheduler } from './file-io.js';
import { TypedLog } from './file-log.js';
import { DirLock } from './file-lock.js';
import {
  DEFAULT_FDS_CAP,
  resolveFileTuning,
  type FileStoreOptions,
  type FileStoreTuning,
} from './file-options.js';
import { FileStoreError } from './file-record.js';
import {
  CHANNELS_DIR,
  CLIENT_ADD,
  CLIENT_DELETE,
  CLIENTS_FILE,
  checkVersion,
  encodeClient,
  encodeClientDelete,
  readClients,
  readServerInfo,
  writeServerInfo,
} from './file-root.js';
import { ResolvedLimits } from './limits.js';
import type {
  ChannelStore,
  ClientRecord,
  RecoveredState,
  ServerInfoRecord,
  Store,
  StoreHooks,
} from './types.js';

const DELETED_PREFIX = '.deleted-';

export class FileStore extends RegistryStore<FileChannel> implements Store {
  readonly type = 'FILE' as const;
  readonly limits: ResolvedLimits;
  readonly dir: string;
  readonly tuning: FileStoreTuning;
  private readonly hooks: StoreHooks;
  private readonly io: IoScheduler;
  private readonly lock: DirLock;
  protected readonly channelsByName: ChannelRegistry<FileChannel>;
  private clientMap = new Map<string, ClientRecord>();
  private clientLog: TypedLog | undefined;
  private info: ServerInfoRecord | undefined;
  private recovery: Promise<RecoveredState | undefined> | undefined;
  private ready = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  private deletions = 0;
  private autoSyncTimer: NodeJS.Timeout | undefined;
  private readonly isClosed = (): boolean => this.closed;
  private readonly warn: (text: string) => void;

  constructor(options: FileStoreOptions) {
    super();
    if (options.dir === '') throw new FileStoreError('IO', 'file store: no directory given');
    this.dir = options.dir;
    this.limits = ResolvedLimits.from(options.limits);
    this.channelsByName = new ChannelRegistry(this.limits.global.maxChannels);
    this.tuning = resolveFileTuning(options);
    this.hooks = options;
    this.warn = (text) => options.warn?.(text);
    this.io = new IoScheduler({
      sync: this.tuning.sync,
      bufferSize: this.tuning.bufferSize,
      fdsCap: this.tuning.fdsLimit > 0 ? this.tuning.fdsLimit : DEFAULT_FDS_CAP,
    });
    this.lock = new DirLock(this.dir, (owner) => {
      this.warn(`file store: lock on ${this.dir} taken over by ${owner}`);
      options.onLockLost?.();
    });
  }

  /**
   * Takes the directory lock if this store does not hold it yet, then loads what is
   * on disk. Returns undefined when no server info was ever stored (a new store);
   * channels and clients found are loaded either way. Later calls return the same.
   */
  recover(): Promise<RecoveredState | undefined> {
    this.recovery ??= this.load();
    return this.recovery;
  }

  private async load(): Promise<RecoveredState | undefined> {
    this.checkOpen();
    mkdirSync(this.dir, { recursive: true });
    if (!(await this.lock.tryLock())) {
      throw new FileStoreError(
        'LOCKED',
        `file store: ${this.dir} is in use by another server (${await this.lock.describeOwner()})`,
        this.lock.path,
      );
    }
    try {
      await checkVersion(this.dir);
      const t = this.tuning;
      this.info = await readServerInfo(this.dir, t, this.warn);
      const { clients, log } = await readClients(this.dir, t, this.warn);
      this.clientMap = clients;
      this.clientLog = new TypedLog(
        join(this.dir, CLIENTS_FILE),
        log.size,
        log.records,
        this.io,
        t,
        (out) => {
          for (const c of this.clientMap.values()) out.record(CLIENT_ADD, encodeClient(c));
        },
        () => this.clientMap.size,
      );
      await this.loadChannels();
    } catch (err) {
      await this.lock.release();
      throw err;
    }
    this.ready = true;
    if (!this.tuning.sync && this.tuning.autoSync > 0) {
      this.autoSyncTimer = setInterval(() => {
        this.io.syncAll().catch(() => undefined);
      }, this.tuning.autoSync);
      this.autoSyncTimer.unref();
    }
    if (this.info === undefined) return undefined;
    return {
      info: this.info,
      clients: [...this.clientMap.values()],
      channels: [...this.channelsByName.values()],
    };
  }

  private async loadChannels(): Promise<void> {
    const root = join(this.dir, CHANNELS_DIR);
    const entries = await readdir(root, { withFileTypes: true });
    const names: string[] = [];
    for (const e of entries) {
      if (e.name.startsWith(DELETED_PREFIX)) {
        // A channel deletion that a restart interrupted.
        await rm(join(root, e.name), { recursive: true, force: true });
      } else if (e.isDirectory() && !e.name.startsWith('.')) names.push(e.name);
    }
    names.sort();
    const ctx = this.channelContext();
    // parallel_recovery channels at a time.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < names.length) {
        const name = names[next++]!;
        const dir = join(root, name);
        const recovered: RecoveredChannel = await recoverChannel(dir, ctx);
        this.channelsByName.add(
          new FileChannel(name, dir, this.limits.forChannel(name), ctx, recovered),
        );
      }
    };
    const workers = Math.min(this.tuning.parallelRecovery, Math.max(1, names.length));
    await Promise.all(Array.from({ length: workers }, worker));
  }

  private channelContext(): {
    io: IoScheduler;
    tuning: FileStoreTuning;
    isClosed: () => boolean;
    hooks: StoreHooks;
    warn: (text: string) => void;
  } {
    return {
      io: this.io,
      tuning: this.tuning,
      isClosed: this.isClosed,
      hooks: this.hooks,
      warn: this.warn,
    };
  }

  init(info: ServerInfoRecord): void {
    this.checkReady();
    this.info = { ...info };
    const saved = this.info;
    this.io.addTask(() => writeServerInfo(this.dir, saved));
  }

  /** The server info recovered or given to init(), if any. */
  get serverInfo(): ServerInfoRecord | undefined {
    return this.info;
  }

  addClient(client: ClientRecord): void {
    this.checkReady();
    const copy = { ...client };
    this.clientMap.set(client.id, copy);
    this.clientLog!.record(CLIENT_ADD, encodeClient(copy));
  }

  deleteClient(id: string): void {
    this.checkReady();
    if (this.clientMap.delete(id)) this.clientLog!.record(CLIENT_DELETE, encodeClientDelete(id));
  }

  clients(): IterableIterator<ClientRecord> {
    return this.clientMap.values();
  }

  createChannel(name: string): ChannelStore {
    this.checkReady();
    this.channelsByName.checkCreate(name);
    if (name === '' || name.startsWith('.') || /[/\\\0]/.test(name)) {
      throw new Error(`file store: channel name "${name}" cannot be a directory name`);
    }
    const root = join(this.dir, CHANNELS_DIR);
    const dir = join(root, name);
    // Synchronous: the channel's files are written in the next turn, inside it.
    mkdirSync(dir, { recursive: true });
    this.io.dirChanged(root);
    const channel = new FileChannel(
      name,
      dir,
      this.limits.forChannel(name),
      this.channelContext(),
      undefined,
    );
    this.channelsByName.add(channel);
    return channel;
  }

  deleteChannel(name: string): void {
    this.checkReady();
    const channel = this.channelsByName.remove(name);
    const files = channel.dispose(true);
    // Renamed at once, so a new channel of that name gets a fresh directory; the old
    // one is removed in the background (and at the next start if that is cut short).
    const root = join(this.dir, CHANNELS_DIR);
    const gone = join(root, `${DELETED_PREFIX}${++this.deletions}-${Date.now()}`);
    renameSync(channel.dir, gone);
    this.io.dirChanged(root);
    const io = this.io;
    io.addTask(async () => {
      for (const f of files) await io.pool.close(f);
      // Housekeeping: what is left is removed at the next start.
      await rm(gone, { recursive: true, force: true }).catch((err: unknown) => {
        this.warn(`file store: cannot remove ${gone}: ${String(err)}`);
      });
    });
  }

  flush(): Promise<void> {
    return this.io.flush();
  }

  /** Takes the directory lock (fault tolerance: the standby polls this). */
  tryExclusiveLock(): Promise<boolean> {
    if (this.closed) return Promise.reject(new StoreError('CLOSED'));
    mkdirSync(this.dir, { recursive: true });
    return this.lock.tryLock();
  }

  /** Files open now (bounded by fds_limit). */
  get openFiles(): number {
    return this.io.pool.openCount;
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    if (this.autoSyncTimer !== undefined) clearInterval(this.autoSyncTimer);
    for (const channel of this.channelsByName.values()) channel.dispose(false);
    try {
      await this.recovery?.catch(() => undefined);
      // Whatever the sync option, a clean stop leaves everything on disk.
      if (this.ready) await this.io.syncAll();
      await this.io.idle();
    } catch (err) {
      this.warn(`file store: closing: ${String(err)}`);
    } finally {
      await this.io.pool.closeAll();
      await this.lock.release();
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new StoreError('CLOSED');
  }

  private checkReady(): void {
    this.checkOpen();
    if (!this.ready) throw new Error('file store: recover() must complete before use');
  }
}
