// The /streaming monitoring endpoints, on the core monitor's HTTP listener, with the
// reference's shapes: field names and order, omitted-when-empty fields, paging
// (offset/limit parsed leniently, as Go's Atoi with errors ignored), 404 texts, and
// 204 from isFTActive while there is no fault tolerance.

import { readdirSync, readFileSync } from 'node:fs';
import { nowMs, rfc3339, uptime } from '../monitor/format.js';
import { json, type MonitorHandler, type MonitorResponse } from '../monitor/http.js';
import type { Channel } from './channel.js';
import {
  servedChannel,
  streamingView,
  type ChannelView,
  type ClientView,
  type Subscriptionz,
} from './monitor-view.js';
import type { StreamingServer } from './server.js';
import { STREAMING_VERSION } from './server.js';
import { storezLimits } from './store/limits-json.js';

/** What the streaming endpoints need from the monitor: monitor.register(). */
export interface MonitorRegistry {
  register(path: string, handler: MonitorHandler): void;
}

const DEFAULT_LIMIT = 1024;

export interface Clientz {
  id: string;
  hb_inbox: string;
  subs_count: number;
  subscriptions?: Record<string, Subscriptionz[]>;
}

export interface Channelz {
  name: string;
  msgs: number;
  bytes: number;
  first_seq: number;
  last_seq: number;
  subs_count: number;
  subscriptions?: Subscriptionz[];
}

/** The index page at /streaming, as the reference serves it. */
const INDEX_HTML = `<html lang="en">
   <head>
    <link rel="shortcut icon" href="https://nats.io/img/favicon.ico">
    <style type="text/css">
      body { font-family: "Century Gothic", CenturyGothic, AppleGothic, sans-serif; font-size: 22; }
      a { margin-left: 32px; }
    </style>
  </head>
  <body>
    <img src="https://nats.io/img/logo.png" alt="NATS Streaming">
    <br/>
\t<a href=./streaming/serverz>server</a><br/>
\t<a href=./streaming/storez>store</a><br/>
\t<a href=./streaming/clientsz>clients</a><br/>
\t<a href=./streaming/channelsz>channels</a><br/>
    <br/>
    <a href=https://docs.nats.io/legacy/stan/intro/monitoring/>help</a>
  </body>
</html>`;

/** Registers every /streaming endpoint. */
export function registerStreamingEndpoints(m: MonitorRegistry, s: StreamingServer): void {
  m.register('/streaming', () => ({
    status: 200,
    contentType: 'text/html; charset=utf-8',
    body: INDEX_HTML,
  }));
  m.register('/streaming/serverz', (req) => json(serverz(s), req.query));
  m.register('/streaming/storez', (req) => json(storez(s), req.query));
  m.register('/streaming/clientsz', (req) => clientsz(s, req.query));
  m.register('/streaming/channelsz', (req) => channelsz(s, req.query));
  // 200 only for the active server of a fault-tolerance group (load-balancer check).
  m.register('/streaming/isFTActive', () =>
    s.state === 'FT_ACTIVE'
      ? { status: 200, contentType: '', body: '' }
      : { status: 204, contentType: '', body: '' },
  );
}

/** Go's strconv.Atoi with the error ignored: 0 for anything that is not an integer. */
function atoi(q: URLSearchParams, name: string): number {
  const v = q.get(name) ?? '';
  if (!/^[+-]?[0-9]+$/.test(v)) return 0;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : 0;
}

function paging(q: URLSearchParams): { offset: number; limit: number } {
  let offset = atoi(q, 'offset');
  if (offset < 0) offset = 0;
  let limit = atoi(q, 'limit');
  if (limit <= 0) limit = DEFAULT_LIMIT;
  return { offset, limit };
}

/** `subs=1` (Atoi equal to 1; `subs=true` is 0, as the reference). */
function wantSubs(q: URLSearchParams): boolean {
  return atoi(q, 'subs') === 1;
}

/** Byte-wise order of the UTF-8 forms, as Go's sort.Strings. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function page<T>(items: T[], offset: number, limit: number): T[] {
  const start = Math.min(offset, items.length);
  const end = Math.min(offset + limit, items.length);
  return items.slice(start, end);
}

function notFoundText(text: string): MonitorResponse {
  return {
    status: 404,
    contentType: 'text/plain; charset=utf-8',
    body: text + '\n',
    headers: { 'X-Content-Type-Options': 'nosniff' },
  };
}

function head(s: StreamingServer): { cluster_id: string; server_id: string; now: string } {
  return { cluster_id: shownClusterId(s), server_id: s.serverId, now: rfc3339(nowMs()) };
}

/** A standby has not read the store yet: the reference shows an empty cluster ID. */
function shownClusterId(s: StreamingServer): string {
  return s.state === 'FT_STANDBY' ? '' : s.clusterId;
}

