// What clientsz and channelsz list: the clients and channels a node serves, or, on a
// clustered Follower, the replicated state its store follows. The reference's
// Followers apply every replicated operation to their own server state and answer
// clientsz and channelsz as the Leader does (same clients, subscriptions, pending
// counts, stalled flags); wirebus's Followers keep that state in the store's mirror
// only, so it is read from there.

import type { Channel } from './channel.js';
import type { StreamingServer } from './server.js';
import type { ChannelStore, MsgStore, StoredSub, SubRecord } from './store/types.js';
import type { Sub } from './subscription.js';

export interface Subscriptionz {
  client_id: string;
  inbox: string;
  ack_inbox: string;
  durable_name?: string;
  queue_name?: string;
  is_durable: boolean;
  is_offline: boolean;
  max_inflight: number;
  ack_wait: number;
  last_sent: number;
  pending_count: number;
  is_stalled: boolean;
}

export interface ClientView {
  readonly id: string;
  readonly hbInbox: string;
  readonly subsCount: number;
  /** The client's online subscriptions with their channel names, in subscription order. */
  subscriptions(): [channel: string, sub: Subscriptionz][];
}

export interface ChannelView {
  readonly name: string;
  readonly msgs: MsgStore;
  readonly subsCount: number;
  /** Online, offline durables, queue members and shadows, as the reference lists them. */
  subscriptions(): Subscriptionz[];
}

export interface StreamingView {
  readonly clients: ReadonlyMap<string, ClientView>;
  readonly channels: ReadonlyMap<string, ChannelView>;
}

/** The served state, or a Follower's replicated one. */
export function streamingView(s: StreamingServer): StreamingView {
  return s.cluster !== null && !s.serving ? replicatedView(s) : servedView(s);
}

interface SubFields {
  readonly clientID: string;
  readonly inbox: string;
  readonly ackInbox: string;
  readonly durableName: string;
  readonly queueName: string;
  readonly isDurable: boolean;
  readonly offline: boolean;
  readonly maxInflight: number;
  readonly ackWaitSecs: number;
  readonly lastSent: number;
  readonly pendingCount: number;
  readonly stalled: boolean;
}

/** The reference's field order: durable_name and queue_name after ack_inbox, when set. */
function subscriptionz(f: SubFields): Subscriptionz {
  return {
    client_id: f.clientID,
    inbox: f.inbox,
    ack_inbox: f.ackInbox,
    ...(f.durableName !== '' ? { durable_name: f.durableName } : {}),
    ...(f.queueName !== '' ? { queue_name: f.queueName } : {}),
    is_durable: f.isDurable,
    is_offline: f.offline,
    max_inflight: f.maxInflight,
    ack_wait: f.ackWaitSecs,
    last_sent: f.lastSent,
    pending_count: f.pendingCount,
    is_stalled: f.stalled,
  };
}

/** A served subscription. */
export function servedSubscriptionz(sub: Sub): Subscriptionz {
  return subscriptionz({
    clientID: sub.clientID,
    inbox: sub.inbox,
    ackInbox: sub.ackInbox,
    durableName: sub.durableName,
    queueName: sub.queueName,
    isDurable: sub.isDurable,
    offline: sub.offline,
    maxInflight: sub.maxInflight,
    ackWaitSecs: sub.ackWaitSecs,
    stalled: sub.stalled,
    lastSent: sub.group !== null && sub.group.shadow === sub ? sub.group.lastSent : sub.lastSent,
    pendingCount: sub.pending.size,
  });
}

function servedView(s: StreamingServer): StreamingView {
  const clients = new Map<string, ClientView>();
  for (const [id, c] of s.clients) {
    clients.set(id, {
      id,
      hbInbox: c.hbInbox,
      subsCount: c.subs.length,
      subscriptions: () => c.subs.map((sub) => [sub.channel.name, servedSubscriptionz(sub)]),
    });
  }
  const channels = new Map<string, ChannelView>();
  for (const [name, ch] of s.channels) channels.set(name, servedChannel(ch));
  return { clients, channels };
}

export function servedChannel(ch: Channel): ChannelView {
  return {
    name: ch.name,
    msgs: ch.store.msgs,
    subsCount: ch.subsCount,
    subscriptions: () => ch.allSubs().map(servedSubscriptionz),
  };
}

/** A replicated subscription record, shown as the reference's Followers show it. */
function replicatedSubscriptionz({ record: r, pending }: StoredSub): Subscriptionz {
  return subscriptionz({
    clientID: r.clientID,
    inbox: r.inbox,
    ackInbox: r.ackInbox,
    // As a served Sub: a queue member's durable name is part of its queue name.
    durableName: r.qGroup === '' ? r.durableName : '',
    queueName: r.qGroup,
    isDurable: r.isDurable,
    offline: r.isClosed,
    maxInflight: r.maxInFlight,
    ackWaitSecs: r.ackWaitInSecs,
    lastSent: r.lastSent,
    pendingCount: pending.size,
    stalled: pending.size >= r.maxInFlight,
  });
}

/** A channel's subscriptions in the served order: online ones, offline durables, groups. */
function orderedSubs(ch: ChannelStore): StoredSub[] {
  const online: StoredSub[] = [];
  const offline: StoredSub[] = [];
  const groups = new Map<string, StoredSub[]>();
  for (const sub of ch.subs.all()) {
    const r: SubRecord = sub.record;
    if (r.qGroup !== '') {
      const members = groups.get(r.qGroup);
      if (members === undefined) groups.set(r.qGroup, [sub]);
      else members.push(sub);
    } else if (r.isClosed) offline.push(sub);
    else online.push(sub);
  }
  const out = online.concat(offline);
  // A group's shadow (closed) comes after its members.
  for (const members of groups.values()) {
    for (const m of members) if (!m.record.isClosed) out.push(m);
    for (const m of members) if (m.record.isClosed) out.push(m);
  }
  return out;
}

function replicatedView(s: StreamingServer): StreamingView {
  const channels = new Map<string, ChannelView>();
  const byClient = new Map<string, [string, StoredSub][]>();
  for (const ch of s.store.channels()) {
    const subs = orderedSubs(ch);
    channels.set(ch.name, {
      name: ch.name,
      msgs: ch.msgs,
      subsCount: subs.length,
      subscriptions: () => subs.map(replicatedSubscriptionz),
    });
    for (const sub of subs) {
      if (sub.record.isClosed) continue;
      const list = byClient.get(sub.record.clientID);
      if (list === undefined) byClient.set(sub.record.clientID, [[ch.name, sub]]);
      else list.push([ch.name, sub]);
    }
  }
  const clients = new Map<string, ClientView>();
  for (const c of s.store.clients()) {
    const subs = byClient.get(c.id) ?? [];
    // Subscription order: the IDs are given in creation order.
    subs.sort((a, b) => a[1].record.id - b[1].record.id);
    clients.set(c.id, {
      id: c.id,
      hbInbox: c.hbInbox,
      subsCount: subs.length,
      subscriptions: () => subs.map(([name, sub]) => [name, replicatedSubscriptionz(sub)]),
    });
  }
  return { clients, channels };
}
