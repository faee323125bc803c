// The fault-tolerance lock of the SQL store, the reference's protocol on its
// StoreLock(id, tick) row, so that wirebus and nats-streaming-server servers can be
// members of one group:
//
// - Taking: in a transaction, `SELECT id, tick FROM StoreLock FOR UPDATE`; the row is
//   ours to take when there is none (INSERT), when its id is empty (a clean shutdown
//   cleared it) or ours: then `UPDATE StoreLock SET id = me, tick = tick + 1`.
// - The owner bumps the tick every refreshMs (the reference: 1 s). It gives up
//   (onLost) when the row names someone else, or when it could not bump it for 2/3 of
//   the lease, before anybody may take it.
// - A candidate that finds the same id and tick for leaseMs (the reference: 3 checks
//   1.5 s apart) steals the row (tick reset to 1).
// - A clean close clears the id, so a standby takes over at once.
//
// Besides, every write transaction of the owner reads the row under a share lock and
// commits only while it is ours (SqlDb.write's fence): a server that lost the lock
// cannot write, and the lock cannot change hands while a write runs.
import type { Row, SqlDb } from './db.js';
import { num, str } from './literal.js';

export interface LockTiming {
  /** A lock whose tick did not move for this long may be taken. */
  readonly leaseMs: number;
  /** How often the owner bumps the tick. */
  readonly refreshMs: number;
}

/** The reference's: ticks every second, stolen after 3 × 1.5 s unchanged. */
export const DEFAULT_LOCK_TIMING: LockTiming = { leaseMs: 4500, refreshMs: 1000 };

/** StoreLock.id is VARCHAR(30). */
export const MAX_OWNER_LENGTH = 30;

export class SqlLock {
  private timer: NodeJS.Timeout | undefined;
  private refreshing = false;
  /** When the last successful refresh (or the take) was sent. */
  private lastOk = 0;
  /** The owner and tick seen by the last failed try, and since when unchanged. */
  private seen: { id: string; tick: number; since: number } | undefined;
  held = false;
  /**
   * Set once the lock was taken, never cleared: from then on every write checks
   * ownership, so writes keep failing after the lock is lost.
   */
  fencing = false;

  constructor(
    private readonly db: () => Promise<SqlDb>,
    readonly owner: string,
    private readonly timing: LockTiming,
    private readonly onLost: (why: string) => void,
  ) {
    if (owner.length > MAX_OWNER_LENGTH) {
      throw new Error(`sql: lock owner "${owner}" is longer than ${MAX_OWNER_LENGTH}`);
    }
  }

  /** Takes the row if it is free, ours, or stale; true if we hold it now. */
  async tryLock(): Promise<boolean> {
    if (this.held) return true;
    const db = await this.db();
    const sentAt = Date.now();
    const me = db.dialect.text(this.owner);
    const got = await db.lockTransaction(async (q) => {
      const [row] = await q('SELECT id, tick FROM StoreLock FOR UPDATE');
      if (row === undefined) {
        await q(`INSERT INTO StoreLock (id, tick) VALUES (${me}, 1)`);
        return true;
      }
      const { id, tick } = lockRow(row);
      if (id === '' || id === this.owner || this.stale(id, tick)) {
        const next = id === '' || id === this.owner ? tick + 1 : 1;
        await q(`UPDATE StoreLock SET id = ${me}, tick = ${next}`);
        return true;
      }
      return false;
    });
    if (!got) return false;
    this.seen = undefined;
    this.held = true;
    this.fencing = true;
    this.lastOk = sentAt;
    this.timer = setInterval(() => {
      void this.refresh();
    }, this.timing.refreshMs);
    this.timer.unref();
    return true;
  }

  /** Clean shutdown: frees the row at once, so a standby need not wait for the lease. */
  async release(): Promise<void> {
    if (!this.held) return;
    this.stop();
    const db = await this.db();
    await db
      .lockTransaction((q) =>
        q(`UPDATE StoreLock SET id = '', tick = 0 WHERE id = ${db.dialect.text(this.owner)}`),
      )
      .catch(() => undefined);
  }

  // Unchanged (id, tick) for leaseMs: its owner stopped bumping it.
  private stale(id: string, tick: number): boolean {
    const now = Date.now();
    if (this.seen === undefined || this.seen.id !== id || this.seen.tick !== tick) {
      this.seen = { id, tick, since: now };
      return false;
    }
    return now - this.seen.since >= this.timing.leaseMs;
  }

  private stop(): void {
    this.held = false;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private lose(why: string): void {
    if (!this.held) return;
    this.stop();
    this.onLost(why);
  }

  private async refresh(): Promise<void> {
    if (Date.now() - this.lastOk > (this.timing.leaseMs * 2) / 3) {
      this.lose('could not refresh the store lock in time');
      return;
    }
    if (this.refreshing) return;
    this.refreshing = true;
    const sentAt = Date.now();
    try {
      const db = await this.db();
      const mine = await db.lockTransaction(async (q) => {
        const [row] = await q('SELECT id, tick FROM StoreLock FOR UPDATE');
        if (row === undefined) return false;
        const { id, tick } = lockRow(row);
        if (id !== this.owner) return false;
        await q(`UPDATE StoreLock SET id = ${db.dialect.text(this.owner)}, tick = ${tick + 1}`);
        return true;
      });
      if (mine) this.lastOk = sentAt;
      else this.lose('another server took the store lock');
    } catch {
      // Retried at the next tick; the deadline above decides when to give up.
    } finally {
      this.refreshing = false;
    }
  }
}

function lockRow(row: Row): { id: string; tick: number } {
  return { id: str(row[0]), tick: num(row[1]) };
}