/** Clients, subscriptions and channels: served, or (a clustered Follower) replicated. */
function counts(s: StreamingServer): { clients: number; subscriptions: number; channels: number } {
  if (s.cluster !== null && !s.serving) {
    // As the reference's Followers: what the replicated state holds.
    let clients = 0;
    for (const _ of s.store.clients()) clients++;
    let subscriptions = 0;
    for (const ch of s.store.channels()) subscriptions += ch.subs.count;
    return { clients, subscriptions, channels: s.store.channelCount };
  }
  let subscriptions = 0;
  for (const ch of s.channels.values()) subscriptions += ch.subsCount;
  return { clients: s.clients.size, subscriptions, channels: s.channels.size };
}

export function serverz(s: StreamingServer): Record<string, unknown> {
  const { clients, subscriptions, channels } = counts(s);
  const totals = s.store.totals();
  const now = nowMs();
  const out: Record<string, unknown> = {
    cluster_id: shownClusterId(s),
    server_id: s.serverId,
    version: STREAMING_VERSION,
    go: process.version,
    state: s.state,
    // Clustered: the raft role and node ID, as the reference (omitted otherwise).
    ...(s.cluster !== null ? { role: s.cluster.role, node_id: s.cluster.nodeId } : {}),
    now: rfc3339(now),
    start_time: rfc3339(s.startTime.getTime()),
    uptime: uptime(now - s.startTime.getTime()),
    clients,
    subscriptions,
    channels,
    total_msgs: totals.msgs,
    total_bytes: totals.bytes,
    in_msgs: s.inMsgs,
    in_bytes: s.inBytes,
    out_msgs: s.outMsgs,
    out_bytes: s.outBytes,
  };
  const fds = fdCounts();
  if (fds.open > 0) out.open_fds = fds.open;
  if (fds.max > 0) out.max_fds = fds.max;
  return out;
}

/** Open descriptors and their soft limit from procfs; 0 where procfs is missing. */
function fdCounts(): { open: number; max: number } {
  let open = 0;
  let max = 0;
  try {
    open = readdirSync('/proc/self/fd').length;
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m !== null) max = Number(m[1]);
  } catch {
    // Not Linux: the fields are omitted, as the reference does.
  }
  return { open, max };
}

export function storez(s: StreamingServer): Record<string, unknown> {
  const totals = s.store.totals();
  return {
    ...head(s),
    type: s.store.type,
    limits: storezLimits(s.store.limits),
    total_msgs: totals.msgs,
    total_bytes: totals.bytes,
  };
}

function clientz(c: ClientView, subs: boolean): Clientz {
  const out: Clientz = { id: c.id, hb_inbox: c.hbInbox, subs_count: c.subsCount };
  if (subs && c.subsCount > 0) {
    const byChannel = new Map<string, Subscriptionz[]>();
    for (const [name, z] of c.subscriptions()) {
      const list = byChannel.get(name);
      if (list === undefined) byChannel.set(name, [z]);
      else list.push(z);
    }
    // Go marshals a map with its keys sorted.
    const sorted: Record<string, Subscriptionz[]> = {};
    for (const name of [...byChannel.keys()].sort(byteOrder)) sorted[name] = byChannel.get(name)!;
    out.subscriptions = sorted;
  }
  return out;
}

function channelzOf(ch: ChannelView, subs: boolean): Channelz {
  const msgs = ch.msgs;
  const out: Channelz = {
    name: ch.name,
    msgs: msgs.count,
    bytes: msgs.bytes,
    first_seq: msgs.firstSequence,
    last_seq: msgs.lastSequence,
    subs_count: ch.subsCount,
  };
  if (subs) {
    const all = ch.subscriptions();
    if (all.length > 0) out.subscriptions = all;
  }
  return out;
}

export function channelz(ch: Channel, subs: boolean): Channelz {
  return channelzOf(servedChannel(ch), subs);
}

function clientsz(s: StreamingServer, q: URLSearchParams): MonitorResponse {
  const subs = wantSubs(q);
  const id = q.get('client') ?? '';
  const view = streamingView(s).clients;
  if (id !== '') {
    const c = view.get(id);
    if (c === undefined) return notFoundText(`Client ${id} not found`);
    return json(clientz(c, subs), q);
  }
  const { offset, limit } = paging(q);
  const ids = [...view.keys()].sort(byteOrder);
  const clients = page(ids, offset, limit).map((cid) => clientz(view.get(cid)!, subs));
  return json({ ...head(s), offset, limit, count: clients.length, total: ids.length, clients }, q);
}

function channelsz(s: StreamingServer, q: URLSearchParams): MonitorResponse {
  const subs = wantSubs(q);
  const name = q.get('channel') ?? '';
  const view = streamingView(s).channels;
  if (name !== '') {
    const ch = view.get(name);
    if (ch === undefined) return notFoundText(`Channel ${name} not found`);
    return json(channelzOf(ch, subs), q);
  }
  const { offset, limit } = paging(q);
  const names = [...view.keys()].sort(byteOrder);
  const selected = page(names, offset, limit);
  const out: Record<string, unknown> = {
    ...head(s),
    offset,
    limit,
    count: selected.length,
    total: names.length,
  };
  // Both keys are omitempty: an empty page has neither.
  if (selected.length > 0) {
    if (subs) out.channels = selected.map((n) => channelzOf(view.get(n)!, true));
    else out.names = selected;
  }
  return json(out, q);
}
