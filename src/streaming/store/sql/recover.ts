// Loads what a SQL store holds at start, read as the reference reads it
// (SQLStore.Recover): the ServerInfo row, the clients, the channels not marked
// deleted with the index of their messages (sequence, timestamp and size of each:
// the bodies stay in the database), the subscriptions not marked deleted with their
// pending sequences, the store-wide highest channel and subscription IDs.
import Long from 'long';
import { decodeClient, decodeServerInfo, decodeSub } from '../records.js';
import type { ClientRecord, ServerInfoRecord } from '../types.js';
import type { SqlChannel } from './channel.js';
import type { Row, SqlDb } from './db.js';
import { buf, decodeSeqs, num, str } from './literal.js';
import { SCHEMA_VERSION } from './schema.js';
import type { RecoveredPending } from './subs.js';

/** Messages read per query: bounded memory whatever a channel holds. */
const PAGE = 10000;

export interface SqlRecovered {
  readonly info: ServerInfoRecord | undefined;
  readonly clients: ClientRecord[];
  readonly channels: SqlChannel[];
  readonly maxChannelId: number;
  readonly maxSubId: number;
}

export async function recoverSql(
  db: SqlDb,
  makeChannel: (id: number, name: string) => SqlChannel,
): Promise<SqlRecovered> {
  const [maxCh] = await db.read('SELECT COALESCE(MAX(id), 0) FROM Channels');
  const maxChannelId = num(maxCh?.[0]);
  const [infoRow] = await db.read('SELECT id, proto, version FROM ServerInfo WHERE uniquerow = 1');
  // The reference refuses channels without a ServerInfo row (a store used without
  // Init, as embedding programs and tests do): here they are served, and the server
  // writes its info as on a first start.
  const info = infoRow === undefined ? undefined : serverInfo(infoRow);
  const clients: ClientRecord[] = (await db.read('SELECT id, hbinbox, proto FROM Clients')).map(
    (r) => {
      const proto = buf(r[2]);
      if (proto.length === 0) {
        // Written before 0.10.0: the ID and inbox only.
        return {
          id: str(r[0]),
          hbInbox: str(r[1]),
          connID: new Uint8Array(0),
          protocol: 0,
          pingInterval: 0,
          pingMaxOut: 0,
        };
      }
      return decodeClient(proto);
    },
  );
  const [maxSub] = await db.read('SELECT COALESCE(MAX(subid), 0) FROM Subscriptions');
  const maxSubId = num(maxSub?.[0]);
  const channels: SqlChannel[] = [];
  for (const row of await db.read(
    'SELECT id, name, maxseq FROM Channels WHERE deleted = FALSE ORDER BY id',
  )) {
    const id = num(row[0]);
    const ch = makeChannel(id, str(row[1]));
    const storedMaxSeq = num(row[2]);
    await loadIndex(db, ch);
    let maxSeq = storedMaxSeq;
    maxSeq = Math.max(maxSeq, await recoverSubs(db, ch));
    ch.msgs.restoreSequences(maxSeq, storedMaxSeq);
    channels.push(ch);
  }
  return { info, clients, channels, maxChannelId, maxSubId };
}

function serverInfo(row: Row): ServerInfoRecord {
  const version = num(row[2]);
  if (version !== SCHEMA_VERSION) {
    throw new Error(`sql: unsupported version: ${version} (supports [1..${SCHEMA_VERSION}])`);
  }
  const decoded = decodeServerInfo(buf(row[1]));
  const clusterId = str(row[0]);
  if (decoded.clusterID !== clusterId) {
    throw new Error(
      `sql: id "${clusterId}" in column does not match cluster ID in data "${decoded.clusterID}"`,
    );
  }
  return decoded;
}

// Keyset pages over the primary key: sequence, timestamp and size, never the data.
async function loadIndex(db: SqlDb, ch: SqlChannel): Promise<void> {
  let after = 0;
  for (;;) {
    const rows = await db.read(
      `SELECT seq, timestamp, size FROM Messages WHERE id = ${ch.id} AND seq > ${after}` +
        ` ORDER BY seq LIMIT ${PAGE}`,
    );
    for (const r of rows) {
      ch.msgs.restoreEntry(num(r[0]), num(r[2]), Long.fromString(String(r[1])));
    }
    if (rows.length < PAGE) return;
    after = num(rows[rows.length - 1]![0]);
  }
}

/** Restores the channel's subscriptions; returns the highest lastSent among them. */
async function recoverSubs(db: SqlDb, ch: SqlChannel): Promise<number> {
  let maxSeq = 0;
  const r = db.dialect.rowColumn;
  const subs = await db.read(
    `SELECT subid, lastsent, proto, deleted FROM Subscriptions WHERE id = ${ch.id} ORDER BY subid`,
  );
  for (const s of subs) {
    const lastSentCol = num(s[1]);
    const deleted = s[3] === true || num(s[3]) === 1;
    if (deleted) {
      ch.subs.restoreMarked();
      continue;
    }
    const protoBytes = buf(s[2]);
    if (s[2] === null || s[2] === undefined) {
      maxSeq = Math.max(maxSeq, lastSentCol);
      continue;
    }
    const st = decodeSub(protoBytes);
    let lastSent = Math.max(lastSentCol, st.lastSent);
    const rows: Row[] = await db.read(
      `SELECT ${r}, seq, lastsent, pending, acks FROM SubsPending WHERE subid = ${num(s[0])}` +
        ` ORDER BY ${r}`,
    );
    const pending = new Set<number>();
    const where = new Map<number, number | null>();
    let rewrite = false;
    let maxRow = 0;
    for (const p of rows) {
      const rowId = num(p[0]);
      const seq = num(p[1]);
      maxRow = Math.max(maxRow, rowId);
      if (seq > 0) {
        if (pending.has(seq)) rewrite = true;
        pending.add(seq);
        where.set(seq, null);
        lastSent = Math.max(lastSent, seq);
        continue;
      }
      lastSent = Math.max(lastSent, num(p[2]));
      for (const q of decodeSeqs(p[3])) {
        if (pending.has(q)) rewrite = true;
        pending.add(q);
        where.set(q, rowId);
      }
      const acks = decodeSeqs(p[4]);
      if (acks.length > 0) rewrite = true;
      for (const q of acks) pending.delete(q);
    }
    const rec: RecoveredPending = { pending, rows: where, rewrite };
    ch.subs.restore({ ...st, id: num(s[0]), lastSent }, rec, maxRow);
    maxSeq = Math.max(maxSeq, lastSent);
  }
  return maxSeq;
}
