// The SQL store's schema: the reference's own (nats-streaming-server's
// scripts/postgres.db.sql and scripts/mysql.db.sql, version 1 with the 0.10.0
// Clients.proto column), so that a database written by either server is served by
// the other. The reference asks its users to run the script first; wirebus creates
// whatever table is missing itself, with the same definitions.
//
// wirebus's former schema (tables wb_*, one row per block of messages) is gone: it
// was faster only for small messages published with no subscriber, slower otherwise
// (bench/RESULTS.md), not enough to keep a second schema. A database that holds it
// is refused with a message saying so.
import type { Row, SqlDb, SqlDriver } from './db.js';

/** ServerInfo.version: the reference's sqlVersion. */
export const SCHEMA_VERSION = 1;

const TABLES: Record<SqlDriver, readonly (readonly [string, string])[]> = {
  postgres: [
    [
      'serverinfo',
      'CREATE TABLE IF NOT EXISTS ServerInfo (uniquerow INTEGER DEFAULT 1, id VARCHAR(1024), proto BYTEA, version INTEGER, PRIMARY KEY (uniquerow))',
    ],
    [
      'clients',
      'CREATE TABLE IF NOT EXISTS Clients (id VARCHAR(1024), hbinbox TEXT, proto BYTEA, PRIMARY KEY (id))',
    ],
    [
      'channels',
      'CREATE TABLE IF NOT EXISTS Channels (id INTEGER, name VARCHAR(1024) NOT NULL, maxseq BIGINT DEFAULT 0, maxmsgs INTEGER DEFAULT 0, maxbytes BIGINT DEFAULT 0, maxage BIGINT DEFAULT 0, deleted BOOL DEFAULT FALSE, PRIMARY KEY (id));' +
        ' CREATE INDEX IF NOT EXISTS Idx_ChannelsName ON Channels (name)',
    ],
    [
      'messages',
      'CREATE TABLE IF NOT EXISTS Messages (id INTEGER, seq BIGINT, timestamp BIGINT, size INTEGER, data BYTEA, CONSTRAINT PK_MsgKey PRIMARY KEY(id, seq));' +
        ' CREATE INDEX IF NOT EXISTS Idx_MsgsTimestamp ON Messages (timestamp)',
    ],
    [
      'subscriptions',
      'CREATE TABLE IF NOT EXISTS Subscriptions (id INTEGER, subid BIGINT, lastsent BIGINT DEFAULT 0, proto BYTEA, deleted BOOL DEFAULT FALSE, CONSTRAINT PK_SubKey PRIMARY KEY(id, subid))',
    ],
    [
      'subspending',
      'CREATE TABLE IF NOT EXISTS SubsPending (subid BIGINT, row BIGINT, seq BIGINT DEFAULT 0, lastsent BIGINT DEFAULT 0, pending BYTEA, acks BYTEA, CONSTRAINT PK_MsgPendingKey PRIMARY KEY(subid, row));' +
        ' CREATE INDEX IF NOT EXISTS Idx_SubsPendingSeq ON SubsPending (seq)',
    ],
    ['storelock', 'CREATE TABLE IF NOT EXISTS StoreLock (id VARCHAR(30), tick BIGINT DEFAULT 0)'],
  ],
  mysql: [
    [
      'serverinfo',
      'CREATE TABLE IF NOT EXISTS ServerInfo (uniquerow INT DEFAULT 1, id VARCHAR(1024), proto BLOB, version INTEGER, PRIMARY KEY (uniquerow))',
    ],
    [
      'clients',
      'CREATE TABLE IF NOT EXISTS Clients (id VARCHAR(1024), hbinbox TEXT, proto BLOB, PRIMARY KEY (id(256)))',
    ],
    [
      'channels',
      'CREATE TABLE IF NOT EXISTS Channels (id INTEGER, name VARCHAR(1024) NOT NULL, maxseq BIGINT UNSIGNED DEFAULT 0, maxmsgs INTEGER DEFAULT 0, maxbytes BIGINT DEFAULT 0, maxage BIGINT DEFAULT 0, deleted BOOL DEFAULT FALSE, PRIMARY KEY (id), INDEX Idx_ChannelsName (name(256)))',
    ],
    [
      'messages',
      'CREATE TABLE IF NOT EXISTS Messages (id INTEGER, seq BIGINT UNSIGNED, timestamp BIGINT, size INTEGER, data BLOB, CONSTRAINT PK_MsgKey PRIMARY KEY(id, seq), INDEX Idx_MsgsTimestamp (timestamp))',
    ],
    [
      'subscriptions',
      'CREATE TABLE IF NOT EXISTS Subscriptions (id INTEGER, subid BIGINT UNSIGNED, lastsent BIGINT UNSIGNED DEFAULT 0, proto BLOB, deleted BOOL DEFAULT FALSE, CONSTRAINT PK_SubKey PRIMARY KEY(id, subid))',
    ],
    [
      'subspending',
      'CREATE TABLE IF NOT EXISTS SubsPending (subid BIGINT UNSIGNED, `row` BIGINT UNSIGNED, seq BIGINT UNSIGNED DEFAULT 0, lastsent BIGINT UNSIGNED DEFAULT 0, pending BLOB, acks BLOB, CONSTRAINT PK_MsgPendingKey PRIMARY KEY(subid, `row`), INDEX Idx_SubsPendingSeq(seq))',
    ],
    [
      'storelock',
      'CREATE TABLE IF NOT EXISTS StoreLock (id VARCHAR(30), tick BIGINT UNSIGNED DEFAULT 0)',
    ],
  ],
};

/** The statements that create the reference's tables (for tools and tests). */
export function schemaStatements(driver: SqlDriver): string[] {
  return TABLES[driver].map(([, ddl]) => ddl);
}

/** The tables of the current schema (the database's own, lower case). */
async function tablesOf(db: SqlDb): Promise<Set<string>> {
  const schema = db.driver === 'postgres' ? 'current_schema()' : 'DATABASE()';
  const rows: Row[] = await db.read(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema}`,
  );
  return new Set(rows.map((r) => String(r[0]).toLowerCase()));
}

/**
 * Creates the tables that are missing (a database prepared with the reference's
 * script has them all) and adds Clients.proto to a database older than 0.10.0.
 */
export async function ensureSchema(db: SqlDb): Promise<void> {
  let tables = await tablesOf(db);
  if (tables.has('wb_msg_blocks') || tables.has('wb_schema_version')) {
    throw new Error(
      'sql: this database holds the tables of an older wirebus (wb_*), which this ' +
        'version no longer reads: it uses the tables of nats-streaming-server ' +
        '(ServerInfo, Channels, Messages...). Start it on an empty database, or keep ' +
        'the older wirebus on this one',
    );
  }
  const missing = TABLES[db.driver].filter(([name]) => !tables.has(name));
  if (missing.length > 0) {
    try {
      await db.write(missing.map(([, ddl]) => ddl));
    } catch (err) {
      // A member of a fault-tolerance group starting at the same time made them first.
      tables = await tablesOf(db);
      if (missing.some(([name]) => !tables.has(name))) throw err;
    }
  }
  const cols = await db.read(
    'SELECT column_name FROM information_schema.columns' +
      ` WHERE table_schema = ${db.driver === 'postgres' ? 'current_schema()' : 'DATABASE()'}` +
      " AND lower(table_name) = 'clients'",
  );
  if (!cols.some((r) => String(r[0]).toLowerCase() === 'proto')) {
    await db.write([
      `ALTER TABLE Clients ADD proto ${db.driver === 'postgres' ? 'BYTEA' : 'BLOB'}`,
    ]);
  }
}
