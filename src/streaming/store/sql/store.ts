// The SQL store (`-st SQL --sql_driver postgres|mysql --sql_source <dsn>`): channels,
// messages, clients and subscriptions in PostgreSQL (through `pg`) or MySQL/MariaDB
// (through `mysql2`), in the reference's tables (schema.ts), so that
// nats-streaming-server and wirebus serve each other's databases.
//
// The Store contract (synchronous, visible writes; durable at flush) is met with an
// in-memory mirror of everything the server reads synchronously (channels with their
// first/last sequences and message index, subscriptions with pending sets, clients)
// and a write queue that commits in batches (writer.ts): one transaction and one
// round trip per batch, whatever it holds. Message bodies are read back from the
// database only for subscribers behind the newest messages kept in memory.
//
// Connections: one for writes (batches must commit in order), a few for reads (a
// catching-up subscriber never waits behind a batch), one for the fault-tolerance
// lock (its refresh never waits behind either).
import { millisToNanos } from '../../protocol/int64.js';
import { ChannelRegistry, RegistryStore } from '../channel-registry.js';
import { StoreError } from '../errors.js';
import type { StoreLimitsConfig } from '../limits.js';
import { ResolvedLimits } from '../limits.js';
import { encodeClient, encodeServerInfo } from '../records.js';
import type {
  ChannelStore,
  ClientRecord,
  RecoveredState,
  ServerInfoRecord,
  Store,
  StoreHooks,
} from '../types.js';
import { SqlChannel } from './channel.js';
import {
  LockLostError,
  openDb,
  type SqlDb,
  type SqlDialect,
  type SqlDriver,
  type Statement,
} from './db.js';
import { dialectOf } from './dialect.js';
import { buf, int, long, num } from './literal.js';
import { DEFAULT_LOCK_TIMING, SqlLock, type LockTiming } from './lock.js';
import { RECENT_STORE_BYTES, type FetchedMsg, type RecentBudget } from './msgs.js';
import { recoverSql } from './recover.js';
import { ensureSchema, SCHEMA_VERSION } from './schema.js';
import type { SubIds } from './subs.js';
import { BatchWriter, type Sealed } from './writer.js';

export interface SqlStoreOptions extends StoreHooks {
  /** `--sql_driver`: postgres (default) or mysql. */
  readonly driver?: SqlDriver;
  /** `--sql_source`: the connection string, as the reference's drivers take it. */
  readonly source: string;
  /** `--sql_no_caching`: one SubsPending row per pending sequence (see subs.ts). */
  readonly noCaching?: boolean;
  /**
   * `--sql_bulk_insert_limit`: messages per INSERT statement at most. As in the
   * reference, it applies from SQL_MIN_BULK_INSERT_LIMIT on and not with noCaching;
   * otherwise (and by default) an INSERT takes every message of a batch (up to 4 MB).
   */
  readonly bulkInsertLimit?: number;
  /**
   * `--sql_max_open_conns`: connections at most (0: the default, 6). wirebus needs
   * at least 2 (one for writes, one for reads), 3 in a fault-tolerance group.
   */
  readonly maxOpenConns?: number;
  /** Limits as configured (validated here; throws StoreError INVALID_LIMITS), or resolved. */
  readonly limits?: StoreLimitsConfig | ResolvedLimits;
  /** The name this server writes into the StoreLock row (its server ID, at most 30 characters). */
  readonly lockOwner?: string;
  readonly lockTiming?: LockTiming;
  /** The fault-tolerance lock was lost: the server must stop serving at once. */
  readonly onLockLost?: (why: string) => void;
  /** The database stopped taking writes / takes them again (for the log). */
  readonly onDatabaseDown?: (err: Error) => void;
  readonly onDatabaseUp?: () => void;
}

/** The reference's sqlMinBulkInsertLimit: a lower `--sql_bulk_insert_limit` is ignored. */
export const SQL_MIN_BULK_INSERT_LIMIT = 5;

