// The fault-tolerance lock of the SQL store: the one row of wb_lock names the active
// server. As the reference's StoreLock, the owner keeps it alive (every refreshMs)
// and another server may take it once it is stale. Staleness is judged on the
// database's clock in the same UPDATE that takes the row, so the servers' clocks
// never matter and two candidates cannot both win.
//
// An owner that cannot refresh for 2/3 of the lease gives up by itself (onLost)
// before anybody may take the row; and every write transaction checks ownership
// (wb_check_lock, see schema.ts), so a server that lost the lock writes nothing.
import type pg from 'pg';

export interface LockTiming {
  /** A lock not refreshed for this long may be taken. */
  readonly leaseMs: number;
  /** How often the owner refreshes it. */
  readonly refreshMs: number;
}

export const DEFAULT_LOCK_TIMING: LockTiming = { leaseMs: 3000, refreshMs: 750 };

export class SqlLock {
  private timer: NodeJS.Timeout | undefined;
  private refreshing = false;
  /** When the last successful refresh (or the take) was sent. */
  private lastOk = 0;
  held = false;
  /**
   * Set once the lock was taken, never cleared: from then on every write checks
   * ownership, so writes keep failing after the lock is lost.
   */
  fencing = false;

  constructor(
    private readonly pool: pg.Pool,
    readonly owner: string,
    private readonly timing: LockTiming,
    private readonly onLost: (why: string) => void,
  ) {}

  /** Takes the row if it is free, ours, or stale; true if we hold it now. */
  async tryLock(): Promise<boolean> {
    if (this.held) return true;
    const sentAt = Date.now();
    const res = await this.pool.query(
      `UPDATE wb_lock SET owner = $1, tick = 0, updated_at = clock_timestamp()
        WHERE id = 1 AND (owner = '' OR owner = $1
          OR updated_at < clock_timestamp() - make_interval(secs => $2))`,
      [this.owner, this.timing.leaseMs / 1000],
    );
    if (res.rowCount !== 1) return false;
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
    await this.pool
      .query(`UPDATE wb_lock SET owner = '' WHERE id = 1 AND owner = $1`, [this.owner])
      .catch(() => undefined);
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
      const res = await this.pool.query(
        `UPDATE wb_lock SET tick = tick + 1, updated_at = clock_timestamp()
          WHERE id = 1 AND owner = $1`,
        [this.owner],
      );
      if (res.rowCount === 1) this.lastOk = sentAt;
      else this.lose('another server took the store lock');
    } catch {
      // Retried at the next tick; the deadline above decides when to give up.
    } finally {
      this.refreshing = false;
    }
  }
}
