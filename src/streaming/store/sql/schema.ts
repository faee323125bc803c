// The SQL store's schema, as versioned migrations. Our own tables (prefix `wb_`, so
// they can sit beside the reference server's in one database), created by the
// server itself: the reference asks its users to run a script first.
//
// wb_schema_version holds the version applied. Migrations run in one transaction
// under an advisory lock, so two servers of a fault-tolerance group starting at once
// migrate once; a database newer than this code is refused rather than misread.
import type pg from 'pg';

/** Advisory lock key held while migrating ("wbschema" in ASCII, truncated to int8). */
const MIGRATION_LOCK = 0x7762736368656d61n;

const MIGRATIONS: readonly string[] = [
  // 1: the store and the fault-tolerance lock.
  `
  CREATE TABLE wb_server (
    id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    info jsonb NOT NULL
  );
  CREATE TABLE wb_clients (
    id text PRIMARY KEY,
    hb_inbox text NOT NULL,
    conn_id bytea NOT NULL,
    protocol integer NOT NULL,
    ping_interval integer NOT NULL,
    ping_max_out integer NOT NULL
  );
  -- first_seq/last_seq are written in the transaction that stores or drops messages:
  -- they survive when every message of a channel is gone (first = last + 1).
  CREATE TABLE wb_channels (
    id integer PRIMARY KEY,
    name text NOT NULL UNIQUE,
    first_seq bigint NOT NULL DEFAULT 0,
    last_seq bigint NOT NULL DEFAULT 0,
    max_sub_id bigint NOT NULL DEFAULT 0
  );
  -- Messages in blocks of consecutive sequences (see msgs.ts): data is their marshaled
  -- MsgProtos end to end, sizes their lengths (the SQL byte accounting), ts their
  -- timestamps. Blocks never overlap: last_seq identifies one. Stored as is, not
  -- compressed (MsgProtos of small payloads hardly compress; the CPU is better spent).
  CREATE TABLE wb_msg_blocks (
    channel_id integer NOT NULL,
    last_seq bigint NOT NULL,
    first_seq bigint NOT NULL,
    ts bigint[] NOT NULL,
    sizes integer[] NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (channel_id, last_seq)
  );
  ALTER TABLE wb_msg_blocks ALTER COLUMN data SET STORAGE EXTERNAL;
  CREATE TABLE wb_subs (
    channel_id integer NOT NULL,
    id bigint NOT NULL,
    client_id text NOT NULL,
    q_group text NOT NULL,
    inbox text NOT NULL,
    ack_inbox text NOT NULL,
    max_in_flight integer NOT NULL,
    ack_wait integer NOT NULL,
    durable_name text NOT NULL,
    last_sent bigint NOT NULL,
    is_durable boolean NOT NULL,
    is_closed boolean NOT NULL,
    PRIMARY KEY (channel_id, id)
  );
  -- One row per message sent and not acked yet.
  CREATE TABLE wb_pending (
    channel_id integer NOT NULL,
    sub_id bigint NOT NULL,
    seq bigint NOT NULL,
    PRIMARY KEY (channel_id, sub_id, seq)
  );
  -- The fault-tolerance lock: the active server's id, refreshed (tick, updated_at on
  -- the database's clock) while it lives; stale past the lease, it can be taken.
  CREATE TABLE wb_lock (
    id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    owner text NOT NULL DEFAULT '',
    tick bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  INSERT INTO wb_lock (id) VALUES (1);
  -- Fencing: every write transaction of a fault-tolerant server starts with this, so
  -- a server that lost the lock cannot write, and holding the row FOR SHARE keeps the
  -- lock from being taken while the transaction runs.
  CREATE FUNCTION wb_check_lock(me text) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM 1 FROM wb_lock WHERE id = 1 AND owner = me FOR SHARE;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'lost store lock' USING ERRCODE = 'WB001';
    END IF;
  END $$;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the database to SCHEMA_VERSION; returns the version found before. */
export async function migrate(client: pg.ClientBase): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await client.query('CREATE TABLE IF NOT EXISTS wb_schema_version (version integer NOT NULL)');
    const res = await client.query<{ v: number | null }>(
      'SELECT max(version) AS v FROM wb_schema_version',
    );
    const found = res.rows[0]?.v ?? 0;
    if (found > SCHEMA_VERSION) {
      throw new Error(
        `database schema version ${found} is newer than this server supports (${SCHEMA_VERSION})`,
      );
    }
    for (let v = found + 1; v <= SCHEMA_VERSION; v++) {
      await client.query(MIGRATIONS[v - 1]!);
    }
    if (found < SCHEMA_VERSION) {
      await client.query('DELETE FROM wb_schema_version');
      await client.query(`INSERT INTO wb_schema_version (version) VALUES (${SCHEMA_VERSION})`);
    }
    await client.query('COMMIT');
    return found;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
