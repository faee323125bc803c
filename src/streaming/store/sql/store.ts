// The SQL store (`-st SQL --sql_driver postgres --sql_source <dsn>`): channels,
// messages, clients and subscriptions in PostgreSQL, through `pg`.
//
// The Store contract (synchronous, visible writes; durable at flush) is met with an
// in-memory mirror of everything the server reads synchronously (channels with their
// first/last sequences and message index, subscriptions with pending sets, clients)
// and a write queue that commits in batches (writer.ts): one transaction and one
// round trip per batch, whatever it holds. Message bodies are read back from the
// database only for subscribers behind the newest RECENT_MAX messages.
//
// Connections: one for writes (batches must commit in order), a few for reads (a
// catching-up subscriber never waits behind a batch), one for the fault-tolerance
// lock (its refresh never waits behind either).
import pg from 'pg';
import { ChannelRegistry, RegistryStore } from '../channel-registry.js';
import { StoreError } from '../errors.js';
import type { StoreLimitsConfig } from '../limits.js';
import { ResolvedLimits } from '../limits.js';
import type {
  ChannelStore,
  ClientRecord,
  RecoveredState,
  ServerInfoRecord,
  Store,
  StoreHooks,
} from '../types.js';
import { SqlChannel } from './channel.js';
import { bytea, int, intArray, text } from './literal.js';
import { DEFAULT_LOCK_TIMING, SqlLock, type LockTiming } from './lock.js';
import type { StoredBlock } from './msgs.js';
import { recoverSql } from './recover.js';
import { migrate } from './schema.js';
import { BatchWriter, type Sealed } from './writer.js';

export interface SqlStoreOptions extends StoreHooks {
  /** PostgreSQL connection string (`--sql_source`). */
  readonly source: string;
  /** Limits as configured (validated here; throws StoreError INVALID_LIMITS), or resolved. */
  readonly limits?: StoreLimitsConfig | ResolvedLimits;
  /** The name this server writes into the fault-tolerance lock row (its server ID). */
  readonly lockOwner?: string;
  readonly lockTiming?: LockTiming;
  /** The fault-tolerance lock was lost: the server must stop serving at once. */
  readonly onLockLost?: (why: string) => void;
  /** Connections for reads (`--sql_max_open_conns`, less the writer's and the lock's). */
  readonly readConnections?: number;
  /** The database stopped taking writes / takes them again (for the log). */
  readonly onDatabaseDown?: (err: Error) => void;
  readonly onDatabaseUp?: () => void;
}

export class SqlStore extends RegistryStore<SqlChannel> implements Store {
  readonly type = 'SQL' as const;
  readonly limits: ResolvedLimits;
  private readonly hooks: StoreHooks;
  private readonly writePool: pg.Pool;
  private readonly readPool: pg.Pool;
  private readonly lockPool: pg.Pool;
  private readonly writer: BatchWriter;
  private readonly lock: SqlLock;
  protected readonly channelsByName: ChannelRegistry<SqlChannel>;
  private readonly clientMap = new Map<string, ClientRecord>();
  private nextChannelId = 1;
  private laterTimer: NodeJS.Timeout | undefined;
  private laterAt = 0;
  private closed = false;
  private ready: Promise<void> | undefined;
  // Changes not yet taken by a batch.
  private ordered: string[] = [];
  private info: ServerInfoRecord | undefined;
  private readonly clientChanges = new Map<string, ClientRecord | null>();
  private readonly changedChannels = new Set<SqlChannel>();
  private readonly isClosed = (): boolean => this.closed;
  private readonly unavailable = (): Error | undefined => this.writer.down;

