// /connz: open and closed client connections, sorted, filtered and paged as the
// reference does (server/monitor.go Connz). Sort keys are computed for every
// connection, but the JSON only for the requested page.

import { GLOBAL_ACCOUNT } from '../server/account.js';
import type { Client } from '../server/client.js';
import { type ClosedClientInfo, tlsState } from '../server/closed.js';
import type { Server } from '../server/server.js';
import { nowMs, rfc3339, rttString, uptime } from './format.js';
import { json, type MonitorHandler } from './http.js';
import {
  BadRequest,
  type ConnState,
  queryBool,
  queryInt,
  queryState,
  querySubs,
  queryUint64,
} from './query.js';

/** The reference's DefaultConnListSize. */
export const DEFAULT_CONN_LIST_SIZE = 1024;

const SORT_OPTIONS = [
  'cid',
  'start',
  'subs',
  'pending',
  'msgs_to',
  'msgs_from',
  'bytes_to',
  'bytes_from',
  'last',
  'idle',
  'uptime',
  'stop',
  'reason',
] as const;

export type SortOpt = (typeof SORT_OPTIONS)[number];

function isSortOpt(s: string): s is SortOpt {
  return (SORT_OPTIONS as readonly string[]).includes(s);
}

export interface ConnzOptions {
  sort: SortOpt;
  /** `auth`: add authorized_user, and account when it is not $G. */
  auth: boolean;
  subs: boolean;
  subsDetail: boolean;
  offset: number;
  limit: number;
  /** A single connection; 0 for all. */
  cid: number;
  state: ConnState;
  user: string;
  acc: string;
  mqttClient: string;
}

/** Decodes /connz's query in the reference's order, with its error texts. */
export function connzOptions(q: URLSearchParams): ConnzOptions {
  const sortText = q.get('sort') ?? '';
  const auth = queryBool(q, 'auth');
  const { subs, detail } = querySubs(q);
  let offset = queryInt(q, 'offset');
  let limit = queryInt(q, 'limit');
  const cid = queryUint64(q, 'cid');
  const state = queryState(q);
  const sort = sortText === '' ? 'cid' : sortText;
  if (!isSortOpt(sort)) throw new BadRequest(`invalid sorting option: ${sortText}`);
  if (sort === 'stop' && state !== 'closed') {
    throw new BadRequest('sort by stop only valid on closed connections');
  }
  if (sort === 'reason' && state !== 'closed') {
    throw new BadRequest('sort by reason only valid on closed connections');
  }
  if (offset < 0) offset = 0;
  if (limit <= 0) limit = DEFAULT_CONN_LIST_SIZE;
  if (cid > 0) limit = 1;
  return {
    sort,
    auth,
    subs,
    subsDetail: detail,
    offset,
    limit,
    cid,
    state,
    user: q.get('user') ?? '',
    acc: q.get('acc') ?? '',
    mqttClient: q.get('mqtt_client') ?? '',
  };
}

/** One connection's sort keys, and how to write it once it is on the page. */
interface Row {
  readonly cid: number;
  readonly start: number;
  readonly last: number;
  /** ms since epoch; NaN while open. */
  readonly stop: number;
  readonly reason: string;
  readonly subs: number;
  readonly pending: number;
  readonly inMsgs: number;
  readonly outMsgs: number;
  readonly inBytes: number;
  readonly outBytes: number;
  readonly open: Client | null;
  readonly closed: ClosedClientInfo | null;
}

function openRow(c: Client): Row {
  return {
    cid: c.cid,
    start: c.start.getTime(),
    last: c.lastActivity,
    stop: NaN,
    reason: '',
    subs: c.subs.size,
    pending: c.out.queued + c.socketPending,
    inMsgs: c.inMsgs,
    outMsgs: c.outMsgs,
    inBytes: c.inBytes,
    outBytes: c.outBytes,
    open: c,
    closed: null,
  };
}

function closedRow(c: ClosedClientInfo): Row {
  return {
    cid: c.cid,
    start: c.start.getTime(),
    last: c.lastActivity,
    stop: c.stop.getTime(),
    reason: c.reason,
    subs: c.subs.length,
    pending: c.pendingBytes,
    inMsgs: c.inMsgs,
    outMsgs: c.outMsgs,
    inBytes: c.inBytes,
    outBytes: c.outBytes,
    open: null,
    closed: c,
  };
}

type Compare = (a: Row, b: Row) => number;

/** Descending on a numeric key. */
const desc =
  (key: (r: Row) => number): Compare =>
  (a, b) =>
    key(b) - key(a);

function comparator(sort: SortOpt, now: number): Compare {
  const end = (r: Row): number => (Number.isNaN(r.stop) ? now : r.stop);
  switch (sort) {
    case 'cid':
    case 'start':
      return (a, b) => a.cid - b.cid;
    case 'subs':
      return desc((r) => r.subs);
    case 'pending':
      return desc((r) => r.pending);
    case 'msgs_to':
      return desc((r) => r.outMsgs);
    case 'msgs_from':
      return desc((r) => r.inMsgs);
    case 'bytes_to':
      return desc((r) => r.outBytes);
    case 'bytes_from':
      return desc((r) => r.inBytes);
    case 'last':
      return desc((r) => r.last);
    case 'idle':
      // Longest inactivity first (the reference compares last - start instead).
      return desc((r) => end(r) - r.last);
    case 'uptime':
      // Ascending, as the reference.
      return (a, b) => end(a) - a.start - (end(b) - b.start);
    case 'stop':
      return desc((r) => r.stop);
    case 'reason':
      return (a, b) => (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0);
  }
}

