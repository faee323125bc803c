// Back-pressure between connections: how a publisher is held while a subscriber it
// feeds is behind, and when a subscriber that does not keep up is cut off. The
// rules (docs/design/slow-consumers.md has the reasoning):
//
// - A subscriber's pending output is what our outbound block and the socket's own
//   buffer hold. Past max_pending it is cut off at once (Slow Consumer (Pending
//   Bytes)); a route is never cut off for pending bytes, as in the reference.
// - Past half of max_pending, the publisher whose read pushed it there stops being
//   read (its socket is paused) while the subscriber drains. The hold lasts while
//   the subscriber's socket makes progress; a subscriber that wrote nothing for
//   STALL_MS is stuck: the publisher goes on and the subscriber is not allowed to
//   hold anybody again until its socket drains, so a dead subscriber reaches
//   max_pending and is cut off instead of pinning its publishers for write_deadline.
// - A socket with unwritten output that writes nothing for write_deadline is cut
//   off (Slow Consumer (Write Deadline)).
// - Only a read holds a publisher: output queued from a timer (a keep-alive PING)
//   or an in-process publisher never pauses anybody.
//
// Everything here runs per read or per timer, never per message.

import type { Transport } from './transport.js';

/** How long a subscriber that writes nothing may hold its publishers (the reference's stall cap). */
export const STALL_MS = 1000;

/** The side of a connection that back-pressure needs: its socket and its pending output. */
export interface FlowConnection {
  readonly socket: Transport | null;
  readonly closed: boolean;
  /** Output the kernel has not taken yet: queued in our blocks, or held by the socket. */
  readonly outBacklog: number;
  /** Closes this connection as a slow consumer. */
  slowConsumer(deadline: boolean): void;
}

export class Flow {
  /** Bytes handed to the socket so far; minus writableLength, what the kernel took. */
  handed = 0;
  /** How many subscribers hold this connection's reads (it is a publisher). */
  private holders = 0;
  /** Publishers this connection holds (it is a subscriber). */
  private held: Flow[] | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  private stallMark = 0;
  /** Wrote nothing for STALL_MS while holding: holds nobody until its socket drains. */
  stuck = false;
  private deadlineTimer: NodeJS.Timeout | null = null;
  private deadlineMark = 0;
  /** Listed in the server's congested list of the current read. */
  listed = false;

  constructor(
    private readonly conn: FlowConnection,
    private readonly writeDeadline: () => number,
    private readonly halfPending: () => number,
    /** Routes hold publishers however long the other server takes. */
    private readonly isRoute: boolean,
  ) {}

  /** Bytes the kernel has taken from us so far. */
  private written(): number {
    const socket = this.conn.socket;
    return this.handed - (socket === null ? 0 : socket.writableLength);
  }

  private pending(): number {
    return this.conn.outBacklog;
  }

  /** After a flush left output in the socket: the write deadline starts watching. */
  backlogged(): void {
    if (this.deadlineTimer !== null) return;
    this.deadlineMark = this.written();
    this.deadlineTimer = setTimeout(this.onDeadline, this.writeDeadline());
    this.deadlineTimer.unref();
  }

  private readonly onDeadline = (): void => {
    this.deadlineTimer = null;
    const socket = this.conn.socket;
    if (this.conn.closed || socket === null || socket.writableLength === 0) return;
    const w = this.written();
    if (w === this.deadlineMark) {
      this.conn.slowConsumer(true);
      return;
    }
    this.backlogged();
  };

  /** True when this subscriber may hold a publisher now. */
  mayHold(): boolean {
    return !this.conn.closed && (!this.stuck || this.isRoute);
  }

  /** Holds producer's reads until this connection drains or stalls (see the file's comment). */
  hold(producer: Flow, producerSocket: Transport): void {
    if (producer === this || !this.mayHold()) return;
    if (this.pending() <= this.halfPending()) return;
    this.held ??= [];
    if (this.held.includes(producer)) return;
    this.held.push(producer);
    if (producer.holders++ === 0) producerSocket.pause();
    if (this.stallTimer === null) {
      this.stallMark = this.written();
      this.stallTimer = setTimeout(this.onStall, STALL_MS);
      this.stallTimer.unref();
    }
  }

  private readonly onStall = (): void => {
    this.stallTimer = null;
    if (this.conn.closed) return;
    const w = this.written();
    if (this.pending() > this.halfPending() && (w > this.stallMark || this.isRoute)) {
      // Still behind but writing: the hold goes on.
      this.stallMark = w;
      this.stallTimer = setTimeout(this.onStall, STALL_MS);
      this.stallTimer.unref();
      return;
    }
    if (w === this.stallMark) this.stuck = true;
    this.release();
  };

  /** The socket wrote everything out: held publishers go on, and this one may hold again. */
  drained(): void {
    this.stuck = false;
    this.release();
  }

  /** Lets every publisher this connection holds go on (also at its close). */
  release(): void {
    if (this.stallTimer !== null) {
      clearTimeout(this.stallTimer);
      this.stallTimer = null;
    }
    const held = this.held;
    if (held === null) return;
    this.held = null;
    for (const p of held) p.unhold();
  }

  private unhold(): void {
    if (--this.holders > 0) return;
    this.holders = 0;
    const socket = this.conn.socket;
    if (socket !== null && !this.conn.closed) socket.resume();
  }

  /** True while some subscriber holds this publisher's reads. */
  get isHeld(): boolean {
    return this.holders > 0;
  }

  /** The connection closed: no more timers, and whoever it held goes on. */
  closed(): void {
    this.release();
    if (this.deadlineTimer !== null) {
      clearTimeout(this.deadlineTimer);
      this.deadlineTimer = null;
    }
  }
}
