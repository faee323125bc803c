// The SQL store's write path: group commit. Writes mark the store dirty; at the end
// of the event-loop turn (or at flush()) everything written since the last batch is
// sealed into one multi-statement text and sent as one simple query: PostgreSQL runs
// such a query as one implicit transaction, so a batch is one round trip and commits
// or fails whole. While a batch is in flight new writes gather for the next one, so
// batches grow with the load instead of round trips.
//
// When a batch fails (database gone, connection lost) it is kept and retried, ahead
// of anything newer, every RETRY_MS until it commits: every statement is idempotent
// (inserts ON CONFLICT DO NOTHING, upserts, deletes), so a batch whose COMMIT did
// happen but whose answer was lost is harmless to replay. Meanwhile `down` is set and
// the store refuses new messages (see SqlMsgStore.store), so nothing is acknowledged
// that the database does not have.

import type { Statement } from './db.js';

export const RETRY_MS = 1000;

export interface Sealed {
  /** Statements, without the separating semicolons. */
  readonly statements: Statement[];
  /** Called once the batch committed. */
  readonly onCommit: () => void;
}

export interface WriterHooks {
  /** Takes everything written since the last call; undefined if nothing was. */
  readonly seal: () => Sealed | undefined;
  /** Runs the statements as one transaction. */
  readonly exec: (statements: Statement[]) => Promise<void>;
  readonly onDown: (err: Error) => void;
  readonly onUp: () => void;
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Nobody may be waiting for a batch that fails: that is not an unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

export class BatchWriter {
  private dirty = false;
  private scheduled = false;
  private running = false;
  private failed: Sealed[] = [];
  /** Settles with the batch that will take the writes made since the last seal. */
  private next: Deferred | undefined;
  /** The last batch sealed. */
  private last: Promise<void> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private closing = false;
  /** Why the last batch failed, until one commits. */
  down: Error | undefined;

  constructor(private readonly hooks: WriterHooks) {}

  /** Something was written: commit it at the end of this turn. */
  kick(): void {
    this.dirty = true;
    if (this.down === undefined) this.schedule();
  }

  /** Resolves once everything written before the call committed. */
  flush(): Promise<void> {
    // Not durable now, and a retry is already scheduled: say so at once.
    if (this.down !== undefined) return Promise.reject(this.down);
    if (!this.dirty) return this.last;
    this.next ??= deferred();
    this.schedule();
    return this.next.promise;
  }

  /** Last attempt to write, then no more retries. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.down = undefined;
    await this.whenIdle();
    if (this.dirty || this.failed.length > 0) await this.run();
    this.stopped = true;
    await this.last.catch(() => undefined);
  }

  private async whenIdle(): Promise<void> {
    while (this.running) await this.last.catch(() => undefined);
  }

  private schedule(): void {
    if (this.scheduled || this.running || this.stopped) return;
    this.scheduled = true;
    setImmediate(this.start);
  }

  private readonly start = (): void => {
    this.scheduled = false;
    void this.run();
  };

  private async run(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      while (this.dirty || this.failed.length > 0) {
        const sealed = this.dirty ? this.hooks.seal() : undefined;
        this.dirty = false;
        const group = sealed === undefined ? this.failed : [...this.failed, sealed];
        const done = this.next ?? deferred();
        this.next = undefined;
        this.last = done.promise;
        if (group.length === 0) {
          done.resolve();
          continue;
        }
        try {
          await this.hooks.exec(group.flatMap((s) => s.statements));
        } catch (err) {
          const error = err instanceof Error ? err : new Error(String(err));
          this.failed = group;
          const wasDown = this.down !== undefined;
          this.down = error;
          if (!wasDown) this.hooks.onDown(error);
          done.reject(error);
          this.retryLater();
          return;
        }
        this.failed = [];
        for (const s of group) s.onCommit();
        if (this.down !== undefined) {
          this.down = undefined;
          this.hooks.onUp();
        }
        done.resolve();
      }
    } finally {
      this.running = false;
    }
  }

  private retryLater(): void {
    if (this.closing || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.run();
    }, RETRY_MS);
    this.retryTimer.unref();
  }
}
