// The store records in the reference's protobuf forms, shared by the FILE and SQL stores
// (server.dat / ServerInfo.proto and clients.dat / Clients.proto hold the same bytes).
import { ClientInfo, ServerInfo } from '../protocol/index.js';
import type { ClientRecord, ServerInfoRecord } from './types.js';

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
