// WebSocket frames (RFC 6455 §5) as the reference server reads and writes them
// (server/websocket.go): clients must mask, control frames are at most 125 bytes and
// final, a data message may span continuation frames, compressed messages
// (permessage-deflate, RFC 7692) are inflated whole once their final frame is in.
// The reader works on the socket's chunks in place: payload bytes are unmasked where
// they lie and handed on as subarrays, so an uncompressed message costs no copy.

import { isUtf8 } from 'node:buffer';
import { endianness } from 'node:os';
import { constants, inflateRawSync } from 'node:zlib';

export const Opcode = {
  continuation: 0,
  text: 1,
  binary: 2,
  close: 8,
  ping: 9,
  pong: 10,
} as const;

export const CloseStatus = {
  normal: 1000,
  goingAway: 1001,
  protocolError: 1002,
  noStatusReceived: 1005,
  abnormal: 1006,
  invalidPayload: 1007,
  policyViolation: 1008,
  messageTooBig: 1009,
  internalError: 1011,
  tlsHandshake: 1015,
} as const;

const FINAL = 0x80;
const RSV1 = 0x40;
const MASK = 0x80;
const MAX_CONTROL_PAYLOAD = 125;
const LITTLE_ENDIAN = endianness() === 'LE';
/** Ends a message compressed without context takeover so that inflate sees a whole stream. */
const DEFLATE_TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff]);

/** What the reader hands on: message bytes, control frames, or the end. */
export interface FrameSink {
  /** Payload bytes of a data message, in order; valid only during the call. */
  data(chunk: Buffer): void;
  ping(payload: Buffer): void;
  /** The peer closed: status (1005 when none) and reason. */
  close(status: number, reason: string): void;
  /** A framing error: the connection must go with a 1002 close carrying this text. */
  protocolError(message: string): void;
}

const enum State {
  Header,
  Length16,
  Length64,
  MaskKey,
  Payload,
  Control,
}

/**
 * Incremental frame parser. Header bytes split across chunks are gathered in a small
 * scratch buffer; payload bytes are never gathered unless the message is compressed
 * or is a control frame.
 */
export class FrameReader {
  private state = State.Header;
  private readonly scratch = Buffer.alloc(14);
  private have = 0;
  private need = 2;
  private opcode = 0;
  private final = false;
  /** Inside a fragmented data message (a continuation must follow). */
  private inMessage = false;
  private compressedMessage = false;
  private remaining = 0;
  private readonly key = Buffer.alloc(4);
  private keyPos = 0;
  private readonly control: Buffer[] = [];
  private compressed: Buffer[] = [];
  private compressedBytes = 0;
  private failed = false;

  constructor(
    private readonly sink: FrameSink,
    /** Clients must mask; the reference lets a peer opt out with Nats-No-Masking. */
    private readonly masked: boolean,
    /** permessage-deflate was negotiated. */
    private readonly inflate: boolean,
    /** The largest message accepted after inflating (the server's max_payload and more). */
    private readonly maxMessage: number,
  ) {}

  push(chunk: Buffer): void {
    let pos = 0;
    const end = chunk.length;
    while (pos < end && !this.failed) {
      switch (this.state) {
        case State.Header:
        case State.Length16:
        case State.Length64:
        case State.MaskKey: {
          const take = Math.min(this.need - this.have, end - pos);
          chunk.copy(this.scratch, this.have, pos, pos + take);
          this.have += take;
          pos += take;
          if (this.have === this.need) this.headerPart();
          break;
        }
        case State.Payload: {
          const take = Math.min(this.remaining, end - pos);
          const part = chunk.subarray(pos, pos + take);
          pos += take;
          this.remaining -= take;
          if (this.masked) this.unmask(part);
          if (this.compressedMessage) this.gatherCompressed(part);
          else if (take > 0) this.sink.data(part);
          if (this.remaining === 0) this.payloadDone();
          break;
        }
        case State.Control: {
          const take = Math.min(this.remaining, end - pos);
          // Control payloads are tiny; copied so that they survive a split read.
          const part = Buffer.from(chunk.subarray(pos, pos + take));
          pos += take;
          this.remaining -= take;
          if (this.masked) this.unmask(part);
          this.control.push(part);
          if (this.remaining === 0) this.controlDone();
          break;
        }
      }
    }
  }