interface SubLike {
  readonly subject: string;
  readonly queue: string | null;
  readonly sid: string;
  readonly msgs: number;
  readonly max: number;
}

/** A subscriptions_list_detail entry; `account` only for closed connections, as the reference. */
function subDetail(s: SubLike, cid: number, account: string | null): Record<string, unknown> {
  const d: Record<string, unknown> = {};
  if (account !== null) d.account = account;
  d.subject = s.subject;
  if (s.queue !== null && s.queue !== '') d.qgroup = s.queue;
  d.sid = s.sid;
  d.msgs = s.msgs;
  if (s.max > 0) d.max = s.max;
  d.cid = cid;
  return d;
}

function openSubs(c: Client): SubLike[] {
  const list: SubLike[] = [];
  for (const s of c.subs.values()) {
    list.push({ subject: s.subject, queue: s.queue, sid: s.sid, msgs: s.delivered, max: s.max });
  }
  return list;
}

/** The ConnInfo JSON of one row, fields in the reference's order. */
function connInfo(r: Row, o: ConnzOptions, now: number): Record<string, unknown> {
  const c = r.open ?? r.closed;
  if (c === null) return {};
  const end = Number.isNaN(r.stop) ? now : r.stop;
  const ci: Record<string, unknown> = {
    cid: r.cid,
    kind: 'Client',
    type: 'nats',
    ip: c.ip,
    port: c.port,
    start: rfc3339(r.start),
    last_activity: rfc3339(r.last),
  };
  if (r.closed !== null) {
    ci.stop = rfc3339(r.stop);
    ci.reason = r.reason;
  }
  ci.rtt = rttString(c.rtt);
  ci.uptime = uptime(end - r.start);
  ci.idle = uptime(end - r.last);
  ci.pending_bytes = r.pending;
  ci.in_msgs = r.inMsgs;
  ci.out_msgs = r.outMsgs;
  ci.in_bytes = r.inBytes;
  ci.out_bytes = r.outBytes;
  ci.subscriptions = r.subs;
  if (c.name !== '') ci.name = c.name;
  if (c.lang !== '') ci.lang = c.lang;
  if (c.version !== '') ci.version = c.version;
  const tls = r.open !== null ? tlsState(r.open) : null;
  const tlsVersion = tls !== null ? tls.version : (r.closed?.tlsVersion ?? '');
  if (tlsVersion !== '') {
    ci.tls_version = tlsVersion;
    ci.tls_cipher_suite = tls !== null ? tls.cipher : (r.closed?.tlsCipher ?? '');
  }
  const account = r.open !== null ? r.open.account.name : (r.closed?.account ?? GLOBAL_ACCOUNT);
  if (o.auth) {
    if (c.user !== '') ci.authorized_user = c.user;
    if (account !== GLOBAL_ACCOUNT) ci.account = account;
  }
  const subs = r.open !== null ? openSubs(r.open) : (r.closed?.subs ?? []);
  if (subs.length > 0) {
    if (o.subsDetail) {
      const detailAccount = r.closed !== null ? account : null;
      ci.subscriptions_list_detail = subs.map((s) => subDetail(s, r.cid, detailAccount));
    } else if (o.subs) {
      ci.subscriptions_list = subs.map((s) => s.subject);
    }
  }
  return ci;
}

/** The /connz object for decoded options. */
export function connz(server: Server, o: ConnzOptions): Record<string, unknown> {
  const now = nowMs();
  const accountKnown = o.acc === '' || server.accounts.has(o.acc);
  const inAccount = (name: string): boolean => o.acc === '' || name === o.acc;
  const keep = (user: string): boolean => {
    if (o.user !== '' && user !== o.user) return false;
    // No MQTT yet: no connection has an MQTT client id.
    return o.mqttClient === '';
  };

  let total = 0;
  const rows: Row[] = [];
  if (accountKnown && (o.state === 'open' || o.state === 'any')) {
    for (const c of server.clients.values()) {
      if (c.kind !== 'client' || !inAccount(c.account.name)) continue;
      total++;
      if (o.cid > 0 ? c.cid === o.cid : keep(c.user)) rows.push(openRow(c));
    }
  }
  if (accountKnown && (o.state === 'closed' || o.state === 'any')) {
    for (const c of server.closedClients) {
      if (!inAccount(c.account)) continue;
      total++;
      if (o.cid > 0 ? c.cid === o.cid : keep(c.user)) rows.push(closedRow(c));
    }
  }
  rows.sort(comparator(o.sort, now));
  const page = rows.slice(
    Math.min(o.offset, rows.length),
    Math.min(o.offset + o.limit, rows.length),
  );
  return {
    server_id: server.id,
    now: rfc3339(now),
    num_connections: page.length,
    total,
    offset: o.offset,
    limit: o.limit,
    connections: page.map((r) => connInfo(r, o, now)),
  };
}

export function connzHandler(server: Server): MonitorHandler {
  return (req) => json(connz(server, connzOptions(req.query)), req.query);
}
