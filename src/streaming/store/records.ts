// The store records in the reference's protobuf forms, shared by the FILE and SQL stores
// (server.dat / ServerInfo.proto, clients.dat / Clients.proto and subs.dat / the
// Subscriptions table's SubState hold the same bytes).
import type Long from 'long';
import { seqFromLong, seqToLong } from '../protocol/int64.js';
import { ClientInfo, ServerInfo, SubState } from '../protocol/index.js';
import type { Mutable } from './sub-store-base.js';
import type { ClientRecord, ServerInfoRecord, SubRecord } from './types.js';

export function encodeServerInfo(info: ServerInfoRecord): Uint8Array {
  return ServerInfo.encode({
    ClusterID: info.clusterID,
    Discovery: info.discovery,
    Publish: info.publish,
    Subscribe: info.subscribe,
    Unsubscribe: info.unsubscribe,
    Close: info.close,
    SubClose: info.subClose,
    AcksSubs: info.acksSubs,
    NodeID: info.nodeID,
  }).finish();
}

/** Throws on bytes that are not a ServerInfo; the caller names the place. */
export function decodeServerInfo(bytes: Uint8Array): ServerInfoRecord {
  const s = ServerInfo.decode(bytes);
  return {
    clusterID: s.ClusterID,
    discovery: s.Discovery,
    publish: s.Publish,
    subscribe: s.Subscribe,
    unsubscribe: s.Unsubscribe,
    close: s.Close,
    subClose: s.SubClose,
    acksSubs: s.AcksSubs,
    nodeID: s.NodeID,
  };
}

export function encodeClient(c: ClientRecord): Uint8Array {
  return ClientInfo.encode({
    ID: c.id,
    HbInbox: c.hbInbox,
    ConnID: c.connID,
    Protocol: c.protocol,
    PingInterval: c.pingInterval,
    PingMaxOut: c.pingMaxOut,
  }).finish();
}

/** Throws on bytes that are not a ClientInfo; the connection ID is copied out of `bytes`. */
export function decodeClient(bytes: Uint8Array): ClientRecord {
  const c = ClientInfo.decode(bytes);
  return {
    id: c.ID,
    hbInbox: c.HbInbox,
    connID: Buffer.from(c.ConnID),
    protocol: c.Protocol,
    pingInterval: c.PingInterval,
    pingMaxOut: c.PingMaxOut,
  };
}

export function encodeSub(r: SubRecord): Uint8Array {
  return SubState.encode({
    ID: seqToLong(r.id),
    clientID: r.clientID,
    qGroup: r.qGroup,
    inbox: r.inbox,
    ackInbox: r.ackInbox,
    maxInFlight: r.maxInFlight,
    ackWaitInSecs: r.ackWaitInSecs,
    durableName: r.durableName,
    lastSent: seqToLong(r.lastSent),
    isDurable: r.isDurable,
    isClosed: r.isClosed,
  }).finish();
}

/** Throws on bytes that are not a SubState. */
export function decodeSub(payload: Uint8Array): Mutable<SubRecord> {
  const s = SubState.decode(payload);
  return {
    id: seq(s.ID),
    clientID: s.clientID,
    qGroup: s.qGroup,
    inbox: s.inbox,
    ackInbox: s.ackInbox,
    maxInFlight: s.maxInFlight,
    ackWaitInSecs: s.ackWaitInSecs,
    durableName: s.durableName,
    lastSent: seq(s.lastSent),
    isDurable: s.isDurable,
    isClosed: s.isClosed,
  };
}

function seq(v: Long | number | null | undefined): number {
  if (v === null || v === undefined) return 0;
  return typeof v === 'number' ? v : seqFromLong(v);
}
