// The FILE store (`-st FILE --dir DIR`): durable streaming state in a directory laid
// out exactly as nats-streaming-server's FILE store lays it out, so either server can
// open what the other wrote (FILE-FORMAT.md has the details). All integers
// little-endian; every file starts with its version, a uint32 1.
//
//   DIR/.rootdir.lck           the lock: an fcntl record lock (src/durable/dir-lock.ts), empty file
//   DIR/server.dat             ServerInfo: one untyped record, rewritten whole
//   DIR/clients.dat            typed log: 1 add (ClientInfo), 2 delete (ClientDelete)
//   DIR/<channel>/             one directory per channel, named as the channel
//     msgs.<N>.dat             slice N of the message log: untyped records, MsgProto
//     msgs.<N>.idx             its index: 32-byte records, rebuildable from the .dat
//     subs.dat                 typed log: 1 new, 2 update (SubState), 3 delete
//                              (SubStateDelete), 4 ack, 5 sent (SubStateUpdate{ID, seqno})
//
//   record                     u32 size (typed: type << 24 | size) + u32 CRC32 of the
//                              payload (polynomial: file_crc_poly) + payload
//   index record (32)          u64 seq + u64 .dat offset + i64 timestamp + u32 size
//                              + u32 CRC32 of the previous 28 bytes
//
// A message costs its MsgProto plus 40 bytes (8 of record header, 32 of index), which
// is what `bytes` and max_bytes count, as in the reference.
//
// Durability: records are copied into per-file buffers as they are stored and written
// once per event-loop turn (file-io.ts). flush() resolves once everything stored
// before it is written: with `sync` (--file_sync, the default) also on disk (O_DSYNC
// writes of the .dat files, fdatasync of subs.dat and clients.dat; .idx files excepted:
// recovery rebuilds them), so a PubAck survives a power loss; without it the OS has the
// bytes (a process crash loses nothing acknowledged) and `autoSync` bounds what a power
// loss can take. As in the reference, a delivery or an ack is on disk with the next
// flush (the next publish batch, or auto sync) and written at the end of its turn (a
// process crash does not lose it); a new or closed subscription and a client syncs
// the round that writes it.
//
// Recovery reads every file from start to end through a bounded window and checks
// every CRC; the first unreadable record of a file either cuts the file there
// (`truncateBadEof`) or stops the start with an error naming the file and offset.
import { mkdirSync, rmSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ChannelRegistry, RegistryStore } from './channel-registry.js';
import { StoreError } from './errors.js';
import { FileChannel, recoverChannel, type RecoveredChannel } from './file-channel.js';
import { makeChannelDir } from './file-channel-dir.js';
import { IoScheduler } from './file-io.js';
import { CacheBudget } from './file-msgs.js';
import { TypedLog } from './file-log.js';
import { DirLock } from '../../durable/dir-lock.js';
import {
  DEFAULT_FDS_CAP,
  resolveFileTuning,
  type FileStoreOptions,
  type FileStoreTuning,
} from './file-options.js';
import { convertFormerFormat } from './file-convert.js';
import { Crc32, FileStoreError } from './file-record.js';
import {
  CLIENT_ADD,
  CLIENT_DELETE,
  CLIENTS_FILE,
  TRUNCATE_WITNESS,
  channelDirs,
  ensureRootFiles,
  encodeClientDelete,
  readClients,
  readServerInfo,
  writeServerInfo,
} from './file-root.js';
import { ResolvedLimits } from './limits.js';
import { encodeClient } from './records.js';
import type {
  ChannelStore,
  ClientRecord,
  RecoveredState,
  ServerInfoRecord,
  Store,
  StoreHooks,
} from './types.js';

export class FileStore extends RegistryStore<FileChannel> implements Store {
  readonly type = 'FILE' as const;
  readonly limits: ResolvedLimits;
  readonly dir: string;
  readonly tuning: FileStoreTuning;
  private readonly hooks: StoreHooks;
  private readonly io: IoScheduler;
  private readonly cache: CacheBudget;
  private readonly lock: DirLock;
  protected readonly channelsByName: ChannelRegistry<FileChannel>;
  private clientMap = new Map<string, ClientRecord>();
  private clientLog: TypedLog | undefined;
  private info: ServerInfoRecord | undefined;
  private recovery: Promise<RecoveredState | undefined> | undefined;
  private ready = false;
  private closed = false;
  private closing: Promise<void> | undefined;
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
    this.cache = new CacheBudget(this.tuning.cacheBytes);
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
    await this.takeLock();
    try {
      await convertFormerFormat(this.dir, Crc32.of(this.tuning.crcPoly), this.warn);
      await this.checkTruncateWitness();
      await ensureRootFiles(this.dir);
      const t = this.tuning;
      this.info = await readServerInfo(this.dir, t);
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
    // With `sync` too, as the reference's subs.dat: deliveries and acks of a channel
    // nobody publishes to are synced by this timer.
    if (this.tuning.autoSync > 0) {
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

  // Not in fault-tolerance mode the reference takes no lock; we take it anyway, so
  // that two servers (of either kind in FT mode, or two wirebus) never write one store.
  private async takeLock(): Promise<void> {
    let locked: boolean;
    try {
      locked = await this.lock.tryLock();
    } catch (err) {
      this.warn(`${String(err instanceof Error ? err.message : err)}: ${this.dir} is not locked`);
      return;
    }
    if (!locked) {
      throw new FileStoreError(
        'LOCKED',
        `file store: ${this.dir} is in use by another server (${this.lock.describeOwner()})`,
        this.lock.path,
      );
    }
  }

  // The reference's guard: truncate_bad_eof cuts data, so two starts in a row with it
  // are refused (the witness file is removed by a start without it).
  private async checkTruncateWitness(): Promise<void> {
    const path = join(this.dir, TRUNCATE_WITNESS);
    if (!this.tuning.truncateBadEof) {
      await unlink(path).catch(() => undefined);
      return;
    }
    try {
      await (await open(path, 'wx')).close();
    } catch {
      throw new FileStoreError(
        'IO',
        'file store: should not be opened consecutively with the truncate_bad_eof option set ' +
          `to true (remove ${path} to do it again)`,
        path,
      );
    }
  }

  private async loadChannels(): Promise<void> {
    const root = this.dir;
    const names = await channelDirs(root);
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
    cache: CacheBudget;
  } {
    return {
      cache: this.cache,
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
    const crc = Crc32.of(this.tuning.crcPoly);
    this.io.addTask(() => writeServerInfo(this.dir, saved, crc));
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
    const root = this.dir;
    // Synchronous: the channel's files are written in the next turn, inside it.
    const dir = makeChannelDir(root, name);
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
    // Removed at once, as the reference does: every directory of the root is a
    // channel to it, so none is left behind to be removed later.
    try {
      rmSync(channel.dir, { recursive: true, force: true });
    } catch (err) {
      this.warn(`file store: cannot remove ${channel.dir}: ${String(err)}`);
    }
    this.io.dirChanged(this.dir);
    const io = this.io;
    io.addTask(async () => {
      for (const f of files) await io.pool.close(f);
    });
  }

  flush(): Promise<void> {
    return this.io.flush();
  }

  /** Takes the directory lock (fault tolerance: the standby polls this). */
  tryExclusiveLock(): Promise<boolean> {
    if (this.closed) return Promise.reject(new StoreError('CLOSED'));
    mkdirSync(this.dir, { recursive: true });
    return this.lock.tryLock(true);
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
