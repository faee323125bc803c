// What is kept of a closed connection for /connz?state=closed: a snapshot of plain
// values taken at the close, as the reference's closedClient. Keeping the Client
// itself would pin its socket, parser and output blocks for each of the last 10,000
// closed connections.

import { TLSSocket } from 'node:tls';
import type { Client } from './client.js';

export interface ClosedSubscription {
  readonly subject: string;
  readonly queue: string | null;
  readonly sid: string;
  readonly msgs: number;
  readonly max: number;
}

export interface ClosedClientInfo {
  readonly cid: number;
  readonly ip: string;
  readonly port: number;
  readonly start: Date;
  /** ms since epoch. */
  readonly lastActivity: number;
  readonly stop: Date;
  readonly reason: string;
  /** ms; -1 when never measured. */
  readonly rtt: number;
  /** Output still pending at the close. */
  readonly pendingBytes: number;
  readonly inMsgs: number;
  readonly outMsgs: number;
  readonly inBytes: number;
  readonly outBytes: number;
  readonly name: string;
  readonly lang: string;
  readonly version: string;
  readonly user: string;
  readonly account: string;
  readonly subs: readonly ClosedSubscription[];
  /** The TLS version ("1.3") and cipher suite of a TLS connection, else empty. */
  readonly tlsVersion: string;
  readonly tlsCipher: string;
}

/** A connection's TLS version and cipher suite as the reference names them; empty without TLS. */
export function tlsState(c: Client): { version: string; cipher: string } {
  const socket = c.socket;
  if (!(socket instanceof TLSSocket)) return { version: '', cipher: '' };
  const protocol = socket.getProtocol() ?? '';
  return {
    version: protocol.replace(/^TLSv/, ''),
    cipher: socket.getCipher().standardName,
  };
}

export function snapshotClosed(c: Client): ClosedClientInfo {
  const tls = tlsState(c);
  const subs: ClosedSubscription[] = [];
  for (const s of c.subs.values()) {
    subs.push({ subject: s.subject, queue: s.queue, sid: s.sid, msgs: s.delivered, max: s.max });
  }
  return {
    cid: c.cid,
    ip: c.ip,
    port: c.port,
    start: c.start,
    lastActivity: c.lastActivity,
    stop: c.stop ?? new Date(),
    reason: c.closeReason,
    rtt: c.rtt,
    pendingBytes: c.out.queued + c.socketPending,
    inMsgs: c.inMsgs,
    outMsgs: c.outMsgs,
    inBytes: c.inBytes,
    outBytes: c.outBytes,
    name: c.name,
    lang: c.lang,
    version: c.version,
    user: c.user,
    account: c.account.name,
    subs,
    tlsVersion: tls.version,
    tlsCipher: tls.cipher,
  };
}
