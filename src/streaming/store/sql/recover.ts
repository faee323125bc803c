// Loads what a SQL store holds at start: server info, clients, channels with their
// message index (sequence, timestamp and size of every stored message: the bodies
// stay in the database), subscriptions with their pending sequences.
import Long from 'long';
import type pg from 'pg';
import type { ClientRecord, ServerInfoRecord } from '../types.js';
import type { SqlChannel } from './channel.js';

/** Blocks read per query: bounded memory whatever a channel holds. */
const PAGE = 1000;

export interface SqlRecovered {
  readonly info: ServerInfoRecord | undefined;
  readonly clients: ClientRecord[];
  readonly channels: SqlChannel[];
  readonly maxChannelId: number;
}

interface ChannelRow {
  id: number;
  name: string;
  first_seq: string;
  last_seq: string;
  max_sub_id: string;
}

interface SubRow {
  channel_id: number;
  id: string;
  client_id: string;
  q_group: string;
  inbox: string;
  ack_inbox: string;
  max_in_flight: number;
  ack_wait: number;
  durable_name: string;
  last_sent: string;
  is_durable: boolean;
  is_closed: boolean;
}

export async function recoverSql(
  pool: pg.Pool,
  makeChannel: (id: number, name: string) => SqlChannel,
): Promise<SqlRecovered> {
  const infoRes = await pool.query<{ info: ServerInfoRecord }>(
    'SELECT info FROM wb_server WHERE id = 1',
  );
  const info = infoRes.rows[0]?.info;
  const clientRes = await pool.query<{
    id: string;
    hb_inbox: string;
    conn_id: Buffer;
    protocol: number;
    ping_interval: number;
    ping_max_out: number;
  }>('SELECT * FROM wb_clients ORDER BY id');
  const clients: ClientRecord[] = clientRes.rows.map((r) => ({
    id: r.id,
    hbInbox: r.hb_inbox,
    connID: r.conn_id,
    protocol: r.protocol,
    pingInterval: r.ping_interval,
    pingMaxOut: r.ping_max_out,
  }));
  const chRes = await pool.query<ChannelRow>('SELECT * FROM wb_channels ORDER BY id');
  const channels: SqlChannel[] = [];
  const byId = new Map<number, SqlChannel>();
  let maxChannelId = 0;
  for (const row of chRes.rows) {
    const ch = makeChannel(row.id, row.name);
    await loadIndex(pool, ch, Number(row.first_seq));
    ch.msgs.restoreSequences(Number(row.first_seq), Number(row.last_seq));
    ch.subs.restoreMaxId(Number(row.max_sub_id));
    channels.push(ch);
    byId.set(row.id, ch);
    if (row.id > maxChannelId) maxChannelId = row.id;
  }
  const pendingRes = await pool.query<{ channel_id: number; sub_id: string; seq: string }>(
    'SELECT channel_id, sub_id, seq FROM wb_pending ORDER BY channel_id, sub_id, seq',
  );
  const pending = new Map<string, number[]>();
  for (const p of pendingRes.rows) {
    const key = `${p.channel_id}/${p.sub_id}`;
    let list = pending.get(key);
    if (list === undefined) pending.set(key, (list = []));
    list.push(Number(p.seq));
  }
  const subRes = await pool.query<SubRow>('SELECT * FROM wb_subs ORDER BY channel_id, id');
  for (const r of subRes.rows) {
    const ch = byId.get(r.channel_id);
    if (ch === undefined) continue;
    ch.subs.restore(
      {
        id: Number(r.id),
        clientID: r.client_id,
        qGroup: r.q_group,
        inbox: r.inbox,
        ackInbox: r.ack_inbox,
        maxInFlight: r.max_in_flight,
        ackWaitInSecs: r.ack_wait,
        durableName: r.durable_name,
        lastSent: Number(r.last_sent),
        isDurable: r.is_durable,
        isClosed: r.is_closed,
      },
      pending.get(`${r.channel_id}/${r.id}`) ?? [],
    );
  }
  return { info, clients, channels, maxChannelId };
}

// Keyset pages over the primary key: the blocks' sizes and timestamps, never their
// data. Messages before the channel's first_seq (in a block partly dropped) are not
// stored any more.
async function loadIndex(pool: pg.Pool, ch: SqlChannel, firstSeq: number): Promise<void> {
  let after = firstSeq - 1;
  for (;;) {
    const res = await pool.query<[string, string, string[], number[]]>({
      text:
        'SELECT first_seq, last_seq, ts, sizes FROM wb_msg_blocks' +
        ' WHERE channel_id = $1 AND last_seq > $2 ORDER BY last_seq LIMIT $3',
      values: [ch.id, after, PAGE],
      rowMode: 'array',
    });
    for (const [first, , stamps, sizes] of res.rows) {
      const base = Number(first);
      for (let i = 0; i < sizes.length; i++) {
        const seq = base + i;
        if (seq >= firstSeq) ch.msgs.restoreEntry(seq, sizes[i]!, Long.fromString(stamps[i]!));
      }
    }
    if (res.rows.length < PAGE) return;
    after = Number(res.rows[res.rows.length - 1]![1]);
  }
}
