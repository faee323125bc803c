// PubMsg on `<pubPrefix>.<channel>`: validate, store at once (store writes are
// synchronous), and queue the PubAck; the server's end-of-turn batch flushes the
// store, delivers, then sends the PubAcks (server.ts).

import { isChannelNameValid } from '../channel-name.js';
import { writeMsgProto } from '../protocol/msgproto.js';
import { PubMsgView } from '../protocol/wire.js';
import { Err, type StreamingServer } from '../server.js';
import type { StoredMsg } from '../store/types.js';

/** One view for every publish: handlers run one at a time and keep nothing of it. */
const pm = new PubMsgView();

/** `data` may be a view of a read buffer: nothing of it is kept past this call. */
export function handlePublish(s: StreamingServer, reply: string | null, data: Buffer): void {
  if (!pm.decode(data)) {
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
    pm.connIDEnd > pm.connIDStart ? s.clientsByConn.get(pm.connKey()) : s.clients.get(pm.clientID);
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
      encoded: writeMsgProto(channel.slabs, seq, timestamp, channel.nameBytes, pm.reply, pm.data),
    };
    channel.store.msgs.store(msg);
    s.markDirty(channel);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  s.queueAck(reply, guid, error);
}
