// A plain TCP client connection driven at Node's handle (tcp-internals.ts): the
// Transport a Client needs, without net.Socket's stream machinery.
//
// What it keeps of net.Socket's behaviour, because the Client relies on it:
// - reads land in the shared read buffer (shared-read.ts) and go to one reader;
// - a write is tried at once; what the kernel does not take stays with libuv, in
//   order, and counts in writableLength until written; 'drain' when it is all out;
// - a write's callback runs once libuv no longer holds its bytes (at once when the
//   kernel took them whole), in write order: the Outbound returns blocks to its pool;
// - end() shuts the write side down after the pending writes; the handle closes once
//   the peer has ended too (as allowHalfOpen: false), or at destroy();
// - 'end' at the peer's FIN, 'error' (with the syscall) then 'close' on failure,
//   'close' after destroy(), each emitted once.

import { getSystemErrorName } from 'node:util';
import { sharedRead, SHARED_READ_BUFFER } from './shared-read.js';
import { type StreamRequest, type TcpHandle, type TcpInternals } from './tcp-internals.js';
import type { Transport } from './transport.js';

/** write() returns false from this backlog on, as a Socket at its default high-water mark. */
const HIGH_WATER = 16 * 1024;

type EventName = 'data' | 'end' | 'close' | 'drain' | 'error';
type AnyListener = (this: TcpTransport, arg?: never) => void;

/** The transport of a handle, found from Node's callbacks (their `this` is the handle). */
const transportOf = Symbol('wirebus.tcpTransport');

interface OwnedHandle extends TcpHandle {
  [transportOf]: TcpTransport;
}

/** A write libuv still holds: the bytes stay referenced and counted until it completes. */
interface PendingWrite extends StreamRequest {
  owner: TcpTransport | null;
  bytes: number;
  data: Uint8Array | Uint8Array[] | null;
  /** How many of the owner's held write callbacks this write completes. */
  dones: number;
}

type WriteDone = (err?: Error | null) => void;

/** What the last getpeername() wrote; one object for every accept. */
const peer: { address?: string | undefined; port?: number | undefined } = {};

/** The reader of a connection nobody reads (refused at max_connections): reads are dropped. */
function dropRead(): void {}

export class TcpTransport implements Transport {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  bytesRead = 0;
  /** Bytes handed to libuv and not yet written. */
  writableLength = 0;
  destroyed = false;
  /** Where each read goes, as a view of the shared buffer valid during the call. */
  reader: (chunk: Buffer) => void = dropRead;

  private readonly handle: OwnedHandle;
  private reading = false;
  private noDelay = false;
  /** The peer's FIN arrived. */
  private readEnded = false;
  /** end() was called; the shutdown follows the pending writes. */
  private ending = false;
  private shutDown = false;
  private corks = 0;
  private corked: Uint8Array[] = [];
  /** Callbacks of the corked writes, in order. */
  private corkedDones: WriteDone[] = [];
  /** Callbacks of the writes libuv holds, in order (libuv completes a stream's in order). */
  private heldDones: WriteDone[] = [];
  private heldHead = 0;
  /** [event, listener, once] triples, made at the first on(). */
  private listeners: Array<EventName | AnyListener | boolean> | null = null;

  constructor(
    handle: TcpHandle,
    /** Node's stream binding, which the shared callbacks below read their results from. */
    readonly node: TcpInternals,
  ) {
    this.handle = handle as OwnedHandle;
    this.handle[transportOf] = this;
    peer.address = undefined;
    peer.port = undefined;
    handle.getpeername(peer);
    this.remoteAddress = peer.address;
    this.remotePort = peer.port;
    handle.onread = onHandleRead;
    handle.useUserBuffer(SHARED_READ_BUFFER);
  }

  setNoDelay(noDelay = true): this {
    if (noDelay !== this.noDelay && !this.destroyed) {
      this.noDelay = noDelay;
      this.handle.setNoDelay(noDelay);
    }
    return this;
  }

  pause(): this {
    if (this.reading) {
      this.reading = false;
      if (!this.destroyed) this.handle.readStop();
    }
    return this;
  }

  resume(): this {
    if (!this.reading && !this.readEnded && !this.destroyed) {
      this.reading = true;
      const err = this.handle.readStart();
      if (err < 0) this.fail(err, 'read');
    }
    return this;
  }

