// Rebuilds the server's state from what a persistent store recovered: clients (with
// heartbeats restarted), channels, subscriptions with their pending sets. As the
// reference after a restart: a subscription whose client is still registered is
// online again and all its unacked messages are redelivered before new ones; others
// are offline durables or durable queue shadows; non-durable leftovers are dropped.

import { Channel } from './channel.js';
import { QueueGroup } from './queue.js';
import type { StreamingServer } from './server.js';
import type { RecoveredState } from './store/types.js';
import { Sub } from './subscription.js';

export function recoverState(s: StreamingServer, state: RecoveredState): void {
  for (const record of state.clients) s.registerClient(record);
  const resumed: Sub[] = [];
  for (const store of state.channels) {
    const channel = new Channel(s, store);
    s.adoptChannel(channel);
    for (const stored of store.subs.all()) {
      const record = stored.record;
      const sub = new Sub(channel, record, record.durableName);
      for (const seq of stored.pending) sub.restorePending(seq);
      const client = record.isClosed ? undefined : s.clients.get(record.clientID);
      if (record.qGroup !== '') {
        let group = channel.groups.get(record.qGroup);
        if (group === undefined) {
          group = new QueueGroup(record.qGroup, record.isDurable, record.lastSent);
          channel.groups.set(record.qGroup, group);
        }
        if (record.lastSent > group.lastSent) group.lastSent = record.lastSent;
        sub.group = group;
        if (client !== undefined) {
          sub.client = client;
          client.subs.push(sub);
          group.members.push(sub);
          resumed.push(sub);
        } else if (record.isDurable && group.shadow === null) {
          sub.offline = true;
          group.shadow = sub;
        } else {
          store.subs.delete(record.id);
        }
        continue;
      }
      if (client !== undefined) {
        sub.client = client;
        client.subs.push(sub);
        channel.plain.push(sub);
        if (record.isDurable) channel.durables.set(record.clientID + '-' + record.durableName, sub);
        resumed.push(sub);
      } else if (record.isDurable) {
        sub.offline = true;
        channel.durables.set(record.clientID + '-' + record.durableName, sub);
      } else {
        store.subs.delete(record.id);
      }
    }
  }
  // Redelivered once the server is subscribed and serving (after start()).
  setImmediate(() => {
    for (const sub of resumed) {
      if (sub.offline || sub.client === null) continue;
      s.listenAcks(sub);
      s.resumeRecovered(sub);
    }
  });
}