  private headerPart(): void {
    const s = this.scratch;
    switch (this.state) {
      case State.Header: {
        const b0 = s[0]!;
        const b1 = s[1]!;
        this.final = (b0 & FINAL) !== 0;
        const rsv1 = (b0 & RSV1) !== 0;
        this.opcode = b0 & 0x0f;
        if (this.masked && (b1 & MASK) === 0) return this.fail('mask bit missing');
        const len = b1 & 0x7f;
        switch (this.opcode) {
          case Opcode.ping:
          case Opcode.pong:
          case Opcode.close:
            if (len > MAX_CONTROL_PAYLOAD) {
              return this.fail(
                `control frame length bigger than maximum allowed of ${MAX_CONTROL_PAYLOAD} bytes`,
              );
            }
            if (!this.final) return this.fail('control frame does not have final bit set');
            break;
          case Opcode.text:
          case Opcode.binary:
            if (this.inMessage) {
              return this.fail(
                'new message started before final frame for previous message was received',
              );
            }
            if (rsv1 && !this.inflate) return this.fail('compression not negotiated');
            this.inMessage = !this.final;
            this.compressedMessage = rsv1;
            break;
          case Opcode.continuation:
            if (!this.inMessage || rsv1) return this.fail('invalid continuation frame');
            this.inMessage = !this.final;
            break;
          default:
            return this.fail(`unknown opcode ${this.opcode}`);
        }
        if (len === 126) return this.expect(State.Length16, 2);
        if (len === 127) return this.expect(State.Length64, 8);
        this.remaining = len;
        return this.afterLength();
      }
      case State.Length16:
        this.remaining = s.readUInt16BE(0);
        return this.afterLength();
      case State.Length64: {
        const high = s.readUInt32BE(0);
        // Beyond 2^53 bytes no message can be real; the reference would wait forever.
        if (high > 0x1fffff) return this.fail('frame length too large');
        this.remaining = high * 0x100000000 + s.readUInt32BE(4);
        return this.afterLength();
      }
      case State.MaskKey:
        s.copy(this.key, 0, 0, 4);
        this.keyPos = 0;
        return this.startPayload();
      default:
        return;
    }
  }

  private expect(state: State, need: number): void {
    this.state = state;
    this.have = 0;
    this.need = need;
  }

  private afterLength(): void {
    if (this.masked) return this.expect(State.MaskKey, 4);
    this.keyPos = 0;
    this.startPayload();
  }

  private startPayload(): void {
    const control = this.opcode >= Opcode.close;
    this.state = control ? State.Control : State.Payload;
    if (this.remaining === 0) {
      if (control) this.controlDone();
      else this.payloadDone();
    }
  }

  private payloadDone(): void {
    if (this.compressedMessage && !this.inMessage) {
      this.compressedMessage = false;
      this.inflateMessage();
    }
    this.expect(State.Header, 2);
  }

  private controlDone(): void {
    const payload = this.control.length === 1 ? this.control[0]! : Buffer.concat(this.control);
    this.control.length = 0;
    this.expect(State.Header, 2);
    switch (this.opcode) {
      case Opcode.ping:
        this.sink.ping(payload);
        return;
      case Opcode.pong:
        return;
      case Opcode.close: {
        this.failed = true;
        if (payload.length < 2) {
          this.sink.close(CloseStatus.noStatusReceived, '');
          return;
        }
        const status = payload.readUInt16BE(0);
        const body = payload.subarray(2);
        if (!isUtf8(body)) {
          this.sink.close(CloseStatus.invalidPayload, 'invalid utf8 body in close frame');
          return;
        }
        this.sink.close(status, body.toString('utf8'));
        return;
      }
      default:
        return;
    }
  }

