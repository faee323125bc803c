// One WebSocket connection seen as a Transport: what the Client writes leaves as
// binary frames, what arrives in frames reaches the Client as plain protocol bytes.
// Writes go straight to the TCP (or TLS) socket behind it, header then payload, so
// writableLength, 'drain' and pause/resume are the socket's own and the Client's
// back-pressure and slow-consumer rules hold unchanged.

import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { constants, deflateRawSync } from 'node:zlib';
import { CloseReason } from '../protocol/errors.js';
import type { Transport } from '../server/transport.js';
import {
  CloseStatus,
  closePayload,
  controlFrame,
  type FrameSink,
  FrameReader,
  frameHeader,
  Opcode,
} from './frames.js';

/** Below this many bytes a write is not worth compressing (the reference's threshold). */
const COMPRESS_THRESHOLD = 64;
/** Browsers cope better with frames of at most this size (the reference's finding). */
const BROWSER_FRAME_SIZE = 4096;
/** An inflated message may not exceed this: a bound on decompression bombs. */
const MAX_INFLATED = 64 * 1024 * 1024;

export interface WsTransportOptions {
  /** The peer must mask its frames (every browser and client does; Nats-No-Masking opts out). */
  readonly masked: boolean;
  /** permessage-deflate was negotiated. */
  readonly compress: boolean;
  /** A browser (User-Agent Mozilla/...): frames of at most 4 KiB. */
  readonly browser: boolean;
  /** Safari cannot take fragmented compressed messages. */
  readonly noCompressedFragments: boolean;
}

/** The close status the reference sends for each close reason (wsEnqueueCloseMessage). */
export function closeStatusFor(reason: string): number {
  switch (reason) {
    case CloseReason.clientClosed:
      return CloseStatus.normal;
    case CloseReason.authTimeout:
    case CloseReason.authFailure:
    case CloseReason.authExpired:
    case CloseReason.slowConsumerPending:
    case CloseReason.slowConsumerDeadline:
    case CloseReason.maxConnections:
    case CloseReason.maxControlLine:
    case CloseReason.maxSubscriptions:
      return CloseStatus.policyViolation;
    case CloseReason.tlsHandshake:
      return CloseStatus.tlsHandshake;
    case CloseReason.parseError:
    case CloseReason.protocolViolation:
    case CloseReason.badClientProtocol:
      return CloseStatus.protocolError;
    case CloseReason.maxPayload:
      return CloseStatus.messageTooBig;
    case CloseReason.serverShutdown:
      return CloseStatus.goingAway;
    case CloseReason.writeError:
    case CloseReason.readError:
    case CloseReason.staleConnection:
      return CloseStatus.abnormal;
    default:
      return CloseStatus.internalError;
  }
}

export class WsTransport extends EventEmitter implements Transport, FrameSink {
  private readonly reader: FrameReader;
  private corked = 0;
  private readonly corkedParts: Buffer[] = [];
  private corkedBytes = 0;
  private closeSent = false;
  /** Why the connection closes, read when end() sends the close frame. */
  closeReason: () => string = () => CloseReason.clientClosed;

  constructor(
    readonly raw: Socket,
    private readonly opts: WsTransportOptions,
  ) {
    super();
    this.reader = new FrameReader(this, opts.masked, opts.compress, MAX_INFLATED);
    raw.on('end', () => this.emit('end'));
    raw.on('close', () => this.emit('close'));
    raw.on('error', (err) => this.emit('error', err));
    raw.on('drain', () => this.emit('drain'));
  }

  /** Starts reading: `head` holds bytes that arrived with the handshake. */
  start(head: Buffer): void {
    this.raw.on('data', (chunk: Buffer) => {
      this.reader.push(chunk);
    });
    if (head.length > 0) this.reader.push(Buffer.from(head));
    this.raw.resume();
  }

  /** permessage-deflate was negotiated for this connection. */
  get compressed(): boolean {
    return this.opts.compress;
  }

  get remoteAddress(): string | undefined {
    return this.raw.remoteAddress;
  }

  get remotePort(): number | undefined {
    return this.raw.remotePort;
  }

  get bytesRead(): number {
    return this.raw.bytesRead;
  }

  get writableLength(): number {
    return this.raw.writableLength + this.corkedBytes;
  }

  get destroyed(): boolean {
    return this.raw.destroyed;
  }