/**
 * Rows per INSERT at most (0: no limit) for `--sql_bulk_insert_limit` as the reference
 * applies it: only in its caching mode, and only from SQL_MIN_BULK_INSERT_LIMIT on.
 */
export function insertRowsLimit(bulkInsertLimit: number, noCaching: boolean): number {
  return !noCaching && bulkInsertLimit >= SQL_MIN_BULK_INSERT_LIMIT ? bulkInsertLimit : 0;
}

export class SqlStore extends RegistryStore<SqlChannel> implements Store {
  readonly type = 'SQL' as const;
  readonly limits: ResolvedLimits;
  private readonly hooks: StoreHooks;
  readonly driver: SqlDriver;
  private readonly dialect: SqlDialect;
  private db: Promise<SqlDb> | undefined;
  private readonly subIds: SubIds = { max: 0 };
  private readonly insertMaxRows: number;
  private readonly recentBudget: RecentBudget = { bytes: 0, limit: RECENT_STORE_BYTES };
  private readonly writer: BatchWriter;
  private readonly lock: SqlLock;
  protected readonly channelsByName: ChannelRegistry<SqlChannel>;
  private readonly clientMap = new Map<string, ClientRecord>();
  private nextChannelId = 1;
  private laterTimer: NodeJS.Timeout | undefined;
  private laterAt = 0;
  private closed = false;
  // Changes not yet taken by a batch.
  private ordered: string[] = [];
  private readonly clientChanges = new Map<string, ClientRecord | null>();
  private readonly changedChannels = new Set<SqlChannel>();
  private readonly isClosed = (): boolean => this.closed;
  private readonly unavailable = (): Error | undefined => this.writer.down;

  constructor(private readonly options: SqlStoreOptions) {
    super();
    this.limits = ResolvedLimits.from(options.limits);
    this.channelsByName = new ChannelRegistry(this.limits.global.maxChannels);
    this.hooks = options;
    this.driver = options.driver ?? 'postgres';
    this.dialect = dialectOf(this.driver);
    this.insertMaxRows = insertRowsLimit(options.bulkInsertLimit ?? 0, options.noCaching ?? false);
    this.lock = new SqlLock(
      () => this.ensureReady(),
      options.lockOwner ?? `wirebus-${process.pid}-${Date.now().toString(36)}`,
      options.lockTiming ?? DEFAULT_LOCK_TIMING,
      (why) => {
        this.options.onLockLost?.(why);
      },
    );
    this.writer = new BatchWriter({
      seal: () => this.seal(),
      exec: (statements) => this.exec(statements),
      onDown: (err) => {
        if (options.onDatabaseDown !== undefined) options.onDatabaseDown(err);
        else options.warn?.(`SQL store: database unavailable, refusing messages: ${err.message}`);
      },
      onUp: () => {
        if (options.onDatabaseUp !== undefined) options.onDatabaseUp();
        else options.warn?.('SQL store: database available again');
      },
    });
  }

  async recover(): Promise<RecoveredState | undefined> {
    this.checkOpen();
    const db = await this.ensureReady();
    const state = await recoverSql(db, (id, name) => this.newChannel(id, name));
    for (const ch of state.channels) this.channelsByName.add(ch);
    this.nextChannelId = state.maxChannelId + 1;
    this.subIds.max = Math.max(this.subIds.max, state.maxSubId);
    // Limits as configured now, recorded as the reference does (they may differ).
    for (const ch of state.channels) {
      this.ordered.push(`UPDATE Channels SET ${this.limitColumns(ch)} WHERE id = ${ch.id}`);
      ch.queued = true;
      this.changedChannels.add(ch);
    }
    if (state.channels.length > 0) this.writer.kick();
    for (const c of state.clients) this.clientMap.set(c.id, c);
    if (state.info === undefined) return undefined;
    return { info: state.info, clients: state.clients, channels: state.channels };
  }