  constructor(private readonly options: SqlStoreOptions) {
    super();
    this.limits = ResolvedLimits.from(options.limits);
    this.channelsByName = new ChannelRegistry(this.limits.global.maxChannels);
    this.hooks = options;
    const pool = (max: number, name: string): pg.Pool => {
      const p = new pg.Pool({
        connectionString: options.source,
        max,
        application_name: `wirebus-${name}`,
        connectionTimeoutMillis: 5000,
        keepAlive: true,
      });
      // An idle connection that breaks (database restarted) is dropped by the pool;
      // the next query opens a new one. Without a listener it would crash the process.
      p.on('error', () => undefined);
      return p;
    };
    this.writePool = pool(1, 'write');
    this.readPool = pool(Math.max(1, options.readConnections ?? 4), 'read');
    this.lockPool = pool(1, 'lock');
    this.lock = new SqlLock(
      this.lockPool,
      options.lockOwner ?? `wirebus-${process.pid}-${Date.now()}`,
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
    await this.ensureReady();
    const state = await recoverSql(this.readPool, (id, name) => this.newChannel(id, name));
    for (const ch of state.channels) this.channelsByName.add(ch);
    this.nextChannelId = state.maxChannelId + 1;
    for (const c of state.clients) this.clientMap.set(c.id, c);
    if (state.info === undefined) return undefined;
    this.info = state.info;
    return { info: state.info, clients: state.clients, channels: state.channels };
  }

  init(info: ServerInfoRecord): void {
    this.checkOpen();
    this.info = { ...info };
    this.ordered.push(
      `INSERT INTO wb_server (id, info) VALUES (1, ${text(JSON.stringify(this.info))}::jsonb)` +
        ' ON CONFLICT (id) DO UPDATE SET info = EXCLUDED.info',
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
    this.ordered.push(
      `INSERT INTO wb_channels (id, name) VALUES (${channel.id}, ${text(name)})` +
        ' ON CONFLICT (id) DO NOTHING',
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
    this.ordered.push(
      `DELETE FROM wb_msg_blocks WHERE channel_id = ${id}`,
      `DELETE FROM wb_pending WHERE channel_id = ${id}`,
      `DELETE FROM wb_subs WHERE channel_id = ${id}`,
      `DELETE FROM wb_channels WHERE id = ${id}`,
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
    await Promise.all([this.writePool.end(), this.readPool.end(), this.lockPool.end()]);
  }

  private newChannel(id: number, name: string): SqlChannel {
    return new SqlChannel(
      id,
      name,
      this.limits.forChannel(name),
      {
        isClosed: this.isClosed,
        unavailable: this.unavailable,
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

  // The block holding `from` is the first with last_seq >= from (blocks never overlap).
  private async fetch(channelId: number, from: number, to: number): Promise<StoredBlock[]> {
    const res = await this.readPool.query<{ first_seq: string; sizes: number[]; data: Buffer }>(
      'SELECT first_seq, sizes, data FROM wb_msg_blocks' +
        ' WHERE channel_id = $1 AND last_seq >= $2 AND first_seq <= $3' +
        ' ORDER BY last_seq LIMIT 64',
      [channelId, from, to],
    );
    return res.rows.map((r) => ({ first: Number(r.first_seq), sizes: r.sizes, data: r.data }));
  }

  private ensureReady(): Promise<void> {
    this.ready ??= this.migrate().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  private async migrate(): Promise<void> {
    const client = await this.writePool.connect();
    try {
      await migrate(client);
    } finally {
      client.release();
    }
  }

  private async exec(statements: string[]): Promise<void> {
    await this.ensureReady();
    // Fencing: a server of a fault-tolerance group writes only while it holds the lock.
    const sql = this.lock.fencing
      ? [`SELECT wb_check_lock(${text(this.lock.owner)})`, ...statements]
      : statements;
    try {
      await this.writePool.query(sql.join(';\n'));
    } catch (err) {
      if ((err as { code?: unknown }).code === 'WB001') {
        this.options.onLockLost?.('another server took the store lock');
      }
      throw err;
    }
  }

  // Everything written since the last seal, as one transaction's statements.
  private seal(): Sealed | undefined {
    const out = this.ordered;
    this.ordered = [];
    const upserts: string[] = [];
    const deletes: string[] = [];
    for (const [id, c] of this.clientChanges) {
      if (c === null) deletes.push(text(id));
      else {
        upserts.push(
          `(${text(c.id)},${text(c.hbInbox)},${bytea(c.connID)},${int(c.protocol)},` +
            `${int(c.pingInterval)},${int(c.pingMaxOut)})`,
        );
      }
    }
    this.clientChanges.clear();
    if (deletes.length > 0) out.push(`DELETE FROM wb_clients WHERE id IN (${deletes.join(',')})`);
    if (upserts.length > 0) {
      out.push(
        'INSERT INTO wb_clients (id, hb_inbox, conn_id, protocol, ping_interval, ping_max_out)' +
          ` VALUES ${upserts.join(',')} ON CONFLICT (id) DO UPDATE SET` +
          ' hb_inbox = EXCLUDED.hb_inbox, conn_id = EXCLUDED.conn_id,' +
          ' protocol = EXCLUDED.protocol, ping_interval = EXCLUDED.ping_interval,' +
          ' ping_max_out = EXCLUDED.ping_max_out',
      );
    }
    const changes = [...this.changedChannels].map((ch) => ({
      ch,
      c: ch.takeChanges(this.closed),
    }));
    this.changedChannels.clear();
    for (const { c } of changes) out.push(...c.subs.pre, ...c.msgs.pre);
    const blocks = changes.flatMap(({ ch, c }) =>
      c.msgs.blocks.map(
        (b) =>
          `(${ch.id},${int(b.last)},${int(b.first)},${intArray(b.stamps, 'bigint')},` +
          `${intArray(b.sizes, 'int')},${bytea(b.data)})`,
      ),
    );
    if (blocks.length > 0) {
      out.push(
        'INSERT INTO wb_msg_blocks (channel_id, last_seq, first_seq, ts, sizes, data)' +
          ` VALUES ${blocks.join(',')} ON CONFLICT DO NOTHING`,
      );
    }
    for (const { c } of changes) out.push(...c.msgs.post);
    if (changes.length > 0) {
      out.push(
        'UPDATE wb_channels c SET first_seq = v.f, last_seq = v.l, max_sub_id = v.m' +
          ` FROM (VALUES ${changes.map(({ c }) => c.channelRow).join(',')}) AS v(id, f, l, m)` +
          ' WHERE c.id = v.id',
      );
    }
    const subs = changes.flatMap(({ c }) => c.subs.upserts);
    if (subs.length > 0) {
      out.push(
        'INSERT INTO wb_subs (channel_id, id, client_id, q_group, inbox, ack_inbox,' +
          ' max_in_flight, ack_wait, durable_name, last_sent, is_durable, is_closed)' +
          ` VALUES ${subs.join(',')} ON CONFLICT (channel_id, id) DO UPDATE SET` +
          ' client_id = EXCLUDED.client_id, q_group = EXCLUDED.q_group,' +
          ' inbox = EXCLUDED.inbox, ack_inbox = EXCLUDED.ack_inbox,' +
          ' max_in_flight = EXCLUDED.max_in_flight, ack_wait = EXCLUDED.ack_wait,' +
          ' durable_name = EXCLUDED.durable_name, last_sent = EXCLUDED.last_sent,' +
          ' is_durable = EXCLUDED.is_durable, is_closed = EXCLUDED.is_closed',
      );
    }
    // Inserts before deletes: a row added and acked within one batch nets out.
    const pendingRows = (pick: 'add' | 'del'): [number[], number[], number[]] => {
      const chs: number[] = [];
      const sids: number[] = [];
      const seqs: number[] = [];
      for (const { ch, c } of changes) {
        const ss = pick === 'add' ? c.subs.addSubs : c.subs.delSubs;
        const qs = pick === 'add' ? c.subs.addSeqs : c.subs.delSeqs;
        for (let i = 0; i < ss.length; i++) {
          chs.push(ch.id);
          sids.push(ss[i]!);
          seqs.push(qs[i]!);
        }
      }
      return [chs, sids, seqs];
    };
    const [ac, as, aq] = pendingRows('add');
    if (ac.length > 0) {
      out.push(
        'INSERT INTO wb_pending (channel_id, sub_id, seq) SELECT * FROM unnest(' +
          `${intArray(ac, 'int')}, ${intArray(as, 'bigint')}, ${intArray(aq, 'bigint')})` +
          ' ON CONFLICT DO NOTHING',
      );
    }
    const [dc, ds, dq] = pendingRows('del');
    if (dc.length > 0) {
      out.push(
        'DELETE FROM wb_pending p USING unnest(' +
          `${intArray(dc, 'int')}, ${intArray(ds, 'bigint')}, ${intArray(dq, 'bigint')})` +
          ' AS v(c, s, q) WHERE p.channel_id = v.c AND p.sub_id = v.s AND p.seq = v.q',
      );
    }
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
