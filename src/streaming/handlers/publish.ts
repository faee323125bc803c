// PubMsg on `<pubPrefix>.<channel>`: validate, store at once (store writes are
// synchronous), and queue the PubAck; the server's end-of-turn batch flushes the
// store, delivers, then sends the PubAcks (server.ts).

import { isChannelNameValid } from '../channel-name.js';
import Long from 'long';
import { writeMsgProtoRange } from '../protocol/msgproto.js';
import { PubMsgView } from '../protocol/wire.js';
import type { Channel } from '../channel.js';
import { encodePubAckError } from '../encode.js';
import { Err, type StreamingServer } from '../server.js';

/** One view for every publish: handlers run one at a time and keep nothing of it. */
const pm = new PubMsgView();

/** The PubMsg is `buf[start, end)`, a read buffer: nothing of it is kept past this call. */
export function handlePublish(
  s: StreamingServer,
  reply: string | null,
  buf: Buffer,
  start: number,
  end: number,
): void {
  const last = s.lastPublished;
  if (!pm.decode(buf, start, end, last !== null ? last.nameBytes : null)) {
    s.queueAck(reply, encodePubAckError('', Err.invalidPubReq));
    return;
  }
  // Counted once decoded, even when refused below (as the reference).
  s.inMsgs++;
  s.inBytes += end - start;
  if (pm.guidEnd === pm.guidStart || !knownClient(s)) {
    s.queueAck(reply, encodePubAckError(pm.guid(), Err.invalidPubReq));
    return;
  }
  if (!s.serving) return;
  let channel: Channel;
  try {
    channel = channelOf(s);
    store(channel);
  } catch (err) {
    s.queueAck(
      reply,
      encodePubAckError(pm.guid(), err instanceof Error ? err.message : String(err)),
    );
    return;
  }
  s.queueAckFrom(channel, reply, pm.buf, pm.guidStart, pm.guidEnd);
}

/**
 * Stores the PubMsg as the channel's next message: marshaled once into the channel's
 * slabs, which is what the store keeps and counts and what first deliveries send.
 */
function store(channel: Channel): void {
  const seq = channel.nextSequence;
  channel.stamp();
  const ts = channel.ts;
  const slabs = channel.slabs;
  const size = writeMsgProtoRange(
    slabs,
    seq,
    ts.low,
    ts.high,
    channel.nameBytes,
    pm.replyEnd > pm.replyStart ? pm.reply() : '',
    pm.buf,
    pm.dataStart,
    pm.dataEnd,
  );
  const msgs = channel.store.msgs;
  const buf = slabs.buf;
  const at = slabs.start;
  if (msgs.storeRange !== undefined) {
    msgs.storeRange(seq, ts.low, ts.high, buf, at, at + size);
  } else {
    msgs.store({
      sequence: seq,
      timestamp: Long.fromBits(ts.low, ts.high),
      encoded: buf.subarray(at, at + size),
    });
  }
  channel.lane.markDirty(channel);
}

/**
 * The publisher is a registered client: by connID when the PubMsg has one, else by
 * client ID. Publishes come in runs from one client, so the last one found is
 * compared first, byte for byte, before any string is made (the server forgets it
 * once it may no longer be registered under that connID).
 */
function knownClient(s: StreamingServer): boolean {
  const last = s.lastPublisher;
  if (pm.hasConnID) {
    if (last !== null && pm.connIDIs(last.connID)) return true;
    const found = s.clientsByConn.get(pm.connKey());
    if (found === undefined) return false;
    s.lastPublisher = found;
    return true;
  }
  return s.clients.get(pm.clientID()) !== undefined;
}

/**
 * The channel named by PubMsg.subject (not the NATS subject's suffix), created on
 * first use; throws with the text for the client. The last one is compared first
 * (the server forgets it once it may no longer be the channel of that name).
 */
function channelOf(s: StreamingServer): Channel {
  const last = s.lastPublished;
  // decode() compared the subject with this channel's name.
  if (last !== null && pm.subjectKnown) return last;
  const name = pm.subject();
  if (!isChannelNameValid(name, false)) throw new Error(Err.invalidPubReq);
  const channel = s.channel(name);
  s.lastPublished = channel;
  return channel;
}