  init(info: ServerInfoRecord): void {
    this.checkOpen();
    const proto = encodeServerInfo(info);
    const d = this.dialect;
    this.ordered.push(
      'DELETE FROM ServerInfo',
      'INSERT INTO ServerInfo (uniquerow, id, proto, version)' +
        ` VALUES (1, ${d.text(info.clusterID)}, ${d.bytes(proto)}, ${SCHEMA_VERSION})`,
    );
    this.writer.kick();
  }

  addClient(client: ClientRecord): void {
    this.checkOpen();
    const record = { ...client };
    this.clientMap.set(client.id, record);
    this.clientChanges.set(client.id, record);
    this.writer.kick();
  }

  deleteClient(id: string): void {
    this.checkOpen();
    if (!this.clientMap.delete(id)) return;
    this.clientChanges.set(id, null);
    this.writer.kick();
  }

  clients(): IterableIterator<ClientRecord> {
    return this.clientMap.values();
  }

  createChannel(name: string): ChannelStore {
    this.checkOpen();
    this.channelsByName.checkCreate(name);
    const channel = this.newChannel(this.nextChannelId++, name);
    this.channelsByName.add(channel);
    const l = channel.limits;
    this.ordered.push(
      'INSERT INTO Channels (id, name, maxmsgs, maxbytes, maxage) VALUES' +
        ` (${channel.id}, ${this.dialect.text(name)}, ${int(l.maxMsgs)}, ${int(l.maxBytes)},` +
        ` ${long(millisToNanos(l.maxAge))}) ${this.dialect.ignoreDuplicate('id')}`,
    );
    this.writer.kick();
    return channel;
  }

  deleteChannel(name: string): void {
    this.checkOpen();
    const channel = this.channelsByName.remove(name);
    channel.dispose();
    this.changedChannels.delete(channel);
    const id = channel.id;
    // The reference marks the row deleted, then removes the rest in the background;
    // here both in one transaction (a crash leaves the channel whole or gone).
    this.ordered.push(
      `UPDATE Channels SET deleted = TRUE WHERE id = ${id}`,
      `DELETE FROM SubsPending WHERE subid IN (SELECT subid FROM Subscriptions WHERE id = ${id})`,
      `DELETE FROM Messages WHERE id = ${id}`,
      `DELETE FROM Subscriptions WHERE id = ${id}`,
      `DELETE FROM Channels WHERE id = ${id}`,
    );
    this.writer.kick();
  }

  flush(): Promise<void> {
    return this.writer.flush();
  }

