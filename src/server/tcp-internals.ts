// Node's own TCP handles, the layer under net.Socket, for plain client connections.
//
// A net.Socket is a stream: its accept builds a Socket, a Readable and a Writable
// state, async-hook ids and a dozen closures; every write goes through the stream's
// buffering and every close through its end and destroy steps, each a process.nextTick.
// In a connection storm that machinery cost more than everything wirebus does for a
// handshake, and more than nats-server spends per connection (bench/RESULTS.md, "The
// connection storm at the handle"). The handle underneath is what Node's net.js itself
// drives: readStart/readStop into a buffer of ours, writeBuffer/writev (which try a
// synchronous write first, so the common write allocates nothing), shutdown and close.
//
// These are Node's internals (lib/net.js, lib/internal/stream_base_commons.js), reached
// through process.binding('stream_wrap'), which Node 20 still allows. Everything is
// checked once; when anything is missing (another Node, --pending-deprecation, or
// WIREBUS_NET_SOCKETS=1 in the environment) connections use net.Socket as before.

import type { Server as NetServer } from 'node:net';
import { getSystemErrorMap } from 'node:util';

/** The request object a write or shutdown hands to the handle; libuv keeps it until done. */
export interface StreamRequest {
  oncomplete: (this: StreamRequest, status: number) => void;
}

/** An accepted TCP connection's handle (Node's TCPWrap), as lib/net.js uses it. */
export interface TcpHandle {
  /** Called with the handle as `this` after each read; the result is in streamBaseState. */
  onread: ((this: TcpHandle) => void) | null;
  useUserBuffer(buffer: Uint8Array): void;
  readStart(): number;
  readStop(): number;
  /** 0, or a negative libuv error code; streamBaseState says whether it completed. */
  writeBuffer(req: StreamRequest, data: Uint8Array): number;
  writev(req: StreamRequest, chunks: Uint8Array[], allBuffers: boolean): number;
  /** 0 (pending), 1 (done at once), or a negative libuv error code. */
  shutdown(req: StreamRequest): number;
  /** The callback runs with the handle as `this` once libuv has closed it. */
  close(callback: (this: TcpHandle) => void): void;
  setNoDelay(on: boolean): number;
  getpeername(out: { address?: string | undefined; port?: number | undefined }): number;
}

export interface TcpInternals {
  newWriteRequest(): StreamRequest;
  newShutdownRequest(): StreamRequest;
  /** Node's shared Int32Array of the last read's and write's results. */
  readonly state: Int32Array;
  readonly readBytesOrError: number;
  readonly lastWriteWasAsync: number;
  /** libuv's end-of-stream and not-connected codes. */
  readonly eof: number;
  readonly notConnected: number;
}

let internals: TcpInternals | null | undefined;

/** Node's stream binding, or null when connections must use net.Socket. */
export function tcpInternals(): TcpInternals | null {
  if (internals === undefined) internals = findInternals();
  return internals;
}

function findInternals(): TcpInternals | null {
  if (process.env.WIREBUS_NET_SOCKETS === '1') return null;
  const binding = (process as unknown as { binding?: unknown }).binding;
  // Under --pending-deprecation Node wraps process.binding to print a warning.
  if (typeof binding !== 'function' || binding.name !== 'binding') return null;
  let sw: Record<string, unknown>;
  try {
    sw = (binding as (name: string) => Record<string, unknown>)('stream_wrap');
  } catch {
    return null;
  }
  const { WriteWrap, ShutdownWrap, streamBaseState, kReadBytesOrError, kLastWriteWasAsync } = sw;
  if (
    typeof WriteWrap !== 'function' ||
    typeof ShutdownWrap !== 'function' ||
    !(streamBaseState instanceof Int32Array) ||
    typeof kReadBytesOrError !== 'number' ||
    typeof kLastWriteWasAsync !== 'number'
  ) {
    return null;
  }
  let eof = 0;
  let notConnected = 0;
  for (const [code, [name]] of getSystemErrorMap()) {
    if (name === 'EOF') eof = code;
    else if (name === 'ENOTCONN') notConnected = code;
  }
  if (eof === 0 || notConnected === 0) return null;
  const Write = WriteWrap as new () => StreamRequest;
  const Shutdown = ShutdownWrap as new () => StreamRequest;
  return {
    newWriteRequest: () => new Write(),
    newShutdownRequest: () => new Shutdown(),
    state: streamBaseState,
    readBytesOrError: kReadBytesOrError,
    lastWriteWasAsync: kLastWriteWasAsync,
    eof,
    notConnected,
  };
}

const HANDLE_METHODS = [
  'useUserBuffer',
  'readStart',
  'readStop',
  'writeBuffer',
  'writev',
  'shutdown',
  'close',
  'setNoDelay',
  'getpeername',
] as const;

/** Checked on the first accepted handle: its class serves every later one. */
let handlesUsable: boolean | undefined;

function isUsableHandle(handle: unknown): handle is TcpHandle {
  if (handlesUsable === undefined) {
    const h = handle as Record<string, unknown> | null;
    handlesUsable = h !== null && HANDLE_METHODS.every((m) => typeof h[m] === 'function');
  }
  return handlesUsable;
}

/**
 * Makes a listening net.Server hand its accepted handles to `take` instead of making a
 * Socket of each. `take` returns false to let Node make the Socket after all (TLS),
 * which then arrives through the server's 'connection' event as before. Returns false,
 * changing nothing, when the handles cannot be used.
 */
export function takeAcceptedHandles(
  listener: NetServer,
  take: (handle: TcpHandle) => boolean,
): boolean {
  if (tcpInternals() === null) return false;
  const listening = (listener as unknown as { _handle: { onconnection?: unknown } | null })._handle;
  if (listening === null || typeof listening.onconnection !== 'function') return false;
  const nodeAccept = listening.onconnection as (this: unknown, err: number, h: unknown) => void;
  listening.onconnection = function onconnection(this: unknown, err: number, handle: unknown) {
    // An accept error (EMFILE...) goes to Node, which reports it on the listener.
    if (err === 0 && isUsableHandle(handle) && take(handle)) return;
    nodeAccept.call(this, err, handle);
  };
  return true;
}
