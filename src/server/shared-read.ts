// Plain TCP client connections all read into one buffer, through Node's `onread`.
// Node's default gives every read a fresh buffer: at 4 GB/s of publishes that is
// 60,000 buffers a second, whose external memory forces a young-generation
// collection every 32 MB, and V8 may follow each with a full mark-compact
// (bench/RESULTS.md). One buffer for every socket allocates nothing per read. The
// price is a rule: nothing may keep a view of a read after its callback returns.
// The parser copies what an incomplete op needs (MessageFields.detach); anything
// that hands payload bytes on by reference copies them first (keep()).

import { type OnReadOpts, Socket, type SocketConstructorOpts } from 'node:net';

/** Read size: Node's default per read, and the largest a loopback read gives at once. */
const READ_SIZE = 64 * 1024;

const readBuffer = Buffer.allocUnsafeSlow(READ_SIZE);
const readArrayBuffer = readBuffer.buffer;

/** The buffer every plain connection reads into (a TcpTransport's handle too). */
export const SHARED_READ_BUFFER: Buffer = readBuffer;

/** Bumped on every shared read, so a copy made by keep() is reused only within its read. */
let readSerial = 0;

/**
 * Node's own keys for a socket's `onread` buffer and callback (lib/net.js: kBuffer,
 * kBufferCb), found once on a socket by their names; null on a Node that has other
 * ones, and then accepted sockets are moved to a new Socket instead (adoptByMove).
 */
let onreadKeys: { buffer: symbol; callback: symbol } | null | undefined;

function findOnreadKeys(socket: Socket): { buffer: symbol; callback: symbol } | null {
  const symbols = Object.getOwnPropertySymbols(socket);
  const buffer = symbols.find((s) => s.description === 'kBuffer');
  const callback = symbols.find((s) => s.description === 'kBufferCb');
  return buffer !== undefined && callback !== undefined ? { buffer, callback } : null;
}

/** What a socket reading into the shared buffer hands each read to. */
const readerOf = Symbol('wirebus.sharedReader');

interface SharedReader {
  [readerOf]?: (chunk: Buffer) => void;
}

/**
 * The `onread` callback of every shared-buffer socket: Node calls it with the socket
 * as `this`, so one function serves them all (no closure per connection).
 */
function onSharedRead(this: SharedReader, n: number): boolean {
  this[readerOf]!(sharedRead(n));
  return true;
}

/** The n bytes a read just put in the shared buffer, as a view valid until the next read. */
export function sharedRead(n: number): Buffer {
  readSerial++;
  return readBuffer.subarray(0, n);
}

/**
 * Makes an accepted socket (the listener runs with pauseOnConnect, so nothing was
 * read yet) read into the shared buffer from its next resume(). On Node 20 that is
 * what the `onread` option of `new Socket()` sets up, done in place: one Socket per
 * connection, not a second one that takes the handle over while the first is
 * destroyed (Node's Socket and stream set-up is the largest JavaScript cost of an
 * accept in the connection storm). Returns the
 * socket that now reads, or null when it has no handle (already closed) and the
 * caller goes on with it as it is.
 */
export function adoptSharedReads(accepted: Socket, onRead: (chunk: Buffer) => void): Socket | null {
  const handle = (accepted as unknown as { _handle: { useUserBuffer?: unknown } | null })._handle;
  if (handle === null) return null;
  if (onreadKeys === undefined) onreadKeys = findOnreadKeys(accepted);
  if (onreadKeys === null || typeof handle.useUserBuffer !== 'function') {
    return adoptByMove(accepted, onRead);
  }
  const keyed = accepted as unknown as Record<symbol, unknown> & SharedReader;
  keyed[onreadKeys.buffer] = readBuffer;
  keyed[onreadKeys.callback] = onSharedRead;
  keyed[readerOf] = onRead;
  (handle.useUserBuffer as (buf: Buffer) => void).call(handle, readBuffer);
  return accepted;
}

/**
 * The portable way: moves the socket's handle to a new Socket made with the `onread`
 * option, and retires the accepted one without closing the handle.
 */
export function adoptByMove(accepted: Socket, onRead: (chunk: Buffer) => void): Socket {
  const holder = accepted as unknown as { _handle: object | null };
  const handle = holder._handle!;
  // The retired socket gives up the handle before destroy(), so destroy() only
  // settles the listener's connection count.
  holder._handle = null;
  accepted.destroy();
  const options: SocketConstructorOpts & { handle: object; onread: OnReadOpts } = {
    handle,
    onread: { buffer: readBuffer, callback: onSharedRead },
  };
  const socket = new Socket(options);
  (socket as SharedReader)[readerOf] = onRead;
  return socket;
}

/** True when buf is a view of the shared read buffer, valid only until its callback returns. */
export function isShared(buf: Buffer): boolean {
  return buf.buffer === readArrayBuffer;
}

/**
 * Buffers lent for one delivery at a time and filled again afterwards (a FILE store's
 * read blocks): the same rule as the shared read buffer's, so keep() copies from them
 * too. Nothing else needs to know: whatever obeys the shared buffer's rule obeys this.
 */
const lent = new WeakSet<ArrayBufferLike>();

/** Marks `ab` as lent (see `lent`): views of it are valid until the caller returns. */
export function lend(ab: ArrayBufferLike): void {
  lent.add(ab);
}

/** True when buf is a view of a lent buffer (see `lend()`). */
export function isLent(buf: Uint8Array): boolean {
  return lent.has(buf.buffer);
}

const NO_BYTES = Buffer.alloc(0);
let keptSerial = -1;
let keptOffset = -1;
let kept: Buffer = Buffer.alloc(0);

/**
 * buf[start, end) as bytes that stay valid: a view when buf is a buffer of its
 * own, a copy when it is the shared read buffer or a lent one. A copy of the shared
 * buffer is reused for the same bytes within one read, so a message fanned out to
 * many subscribers is copied once.
 */
export function keep(buf: Buffer, start: number, end: number): Buffer {
  // Nothing to keep (an API request's empty body, a KV get's): no view, no copy.
  if (end === start) return NO_BYTES;
  if (buf.buffer !== readArrayBuffer) {
    if (!lent.has(buf.buffer)) return buf.subarray(start, end);
    const copy = Buffer.allocUnsafe(end - start);
    buf.copy(copy, 0, start, end);
    return copy;
  }
  const offset = buf.byteOffset + start;
  const length = end - start;
  if (keptSerial === readSerial && keptOffset === offset && kept.length === length) return kept;
  // allocUnsafe + copy: small copies come from Node's pool, and there is one copy
  // (Buffer.copyBytesFrom slices into a new ArrayBuffer and copies again: 3-5x slower).
  kept = Buffer.allocUnsafe(length);
  buf.copy(kept, 0, start, end);
  keptSerial = readSerial;
  keptOffset = offset;
  return kept;
}