  async tryExclusiveLock(): Promise<boolean> {
    this.checkOpen();
    await this.ensureReady();
    return this.lock.tryLock();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.laterTimer !== undefined) clearTimeout(this.laterTimer);
    // The last batch takes every channel's delivery state, however recent (seal()).
    for (const ch of this.channelsByName.values()) {
      ch.queued = true;
      this.changedChannels.add(ch);
      ch.stopTimers();
    }
    this.writer.kick();
    await this.writer.close();
    await this.lock.release();
    if (this.db !== undefined) await (await this.db.catch(() => undefined))?.end();
  }

  private limitColumns(ch: SqlChannel): string {
    const l = ch.limits;
    return (
      `maxmsgs = ${int(l.maxMsgs)}, maxbytes = ${int(l.maxBytes)},` +
      ` maxage = ${long(millisToNanos(l.maxAge))}`
    );
  }

  private newChannel(id: number, name: string): SqlChannel {
    return new SqlChannel(
      id,
      name,
      this.limits.forChannel(name),
      {
        isClosed: this.isClosed,
        unavailable: this.unavailable,
        dialect: this.dialect,
        noCaching: this.options.noCaching ?? false,
        insertMaxRows: this.insertMaxRows,
        budget: this.recentBudget,
        subIds: this.subIds,
        changed: (ch) => {
          ch.queued = true;
          this.changedChannels.add(ch);
          this.writer.kick();
        },
        later: (ms) => {
          this.kickLater(ms);
        },
        fetch: (channelId, from, to) => this.fetch(channelId, from, to),
      },
      this.hooks,
    );
  }

  // One timer for every channel's delayed delivery state: the earliest wins.
  private kickLater(ms: number): void {
    const at = Date.now() + ms;
    if (this.laterTimer !== undefined && this.laterAt <= at) return;
    if (this.laterTimer !== undefined) clearTimeout(this.laterTimer);
    this.laterAt = at;
    this.laterTimer = setTimeout(() => {
      this.laterTimer = undefined;
      if (this.closed) return;
      for (const ch of this.channelsByName.values()) {
        ch.queued = true;
        this.changedChannels.add(ch);
      }
      this.writer.kick();
    }, ms);
    this.laterTimer.unref();
  }

  private async fetch(channelId: number, from: number, to: number): Promise<FetchedMsg[]> {
    const db = await this.ensureReady();
    const rows = await db.read(
      `SELECT seq, data FROM Messages WHERE id = ${channelId}` +
        ` AND seq >= ${int(from)} AND seq <= ${int(to)} ORDER BY seq`,
    );
    return rows.map((r) => ({ seq: num(r[0]), data: buf(r[1]) }));
  }

  private ensureReady(): Promise<SqlDb> {
    this.db ??= this.open().catch((err: unknown) => {
      this.db = undefined;
      throw err;
    });
    return this.db;
  }

  private async open(): Promise<SqlDb> {
    const max = this.options.maxOpenConns ?? 0;
    const db = await openDb(this.driver, {
      source: this.options.source,
      readConnections: max > 0 ? Math.max(1, max - 2) : 4,
    });
    try {
      await ensureSchema(db);
    } catch (err) {
      await db.end().catch(() => undefined);
      throw err;
    }
    return db;
  }

  private async exec(statements: Statement[]): Promise<void> {
    const db = await this.ensureReady();
    try {
      // Fencing: a server of a fault-tolerance group writes only while it holds the lock.
      await db.write(statements, this.lock.fencing ? this.lock.owner : undefined);
    } catch (err) {
      if (err instanceof LockLostError) {
        this.options.onLockLost?.('another server took the store lock');
      }
      throw err;
    }
  }

  // Everything written since the last seal, as one transaction's statements.
  private seal(): Sealed | undefined {
    const out: Statement[] = this.ordered;
    this.ordered = [];
    const d = this.dialect;
    if (this.clientChanges.size > 0) {
      // As the reference's AddClient: a client recorded again replaces its row.
      const ids = [...this.clientChanges.keys()].map((id) => d.text(id));
      out.push(`DELETE FROM Clients WHERE id IN (${ids.join(',')})`);
      const rows: string[] = [];
      for (const c of this.clientChanges.values()) {
        if (c === null) continue;
        const proto = encodeClient(c);
        rows.push(`(${d.text(c.id)},${d.text(c.hbInbox)},${d.bytes(proto)})`);
      }
      if (rows.length > 0)
        out.push(`INSERT INTO Clients (id, hbinbox, proto) VALUES ${rows.join(',')}`);
      this.clientChanges.clear();
    }
    const changes = [...this.changedChannels].map((ch) => ({
      ch,
      c: ch.takeChanges(this.closed),
    }));
    this.changedChannels.clear();
    for (const { c } of changes) out.push(...c.msgs.statements, ...c.subs);
    if (out.length === 0) return undefined;
    return {
      statements: out,
      onCommit: () => {
        for (const { ch, c } of changes) ch.msgs.markCommitted(c.msgs.upTo);
      },
    };
  }

  private checkOpen(): void {
    if (this.closed) throw new StoreError('CLOSED');
  }
}
