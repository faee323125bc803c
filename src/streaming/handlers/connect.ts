// ConnectRequest on the discover subject: validate, handle a duplicate client ID as
// the reference does (ask the old client's heartbeat inbox; replace it if silent,
// refuse if it answers), register, answer with the subjects to use.

import { ConnectRequest, ConnectResponse, type IConnectResponse } from '../protocol/index.js';
import { Err, type StreamingServer } from '../server.js';
import { closeClient } from './unsubscribe.js';

const CLIENT_ID = /^[a-zA-Z0-9_-]+$/;

export function handleConnect(s: StreamingServer, reply: string | null, data: Buffer): void {
  if (reply === null) return;
  let req: ConnectRequest;
  try {
    req = ConnectRequest.decode(data);
  } catch {
    return respondError(s, reply, Err.invalidConnReq);
  }
  if (req.heartbeatInbox === '') return respondError(s, reply, Err.invalidConnReq);
  if (!CLIENT_ID.test(req.clientID)) return respondError(s, reply, Err.invalidClientID);
  const existing = s.clients.get(req.clientID);
  if (existing === undefined) return register(s, reply, req);
  if (s.checkingIds.has(req.clientID)) return respondError(s, reply, Err.clientIDRegistered);
  s.checkingIds.add(req.clientID);
  // Copy what outlives this call: the request's bytes may be a reused read buffer.
  const saved = ConnectRequest.decode(Buffer.from(data));
  void s.bus
    .request(existing.hbInbox, Buffer.alloc(0), s.options.clientCheckTimeout)
    .then((answer) => {
      s.checkingIds.delete(saved.clientID);
      if (!s.serving) return;
      const current = s.clients.get(saved.clientID);
      if (answer !== null && current === existing) {
        s.logger.debug(`STAN: [Client:${saved.clientID}] Connect failed; already connected`);
        return respondError(s, reply, Err.clientIDRegistered);
      }
      if (current !== undefined) {
        s.logger.debug(`STAN: [Client:${saved.clientID}] Replacing old client`);
        closeClient(s, current);
      }
      register(s, reply, saved);
    });
}

function register(s: StreamingServer, reply: string, req: ConnectRequest): void {
  const protocol = req.protocol;
  s.registerClient({
    id: req.clientID,
    hbInbox: req.heartbeatInbox,
    connID: Uint8Array.from(req.connID),
    protocol,
    pingInterval: req.pingInterval,
    pingMaxOut: req.pingMaxOut,
  });
  const info = s.info;
  const res: IConnectResponse = {
    pubPrefix: info.publish,
    subRequests: info.subscribe,
    unsubRequests: info.unsubscribe,
    closeRequests: info.close,
    subCloseRequests: info.subClose,
    protocol: 1,
  };
  if (protocol >= 1) {
    res.pingRequests = s.pingSubject;
    res.pingInterval = req.pingInterval;
    res.pingMaxOut = req.pingMaxOut;
  }
  s.logger.debug(`STAN: [Client:${req.clientID}] Connected (Inbox=${req.heartbeatInbox})`);
  const bytes = ConnectResponse.encode(res).finish();
  const durable = s.store.recordsDurable?.();
  if (durable === undefined) {
    s.bus.publish(reply, null, bytes);
    return;
  }
  // Clustered: answered once the registration survives a failover (never, if the
  // node stopped leading meanwhile: the client asks again or times out).
  const generation = s.generation;
  void durable.then(
    () => {
      if (s.serving && s.generation === generation) s.bus.publish(reply, null, bytes);
    },
    () => undefined,
  );
}

function respondError(s: StreamingServer, reply: string, error: string): void {
  s.bus.publish(reply, null, ConnectResponse.encode({ error }).finish());
}
