// INFO sent after the first one, as the reference's sendAsyncInfoToClients: only to
// clients that announced `protocol: 1` in CONNECT and whose first PING was answered
// (firstPongSent); a client not yet that far gets an up-to-date INFO right after its
// first PONG instead (see Server.afterFirstPong).

import type { Client } from './client.js';
import type { Server } from './server.js';

/** Whether c takes an INFO at any time. */
export function takesAsyncInfo(c: Client): boolean {
  return c.kind === 'client' && !c.closed && c.protocol >= 1 && c.firstPongSent;
}

/** Sends the current INFO (with `"ldm":true` in lame duck mode) to every eligible client. */
export function sendAsyncInfo(server: Server, extra: { ldm?: boolean } = {}): number {
  let sent = 0;
  for (const c of server.clients.values()) {
    if (!takesAsyncInfo(c)) continue;
    c.send(server.infoFor(c, extra));
    sent++;
  }
  return sent;
}

/**
 * Right after a client's first PONG: the reference queues a fresh INFO when what it
 * announced at connect time went stale since (here: max_payload changed by a reload).
 */
export function infoAfterFirstPong(server: Server, c: Client): void {
  if (c.kind !== 'client' || c.protocol < 1) return;
  if (server.maxPayloadChangedAt >= c.start.getTime()) c.send(server.infoFor(c));
}
