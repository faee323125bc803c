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

/** Bumped on every shared read, so a copy made by keep() is reused only within its read. */
let readSerial = 0;

/**
 * Moves an accepted socket's handle (the listener runs with pauseOnConnect, so
 * nothing was read yet) to a Socket that reads into the shared buffer, and retires
 * the accepted one without closing the handle. Returns null when the socket has
 * no handle to move (already closed), and the caller goes on with it as it is.
 */
export function adoptSharedReads(accepted: Socket, onRead: (chunk: Buffer) => void): Socket | null {
  const holder = accepted as unknown as { _handle: object | null };
  const handle = holder._handle;
  if (handle === null) return null;
  // The retired socket gives up the handle before destroy(), so destroy() only
  // settles the listener's connection count.
  holder._handle = null;
  accepted.destroy();
  const options: SocketConstructorOpts & { handle: object; onread: OnReadOpts } = {
    handle,
    onread: {
      buffer: readBuffer,
      callback: (n: number): boolean => {
        readSerial++;
        onRead(readBuffer.subarray(0, n));
        return true;
      },
    },
  };
  return new Socket(options);
}

/** True when buf is a view of the shared read buffer, valid only until its callback returns. */
export function isShared(buf: Buffer): boolean {
  return buf.buffer === readArrayBuffer;
}

let keptSerial = -1;
let keptOffset = -1;
let kept: Buffer = Buffer.alloc(0);

/**
 * buf[start, end) as bytes that stay valid: a view when buf is a buffer of its
 * own, a copy when it is the shared read buffer. The copy is reused for the same
 * bytes within one read, so a message fanned out to many subscribers is copied once.
 */
export function keep(buf: Buffer, start: number, end: number): Buffer {
  if (buf.buffer !== readArrayBuffer) return buf.subarray(start, end);
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
