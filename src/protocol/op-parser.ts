// What the client and route parsers share around their state machines: parse()
// feeds one read to the machine and then lets go of it (MessageFields.detach), and
// a CONNECT that waits for its verdict holds every later byte until resume().

import { MessageFields } from './message-fields.js';

export abstract class OpParser extends MessageFields {
  private suspended = false;
  private held: Buffer | null = null;

  /**
   * Called by the handler inside onConnect when it cannot answer at once (a bcrypt
   * check runs off the event loop): parse() returns right after that CONNECT and
   * holds the rest of the read, and any later read, until resume(). Ops after a
   * CONNECT must wait for its verdict, as they would behind the reference's
   * synchronous check.
   */
  suspend(): void {
    this.suspended = true;
  }

  /** The handler called suspend() (a CONNECT awaits its verdict). */
  isSuspended(): boolean {
    return this.suspended;
  }

  /** Parses what suspend() held back, in order. */
  resume(): void {
    this.suspended = false;
    const held = this.held;
    this.held = null;
    if (held !== null) this.parse(held);
  }

  parse(buf: Buffer): void {
    if (this.suspended) {
      // Copies: the read buffer may be shared and reused by the next read.
      this.held = this.held === null ? Buffer.from(buf) : Buffer.concat([this.held, buf]);
      return;
    }
    this.parseRead(buf);
    this.detach(buf, this.inMessage());
  }

  /** Holds buf from `from` on, behind the CONNECT that just suspended parsing. */
  protected holdRest(buf: Buffer, from: number): void {
    if (from < buf.length) this.held = Buffer.from(buf.subarray(from));
  }

  /** Runs the state machine over one read. */
  protected abstract parseRead(buf: Buffer): void;

  /** A message is partly read: its fields must outlive this read. */
  protected abstract inMessage(): boolean;
}
