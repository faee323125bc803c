// A raw TCP client for transcript tests: send bytes, read what the server answers,
// and tell whether it closed the connection.

import { connect, type Socket } from 'node:net';

export class RawClient {
  private readonly socket: Socket;
  private data = Buffer.alloc(0);
  /** The INFO line the server sent on accept. */
  info = '';
  closed = false;
  private waiters: (() => void)[] = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.data = Buffer.concat([this.data, chunk]);
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

  /** Connects and reads the INFO line. */
  static async open(port: number, host = '127.0.0.1'): Promise<RawClient> {
    const socket = connect({ port, host });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const c = new RawClient(socket);
    await c.waitFor((d) => d.includes('\r\n'), 2000);
    const text = c.data.toString('latin1');
    const end = text.indexOf('\r\n') + 2;
    c.info = text.slice(0, end);
    c.data = c.data.subarray(end);
    return c;
  }

  /** The parsed INFO JSON. */
  infoJson(): Record<string, unknown> {
    const m = /^INFO (.*) \r\n$/.exec(this.info);
    if (m === null) throw new Error(`not an INFO line: ${JSON.stringify(this.info)}`);
    return JSON.parse(m[1]!) as Record<string, unknown>;
  }

  send(bytes: string | Buffer): void {
    this.socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  }

  /** Everything received so far (and clears it). */
  take(): string {
    const text = this.data.toString('latin1');
    this.data = Buffer.alloc(0);
    return text;
  }

  /** Waits until the received text satisfies the predicate, the socket closes, or time runs out. */
  async waitFor(predicate: (text: string) => boolean, ms = 2000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!predicate(this.data.toString('latin1'))) {
      if (this.closed) return predicate(this.data.toString('latin1'));
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return true;
  }

  /** Waits for the socket to close; true if it did within ms. */
  async waitClosed(ms = 2000): Promise<boolean> {
    await this.waitFor(() => false, ms);
    return this.closed;
  }

  /**
   * Sends bytes and collects the reply: everything up to the text `until` (default:
   * a PONG at the end), or until the server closes, or `quietMs` pass.
   */
  async exchange(bytes: string | Buffer, until = 'PONG\r\n', ms = 2000): Promise<string> {
    this.send(bytes);
    await this.waitFor((t) => t.endsWith(until), ms);
    return this.take();
  }

  close(): void {
    this.socket.destroy();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

/** `CONNECT {"verbose":false,"pedantic":false}\r\n`, the spec's C0. */
export const C0 = 'CONNECT {"verbose":false,"pedantic":false}\r\n';