  private gatherCompressed(part: Buffer): void {
    if (part.length === 0) return;
    this.compressedBytes += part.length;
    if (this.compressedBytes > this.maxMessage) {
      this.fail('compressed message too large');
      return;
    }
    // The socket's chunk is reused after this read: keep a copy until the final frame.
    this.compressed.push(Buffer.from(part));
  }

  private inflateMessage(): void {
    const parts = this.compressed;
    this.compressed = [];
    this.compressedBytes = 0;
    parts.push(DEFLATE_TAIL);
    let plain: Buffer;
    try {
      plain = inflateRawSync(Buffer.concat(parts), {
        finishFlush: constants.Z_SYNC_FLUSH,
        maxOutputLength: this.maxMessage,
      });
    } catch (err) {
      this.fail(`invalid compressed data: ${(err as Error).message}`);
      return;
    }
    if (plain.length > 0) this.sink.data(plain);
  }

  /**
   * XORs the mask in place: byte by byte up to a 4-byte boundary of the underlying
   * memory, then a word at a time (a browser masks every byte it sends, so this runs
   * over every payload byte a WebSocket client publishes).
   */
  private unmask(buf: Buffer): void {
    const key = this.key;
    let p = this.keyPos;
    const n = buf.length;
    let i = 0;
    while (i < n && ((buf.byteOffset + i) & 3) !== 0) {
      buf[i] = buf[i]! ^ key[p & 3]!;
      p++;
      i++;
    }
    const words = (n - i) >>> 2;
    if (words > 0 && LITTLE_ENDIAN) {
      const k =
        (key[p & 3]! |
          (key[(p + 1) & 3]! << 8) |
          (key[(p + 2) & 3]! << 16) |
          (key[(p + 3) & 3]! << 24)) >>>
        0;
      const u32 = new Uint32Array(buf.buffer, buf.byteOffset + i, words);
      for (let w = 0; w < words; w++) u32[w] = u32[w]! ^ k;
      // Four bytes a word: the key position is where it was.
      i += words * 4;
    }
    for (; i < n; i++) {
      buf[i] = buf[i]! ^ key[p & 3]!;
      p++;
    }
    this.keyPos = p & 3;
  }

  private fail(message: string): void {
    this.failed = true;
    this.sink.protocolError(message);
  }
}

/** The header of an unmasked server frame carrying `length` payload bytes. */
export function frameHeader(
  opcode: number,
  length: number,
  opts: { first?: boolean; final?: boolean; compressed?: boolean } = {},
): Buffer {
  let b0 = opts.first === false ? 0 : opcode;
  if (opts.final !== false) b0 |= FINAL;
  if (opts.compressed === true) b0 |= RSV1;
  if (length <= 125) return Buffer.from([b0, length]);
  if (length < 65536) {
    const h = Buffer.allocUnsafe(4);
    h[0] = b0;
    h[1] = 126;
    h.writeUInt16BE(length, 2);
    return h;
  }
  const h = Buffer.allocUnsafe(10);
  h[0] = b0;
  h[1] = 127;
  h.writeUInt32BE(Math.floor(length / 0x100000000), 2);
  h.writeUInt32BE(length >>> 0, 6);
  return h;
}

/** A close frame's payload: the status, then the reason cut to fit 125 bytes as the reference does. */
export function closePayload(status: number, reason: string): Buffer {
  let body = Buffer.from(reason, 'utf8');
  if (body.length > MAX_CONTROL_PAYLOAD - 2) {
    body = Buffer.concat([body.subarray(0, MAX_CONTROL_PAYLOAD - 5), Buffer.from('...')]);
  }
  const buf = Buffer.allocUnsafe(2 + body.length);
  buf.writeUInt16BE(status, 0);
  body.copy(buf, 2);
  return buf;
}

/** A whole control frame (close, ping, pong). */
export function controlFrame(opcode: number, payload: Buffer): Buffer {
  return Buffer.concat([frameHeader(opcode, payload.length), payload]);
}