  // ---- writing ----------------------------------------------------------------

  write(data: Buffer, done?: WriteDone): boolean {
    if (this.destroyed || this.ending || data.length === 0) {
      // Nothing of data is kept: the caller may have its bytes back.
      done?.();
      return data.length === 0 && !this.destroyed && !this.ending;
    }
    if (this.corks > 0) {
      this.corked.push(data);
      if (done !== undefined) this.corkedDones.push(done);
    } else if (this.dispatch(data, null)) {
      if (done !== undefined) this.hold(done);
    } else done?.();
    return this.writableLength < HIGH_WATER;
  }

  /** Keeps `done` for the write libuv just took (the last request dispatched). */
  private hold(done: WriteDone): void {
    this.heldDones.push(done);
    lastHeld!.dones++;
  }

  cork(): void {
    this.corks++;
  }

  uncork(): void {
    if (this.corks === 0 || --this.corks > 0) return;
    const chunks = this.corked;
    if (chunks.length === 0) return;
    let held: boolean;
    if (this.destroyed || this.ending) {
      chunks.length = 0;
      held = false;
    } else if (chunks.length === 1) {
      const only = chunks[0]!;
      chunks.length = 0;
      held = this.dispatch(only, null);
    } else if (this.dispatch(null, chunks)) {
      // libuv holds the array's buffers until written: the next cork gets another.
      this.corked = [];
      held = true;
    } else {
      chunks.length = 0;
      held = false;
    }
    const dones = this.corkedDones;
    if (dones.length === 0) return;
    if (held) {
      for (let i = 0; i < dones.length; i++) this.hold(dones[i]!);
      dones.length = 0;
    } else {
      // Called from a copy: a callback may write (and cork) again.
      this.corkedDones = [];
      for (let i = 0; i < dones.length; i++) dones[i]!();
    }
  }

  /** Hands data (or chunks) to libuv; true when libuv keeps them for later. */
  private dispatch(data: Uint8Array | null, chunks: Uint8Array[] | null): boolean {
    const node = this.node;
    const req = spareWrite ?? newPendingWrite(node);
    const err =
      chunks === null ? this.handle.writeBuffer(req, data!) : this.handle.writev(req, chunks, true);
    if (err !== 0) {
      // Not reused: a write that failed after libuv took it has been unwrapped.
      spareWrite = null;
      this.fail(err, 'write');
      return false;
    }
    if (node.state[node.lastWriteWasAsync] === 0) {
      // Written at once: the request was not used, and serves the next write.
      spareWrite = req;
      return false;
    }
    spareWrite = null;
    let bytes = 0;
    if (chunks === null) bytes = data!.length;
    else for (let i = 0; i < chunks.length; i++) bytes += chunks[i]!.length;
    req.owner = this;
    req.bytes = bytes;
    req.data = chunks ?? data;
    req.dones = 0;
    lastHeld = req;
    this.writableLength += bytes;
    return true;
  }

  /** A write libuv held is done (status < 0: it failed). */
  writeDone(req: PendingWrite, status: number): void {
    this.writableLength -= req.bytes;
    // libuv has let go of the bytes, written or not (a closed handle cancels its writes).
    for (let n = req.dones; n > 0; n--) {
      const done = this.heldDones[this.heldHead]!;
      this.heldDones[this.heldHead++] = noDone;
      done();
    }
    if (this.heldHead === this.heldDones.length) {
      this.heldDones.length = 0;
      this.heldHead = 0;
    } else if (this.heldHead >= 1024) {
      this.heldDones.splice(0, this.heldHead);
      this.heldHead = 0;
    }
    if (this.destroyed) return;
    if (status < 0) {
      this.fail(status, 'write');
      return;
    }
    if (this.writableLength === 0) this.emit('drain');
  }

  // ---- ending -----------------------------------------------------------------

  end(data?: Buffer | string): this {
    if (data !== undefined) this.write(typeof data === 'string' ? Buffer.from(data) : data);
    if (this.ending || this.destroyed) return this;
    this.ending = true;
    const req = this.node.newShutdownRequest() as PendingWrite;
    req.owner = this;
    req.oncomplete = onShutdownDone;
    const err = this.handle.shutdown(req);
    if (err === 1 || err === this.node.notConnected) this.shutdownDone();
    else if (err !== 0) this.fail(err, 'shutdown');
    return this;
  }

