// A raw WebSocket client for transcript tests: it does the handshake by hand, sends
// masked frames of any shape (or garbage), and decodes what the server sends back into
// the protocol text and the control frames, so tests can assert exact bytes.

import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';

export interface ServerFrame {
  opcode: number;
  final: boolean;
  compressed: boolean;
  payload: Buffer;
}

export function handshakeRequest(port: number, extra: Record<string, string> = {}): string {
  const headers: Record<string, string> = {
    Host: `127.0.0.1:${port}`,
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    'Sec-WebSocket-Version': '13',
    ...extra,
  };
  let r = 'GET / HTTP/1.1\r\n';
  for (const [k, v] of Object.entries(headers)) if (v !== '') r += `${k}: ${v}\r\n`;
  return r + '\r\n';
}

/** A client frame, masked unless told otherwise. */
export function clientFrame(
  opcode: number,
  payload: Buffer | string,
  opts: { final?: boolean; masked?: boolean; rsv1?: boolean } = {},
): Buffer {
  const data = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const masked = opts.masked !== false;
  let b0 = opcode;
  if (opts.final !== false) b0 |= 0x80;
  if (opts.rsv1 === true) b0 |= 0x40;
  const mask = masked ? 0x80 : 0;
  let header: Buffer;
  if (data.length <= 125) header = Buffer.from([b0, mask | data.length]);
  else if (data.length < 65536) {
    header = Buffer.from([b0, mask | 126, 0, 0]);
    header.writeUInt16BE(data.length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = b0;
    header[1] = mask | 127;
    header.writeUInt32BE(Math.floor(data.length / 2 ** 32), 2);
    header.writeUInt32BE(data.length >>> 0, 6);
  }
  if (!masked) return Buffer.concat([header, data]);
  const key = randomBytes(4);
  const body = Buffer.alloc(data.length);
  for (let i = 0; i < data.length; i++) body[i] = data[i]! ^ key[i & 3]!;
  return Buffer.concat([header, key, body]);
}

/** What a permessage-deflate client sends for `text`. */
export function deflated(text: string | Buffer): Buffer {
  const out = deflateRawSync(typeof text === 'string' ? Buffer.from(text) : text, {
    finishFlush: constants.Z_SYNC_FLUSH,
  });
  return out.subarray(0, out.length - 4);
}

export class RawWs {
  /** The HTTP response head (status line and headers). */
  response = '';
  readonly frames: ServerFrame[] = [];
  closed = false;
  private buf = Buffer.alloc(0);
  private headDone = false;
  private waiters: (() => void)[] = [];
  private fragments: Buffer[] = [];
  private fragmentCompressed = false;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.parse();
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {
      this.closed = true;
      this.wake();
    });
  }

  /** Connects and sends the handshake request (or whatever `request` is). */
  static async open(
    port: number,
    request?: string,
    opts: { tls?: { ca: Buffer } } = {},
  ): Promise<RawWs> {
    const socket =
      opts.tls === undefined
        ? connect({ port, host: '127.0.0.1' })
        : tlsConnect({ port, host: '127.0.0.1', ca: opts.tls.ca, servername: 'localhost' });
    await new Promise<void>((resolve, reject) => {
      socket.once(opts.tls === undefined ? 'connect' : 'secureConnect', () => resolve());
      socket.once('error', reject);
    });
    const ws = new RawWs(socket);
    ws.socket.write(request ?? handshakeRequest(port));
    await ws.until(() => ws.headDone || ws.closed, 3000);
    return ws;
  }

  get status(): number {
    return Number(/^HTTP\/1\.1 (\d+)/.exec(this.response)?.[1] ?? 0);
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Sends protocol text as one masked binary frame. */
  sendText(text: string): void {
    this.socket.write(clientFrame(2, text));
  }

  /** The protocol text of every data message received so far (and forgets them). */
  takeText(): string {
    let text = '';
    for (const f of this.frames.splice(0))
      if (f.opcode === 2 || f.opcode === 1) text += f.payload.toString('latin1');
    return text;
  }

  /** Waits until the received protocol text includes `want`; returns all of it. */
  async waitText(want: string, ms = 3000): Promise<string> {
    let text = '';
    await this.until(() => {
      for (const f of this.frames.splice(0)) {
        if (f.opcode === 2 || f.opcode === 1) text += f.payload.toString('latin1');
        else this.control.push(f);
      }
      return text.includes(want) || this.closed;
    }, ms);
    if (!text.includes(want))
      throw new Error(`no ${JSON.stringify(want)} in ${JSON.stringify(text)}`);
    return text;
  }

  /** Control frames seen by waitText. */
  readonly control: ServerFrame[] = [];

  /** The close frame's status and reason once the server sent one. */
  async waitClose(ms = 3000): Promise<{ status: number; reason: string } | null> {
    const find = (): ServerFrame | undefined =>
      [...this.control, ...this.frames].find((f) => f.opcode === 8);
    await this.until(() => find() !== undefined || this.closed, ms);
    const f = find();
    if (f === undefined) return null;
    return { status: f.payload.readUInt16BE(0), reason: f.payload.subarray(2).toString('utf8') };
  }

  async waitClosed(ms = 3000): Promise<void> {
    await this.until(() => this.closed, ms);
  }

  close(): void {
    this.socket.destroy();
  }

  /** Stops reading, as a client whose TCP window fills up. */
  pauseReading(): void {
    this.socket.pause();
  }

  private parse(): void {
    if (!this.headDone) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      this.response = this.buf.toString('latin1', 0, end + 4);
      this.buf = this.buf.subarray(end + 4);
      this.headDone = true;
      if (!this.response.startsWith('HTTP/1.1 101')) {
        // An error response: its body is what remains.
        this.response += this.buf.toString('latin1');
        this.buf = Buffer.alloc(0);
        return;
      }
    }
    for (;;) {
      if (this.buf.length < 2) return;
      const b0 = this.buf[0]!;
      const b1 = this.buf[1]!;
      let len = b1 & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = this.buf.readUInt32BE(2) * 2 ** 32 + this.buf.readUInt32BE(6);
        off = 10;
      }
      if (this.buf.length < off + len) return;
      const payload = Buffer.from(this.buf.subarray(off, off + len));
      this.buf = this.buf.subarray(off + len);
      const opcode = b0 & 0x0f;
      const final = (b0 & 0x80) !== 0;
      const compressed = (b0 & 0x40) !== 0;
      if (opcode >= 8) {
        this.frames.push({ opcode, final, compressed, payload });
        continue;
      }
      if (opcode !== 0) this.fragmentCompressed = compressed;
      this.fragments.push(payload);
      if (!final) continue;
      let whole = Buffer.concat(this.fragments);
      this.fragments = [];
      if (this.fragmentCompressed) {
        whole = inflateRawSync(Buffer.concat([whole, Buffer.from([0, 0, 0xff, 0xff])]), {
          finishFlush: constants.Z_SYNC_FLUSH,
        });
      }
      this.frames.push({
        opcode: 2,
        final: true,
        compressed: this.fragmentCompressed,
        payload: whole,
      });
    }
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private async until(done: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done() && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }
}