  setNoDelay(noDelay?: boolean): this {
    this.raw.setNoDelay(noDelay);
    return this;
  }

  pause(): this {
    this.raw.pause();
    return this;
  }

  resume(): this {
    this.raw.resume();
    return this;
  }

  destroy(): this {
    this.raw.destroy();
    return this;
  }

  cork(): void {
    this.corked++;
  }

  /** What was written while corked leaves as one message. */
  uncork(): void {
    if (this.corked === 0 || --this.corked > 0) return;
    const parts = this.corkedParts;
    if (parts.length === 0) return;
    const total = this.corkedBytes;
    this.corkedBytes = 0;
    if (parts.length === 1) {
      const only = parts[0]!;
      parts.length = 0;
      this.sendMessage(only);
      return;
    }
    const joined = Buffer.concat(parts, total);
    parts.length = 0;
    this.sendMessage(joined);
  }

  write(data: Buffer): boolean {
    if (this.raw.destroyed || this.closeSent) return false;
    if (this.corked > 0) {
      this.corkedParts.push(data);
      this.corkedBytes += data.length;
      return true;
    }
    return this.sendMessage(data);
  }

  end(data?: Buffer | string): this {
    if (data !== undefined) this.write(typeof data === 'string' ? Buffer.from(data) : data);
    if (!this.closeSent && !this.raw.destroyed) {
      const reason = this.closeReason();
      this.raw.write(controlFrame(Opcode.close, closePayload(closeStatusFor(reason), reason)));
      this.closeSent = true;
    }
    this.raw.end();
    return this;
  }

  private sendMessage(data: Buffer): boolean {
    const raw = this.raw;
    if (this.opts.compress && data.length > COMPRESS_THRESHOLD) {
      const deflated = deflateRawSync(data, {
        level: constants.Z_BEST_SPEED,
        finishFlush: constants.Z_SYNC_FLUSH,
      });
      // RFC 7692 §7.2.1: the trailing empty block's 00 00 ff ff is left off.
      const payload = deflated.subarray(0, deflated.length - 4);
      const fragment =
        this.opts.browser &&
        !this.opts.noCompressedFragments &&
        payload.length > BROWSER_FRAME_SIZE;
      raw.cork();
      if (!fragment) {
        raw.write(frameHeader(Opcode.binary, payload.length, { compressed: true }));
        raw.write(payload);
      } else {
        for (let off = 0; off < payload.length; off += BROWSER_FRAME_SIZE) {
          const end = Math.min(off + BROWSER_FRAME_SIZE, payload.length);
          raw.write(
            frameHeader(Opcode.binary, end - off, {
              first: off === 0,
              final: end === payload.length,
              compressed: off === 0,
            }),
          );
          raw.write(payload.subarray(off, end));
        }
      }
      raw.uncork();
      return raw.writableLength === 0;
    }
    if (this.opts.browser && data.length > BROWSER_FRAME_SIZE) {
      raw.cork();
      for (let off = 0; off < data.length; off += BROWSER_FRAME_SIZE) {
        const end = Math.min(off + BROWSER_FRAME_SIZE, data.length);
        raw.write(frameHeader(Opcode.binary, end - off));
        raw.write(data.subarray(off, end));
      }
      raw.uncork();
      return raw.writableLength === 0;
    }
    raw.cork();
    raw.write(frameHeader(Opcode.binary, data.length));
    const ok = raw.write(data);
    raw.uncork();
    return ok;
  }

  // ---- FrameSink ----------------------------------------------------------------

  data(chunk: Buffer): void {
    this.emit('data', chunk);
  }

  ping(payload: Buffer): void {
    if (!this.closeSent && !this.raw.destroyed) this.raw.write(controlFrame(Opcode.pong, payload));
  }

  close(status: number, reason: string): void {
    // As the reference: the close is echoed, then the connection ends as Client Closed.
    if (!this.closeSent && !this.raw.destroyed) {
      this.raw.write(controlFrame(Opcode.close, closePayload(status, reason)));
      this.closeSent = true;
    }
    this.emit('end');
  }

  protocolError(message: string): void {
    if (!this.closeSent && !this.raw.destroyed) {
      this.raw.write(controlFrame(Opcode.close, closePayload(CloseStatus.protocolError, message)));
      this.closeSent = true;
    }
    // A read that fails closes the client as Read Error, as in the reference.
    this.emit('error', new Error(`websocket protocol error: ${message}`));
  }
}