  shutdownDone(): void {
    this.shutDown = true;
    if (this.readEnded) this.destroy();
  }

  /** The peer's FIN: 'end', and our side ends too unless the listener closed us already. */
  peerEnded(): void {
    this.readEnded = true;
    this.reading = false;
    this.emit('end');
    if (this.destroyed) return;
    if (this.shutDown) this.destroy();
    else this.end();
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.corked.length = 0;
    // Never handed to libuv: nothing holds their bytes.
    const dones = this.corkedDones;
    this.corkedDones = [];
    for (let i = 0; i < dones.length; i++) dones[i]!();
    if (this.reading) {
      this.reading = false;
      this.handle.readStop();
    }
    this.handle.close(onHandleClosed);
    return this;
  }

  /** A failed read, write or shutdown: 'error', then the handle closes ('close'). */
  fail(code: number, syscall: string): void {
    if (this.destroyed) return;
    const name = getSystemErrorName(code);
    const err: NodeJS.ErrnoException = new Error(`${syscall} ${name}`);
    err.code = name;
    err.errno = code;
    err.syscall = syscall;
    this.destroy();
    // After the current call returns, as a Socket emits it: the listener closes the
    // Client, which must not happen inside the write its flush is making.
    process.nextTick(emitError, this, err);
  }

  // ---- events -----------------------------------------------------------------

  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'end' | 'close' | 'drain', listener: () => void): this;
  on(event: 'error', listener: (err: NodeJS.ErrnoException) => void): this;
  on(event: EventName, listener: (arg: never) => void): this {
    return this.listen(event, listener as AnyListener, false);
  }

  once(event: 'close', listener: () => void): this {
    return this.listen(event, listener, true);
  }

  private listen(event: EventName, listener: AnyListener, once: boolean): this {
    if (event === 'data') {
      // Reads are views of the shared buffer, valid only during the call: a consumer
      // must say so by setting `reader`, not by listening as to a Socket.
      throw new Error('a TcpTransport reads through its reader, not data events');
    }
    (this.listeners ??= []).push(event, listener, once);
    return this;
  }

  emit(event: EventName, arg?: NodeJS.ErrnoException): void {
    const list = this.listeners;
    if (list === null) return;
    for (let i = 0; i < list.length; i += 3) {
      if (list[i] !== event) continue;
      const listener = list[i + 1] as (this: TcpTransport, arg?: NodeJS.ErrnoException) => void;
      if (list[i + 2] === true) {
        list.splice(i, 3);
        i -= 3;
      }
      listener.call(this, arg);
    }
  }
}

/** The write request for the next write; taken by a write libuv holds. */
let spareWrite: PendingWrite | null = null;
/** The request of the last write libuv kept (what hold() adds a callback to). */
let lastHeld: PendingWrite | null = null;

function noDone(): void {}

function newPendingWrite(node: TcpInternals): PendingWrite {
  const req = node.newWriteRequest() as PendingWrite;
  req.oncomplete = onWriteDone;
  req.owner = null;
  req.bytes = 0;
  req.data = null;
  req.dones = 0;
  return req;
}

function onWriteDone(this: StreamRequest, status: number): void {
  const req = this as PendingWrite;
  const owner = req.owner!;
  req.owner = null;
  req.data = null;
  owner.writeDone(req, status);
}

function onShutdownDone(this: StreamRequest, status: number): void {
  const owner = (this as PendingWrite).owner!;
  if (status < 0 && status !== owner.node.notConnected) owner.fail(status, 'shutdown');
  else owner.shutdownDone();
}

/** Node's read callback, one for every handle. */
function onHandleRead(this: TcpHandle): void {
  const t = (this as OwnedHandle)[transportOf];
  const node = t.node;
  const n = node.state[node.readBytesOrError]!;
  if (n > 0) {
    t.bytesRead += n;
    t.reader(sharedRead(n));
  } else if (n === node.eof) {
    t.peerEnded();
  } else if (n < 0) {
    t.fail(n, 'read');
  }
}

function onHandleClosed(this: TcpHandle): void {
  (this as OwnedHandle)[transportOf].emit('close');
}

function emitError(t: TcpTransport, err: NodeJS.ErrnoException): void {
  t.emit('error', err);
}
