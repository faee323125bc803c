// UnsubscribeRequest on the unsubscribe and subscription-close subjects, and
// CloseRequest (connection close). What happens to each kind of subscription
// (the reference's table):
//
//   | action              | plain   | durable | queue member | last member | last of durable group |
//   | unsubscribe         | removed | deleted | removed, pending moved | group removed | group deleted |
//   | sub close           | removed | offline | removed, pending moved | group removed | group kept (shadow) |
//   | connection close    | removed | offline | removed, pending moved | group removed | group kept (shadow) |

import { connKey, type StanClient } from '../client.js';
import {
  CloseRequest,
  CloseResponse,
  SubscriptionResponse,
  UnsubscribeRequest,
} from '../protocol/index.js';
import { HANDOVER_DELAY_MS } from '../queue.js';
import { Err, type StreamingServer } from '../server.js';
import type { Sub } from '../subscription.js';

export type RemoveMode = 'unsubscribe' | 'close';

export function handleUnsubscribe(
  s: StreamingServer,
  reply: string | null,
  data: Buffer,
  isClose: boolean,
): void {
  let req: UnsubscribeRequest;
  try {
    req = UnsubscribeRequest.decode(data);
  } catch {
    return respond(s, reply, Err.invalidUnsubReq);
  }
  const channel = s.channels.get(req.subject);
  if (channel === undefined) return respond(s, reply, Err.unknownChannel);
  // By ack inbox first, then by delivery inbox (a client that timed out on its
  // subscribe request sends the inbox it chose).
  let sub = s.ackInboxes.get(req.inbox);
  if (sub?.channel !== channel) {
    sub = undefined;
    for (const candidate of channel.allSubs()) {
      if (!candidate.offline && candidate.inbox === req.inbox) {
        sub = candidate;
        break;
      }
    }
  }
  if (sub === undefined) return respond(s, reply, Err.invalidSub);
  if (sub.clientID !== req.clientID) return respond(s, reply, Err.unknownClient);
  removeSubscription(s, sub, isClose ? 'close' : 'unsubscribe');
  respond(s, reply, '');
}

export function handleClose(s: StreamingServer, reply: string | null, data: Buffer): void {
  let req: CloseRequest;
  try {
    req = CloseRequest.decode(data);
  } catch {
    return closeResponse(s, reply, Err.invalidCloseReq);
  }
  const client = s.clients.get(req.clientID);
  if (client === undefined) return closeResponse(s, reply, Err.unknownClient);
  closeClient(s, client);
  s.logger.debug(`STAN: [Client:${req.clientID}] Closed`);
  closeResponse(s, reply, '');
}

/** Unregisters a client: its subscriptions go as on a connection close. */
export function closeClient(s: StreamingServer, client: StanClient): void {
  if (s.clients.get(client.id) !== client) return;
  client.stopHeartbeats();
  s.clients.delete(client.id);
  if (s.lastPublisher === client) s.lastPublisher = null;
  if (s.clientsByConn.get(connKey(client.connID)) === client) {
    s.clientsByConn.delete(connKey(client.connID));
  }
  s.store.deleteClient(client.id);
  for (const sub of [...client.subs]) removeSubscription(s, sub, 'close');
}

export function removeSubscription(s: StreamingServer, sub: Sub, mode: RemoveMode): void {
  const channel = sub.channel;
  sub.client?.removeSub(sub);
  sub.client = null;
  s.stopAcks(sub);
  sub.stopTimer();
  if (sub.group !== null) {
    leaveGroup(s, sub, mode);
    return;
  }
  const i = channel.plain.indexOf(sub);
  if (i >= 0) channel.plain.splice(i, 1);
  if (sub.isDurable && mode === 'close') {
    // Offline: keeps its position and unacked messages; client_id stays for monitoring.
    sub.offline = true;
    sub.stalled = false;
    safely(s, () => {
      channel.store.subs.update(sub.record());
    });
    return;
  }
  if (sub.isDurable) channel.durables.delete(sub.clientID + '-' + sub.durable);
  safely(s, () => {
    channel.store.subs.delete(sub.id);
  });
}

function leaveGroup(s: StreamingServer, sub: Sub, mode: RemoveMode): void {
  const group = sub.group!;
  const channel = sub.channel;
  group.remove(sub);
  const members = group.members;
  if (members.length > 0) {
    // The others take its unacked messages, redelivered shortly (round-robin); each
    // member's last_sent becomes the highest sequence it took.
    const seqs = sub.pendingSorted();
    sub.clearPending();
    // The group's last sent sequence is kept by its members' records: when the one
    // leaving holds it and it goes nowhere with the pending ones, another member's
    // record takes it (as the reference does), or a restart would send it again.
    const carry = sub.lastSent === group.lastSent && !seqs.includes(group.lastSent);
    const now = Date.now();
    for (let i = 0; i < seqs.length; i++) {
      members[i % members.length]!.adopt(seqs[i]!, now + HANDOVER_DELAY_MS, now);
    }
    safely(s, () => {
      channel.store.subs.delete(sub.id);
    });
    if (carry) {
      const heir = members[0]!;
      heir.lastSent = group.lastSent;
      safely(s, () => {
        channel.store.subs.update(heir.record());
      });
    }
    return;
  }
  if (group.isDurable && mode === 'close') {
    sub.offline = true;
    sub.stalled = false;
    sub.lastSent = group.lastSent;
    group.shadow = sub;
    // Stored without its client, as the reference stores a shadow: the reference
    // drops a durable queue subscription whose client is gone as a ghost otherwise.
    safely(s, () => {
      channel.store.subs.update({ ...sub.record(), clientID: '' });
    });
    return;
  }
  channel.groups.delete(group.name);
  safely(s, () => {
    channel.store.subs.delete(sub.id);
  });
}

/** Store errors here (a closed store at shutdown) must not stop the cleanup. */
function safely(s: StreamingServer, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    s.logger.error(`STAN: Error updating the store: ${String(err)}`);
  }
}

function respond(s: StreamingServer, reply: string | null, error: string): void {
  if (reply === null) return;
  const bytes = error === '' ? new Uint8Array(0) : SubscriptionResponse.encode({ error }).finish();
  s.bus.publish(reply, null, bytes);
}

function closeResponse(s: StreamingServer, reply: string | null, error: string): void {
  if (reply === null) return;
  const bytes = error === '' ? new Uint8Array(0) : CloseResponse.encode({ error }).finish();
  s.bus.publish(reply, null, bytes);
}
