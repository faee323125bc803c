// PubMsg on `<pubPrefix>.<channel>`: validate, store at once (store writes are
// synchronous), and queue the PubAck; the server's end-of-turn batch flushes the
// store, delivers, then sends the PubAcks (server.ts).

import { connKey } from '../client.js';
import { isChannelNameValid } from '../channel-name.js';
import { PubMsg } from '../protocol/index.js';
import { encodeMsgProto } from '../protocol/msgproto.js';
import { Err, type StreamingServer } from '../server.js';
import type { StoredMsg } from '../store/types.js';

export function handlePublish(s: StreamingServer, reply: string | null, data: Buffer): void {
  let pm: PubMsg;
  try {
    pm = PubMsg.decode(data);
  } catch {
    s.queueAck(reply, '', Err.invalidPubReq);
    return;
  }
  // Counted once decoded, even when refused below (as the reference).
  s.inMsgs++;
  s.inBytes += data.length;
  const guid = pm.guid;
  // The channel is PubMsg.subject, not the NATS subject's suffix.
  const name = pm.subject;
  if (guid === '' || !isChannelNameValid(name, false)) {
    s.queueAck(reply, guid, Err.invalidPubReq);
    return;
  }
  const known =
    pm.connID.length > 0 ? s.clientsByConn.get(connKey(pm.connID)) : s.clients.get(pm.clientID);
  if (known === undefined) {
    s.queueAck(reply, guid, Err.invalidPubReq);
    return;
  }
  if (!s.serving) return;
  let error = '';
  try {
    const channel = s.channel(name);
    const seq = channel.nextSequence;
    const timestamp = channel.timestamp();
    // Marshaled once: what the store keeps and counts, and what first deliveries send.
    const msg: StoredMsg = {
      sequence: seq,
      timestamp,
      encoded: encodeMsgProto(seq, timestamp, name, pm.reply, pm.data),
    };
    channel.store.msgs.store(msg);
    s.markDirty(channel);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  s.queueAck(reply, guid, error);
}
