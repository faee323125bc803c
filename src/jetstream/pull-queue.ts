// A pull consumer's waiting MSG.NEXT requests, oldest first. The delivery loop serves the
// first one and, once it has what it asked for, moves past it by advancing a head index:
// the same statements run after every delivery, done or not. With `shift()` on the done
// branch, that branch first ran after V8 had optimised the delivery loop (a batch of
// 1,000 ends after the loop is hot), and V8 threw the loop and everything inlined into
// it away to compile it again. Served entries are dropped from the array by `live()`,
// which everything off the delivery path uses; its statements too run on every call.

export interface PullRequest {
  reply: string;
  batch: number;
  /** Bytes it may still receive (max_bytes), Infinity without a limit. */
  bytesLeft: number;
  /** Deliveries made for it. */
  delivered: number;
  /** Deadline (ms, Date.now clock), 0 for none. */
  expires: number;
  noWait: boolean;
  /** Heartbeat interval (ms), 0 for none, and when the next is due. */
  hb: number;
  hbNext: number;
}

export class PullQueue {
  private readonly items: PullRequest[] = [];
  /** Entries before it were served and wait for `live()` to drop them. */
  private head = 0;

  /** The request to serve next (the delivery path). */
  first(): PullRequest | undefined {
    return this.items[this.head];
  }

  /** After a delivery to `first()`: moves past it when `done`. */
  served(done: boolean): void {
    this.head += done ? 1 : 0;
  }

  get size(): number {
    return this.items.length - this.head;
  }

  push(req: PullRequest): void {
    this.items.push(req);
  }

  /** Takes `req` out (ended by a no_wait or a timeout) wherever it is. */
  remove(req: PullRequest): void {
    const i = this.items.indexOf(req, this.head);
    if (i >= 0) this.items.splice(i, 1);
  }

  /**
   * The requests not yet served, oldest first, as an array the caller may change
   * (splice, iterate). A no-op move when nothing was served: no branch first taken late.
   */
  live(): PullRequest[] {
    const items = this.items;
    const head = this.head;
    items.copyWithin(0, head);
    items.length -= head;
    this.head = 0;
    return items;
  }
}
