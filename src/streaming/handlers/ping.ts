// Ping (protocol 1) on `<discover>.pings`: an empty reply while the connection is
// registered, else the "replaced" error, which makes the client close itself. An
// empty payload is ignored.

import { connKey } from '../client.js';
import { EMPTY } from '../bus.js';
import { Ping, PingResponse } from '../protocol/index.js';
import { Err, type StreamingServer } from '../server.js';

export function handlePing(s: StreamingServer, reply: string | null, data: Buffer): void {
  if (reply === null || data.length === 0) return;
  let ping: Ping;
  try {
    ping = Ping.decode(data);
  } catch {
    return;
  }
  const client = s.clientsByConn.get(connKey(ping.connID));
  if (client === undefined) {
    s.bus.publish(reply, null, PingResponse.encode({ error: Err.clientReplaced }).finish());
    return;
  }
  s.bus.publish(reply, null, EMPTY);
  client.pingReceived(s.bus, s.hbSettings, s.onClientDead);
}
