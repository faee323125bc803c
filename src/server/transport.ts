// What a client connection needs of its byte stream. A TCP or TLS socket is one as it
// is; a WebSocket connection (src/websocket) is one that frames what it writes and
// unframes what it reads, so the Client, its outbound block and its back-pressure
// (writableLength, 'drain', pausing a held publisher) work the same over both.

import type { ConnectOptions } from '../protocol/connect.js';
import type { Client } from './client.js';

export interface Transport {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
  /** Bytes received from the network (framing included). */
  readonly bytesRead: number;
  /** Bytes handed over but not yet written to the kernel. */
  readonly writableLength: number;
  readonly destroyed: boolean;
  setNoDelay(noDelay?: boolean): unknown;
  /** `done`, when given, is called once the transport no longer needs `data`. */
  write(data: Buffer, done?: (err?: Error | null) => void): boolean;
  cork(): void;
  uncork(): void;
  pause(): unknown;
  resume(): unknown;
  // Two signatures, not one with an optional parameter: net.Socket's end() overloads
  // start with a callback, which one optional `data` parameter would not accept.
  end(): unknown;
  // eslint-disable-next-line @typescript-eslint/unified-signatures
  end(data: Buffer | string): unknown;
  destroy(): unknown;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end' | 'close' | 'drain', listener: () => void): unknown;
  on(event: 'error', listener: (err: NodeJS.ErrnoException) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/** Authentication that replaces the server's for one listener's clients (the websocket block's). */
export interface AuthOverride {
  /** INFO says auth_required, and CONNECT must come within timeoutMs. */
  readonly required: boolean;
  readonly timeoutMs: number;
  authenticate(c: Client, opts: ConnectOptions): boolean | Promise<boolean>;
}

/** A listener other than the client port that hands its connections to the server. */
export interface ClientListener {
  /** The id tag of the reference's log labels: `wid` for WebSocket clients. */
  readonly idTag: string;
  /** Adjusts the INFO a client of this listener gets (auth, connect URLs, no client-port TLS). */
  info(info: Record<string, unknown>): void;
  /** Null: the server's own authentication applies. */
  readonly auth: AuthOverride | null;
}

/** A listener beside the client port (WebSocket): for the ports file and /varz. */
export interface SideListener {
  /** `ws` or `wss`. */
  readonly scheme: string;
  readonly host: string;
  /** The port actually bound. */
  readonly port: number;
  /** host[:port] to announce instead of the listen address; '' for none. */
  readonly advertise: string;
  /** Its /varz section. */
  varz(): Record<string, unknown>;
}
