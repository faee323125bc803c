// The directory lock: one server writes a store at a time. Node has no fcntl lock, so
// the lock is a file created exclusively (O_EXCL) that names its owner (host, pid and
// a random id) and whose mtime the owner refreshes every second.
//
// The owner is gone when, on this host, its process no longer exists (a kill -9
// frees the lock at once, as the reference's fcntl lock does), or when the lock has
// not been refreshed for STALE_MS (another host, or a reused pid). A stale lock is
// removed and created again; two servers racing for the same stale lock both check,
// after a short wait, that the file still names them, and the owner checks it on
// every refresh, so a lost race or a stolen lock is noticed (onLost).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const LOCK_FILE = '.rootdir.lck';
const REFRESH_MS = 1000;
const STALE_MS = 10_000;
const RACE_CHECK_MS = 50;

/** Lock ids held by stores of this process: a same-pid lock not listed here is stale. */
const heldHere = new Set<string>();

interface LockOwner {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly since: string;
}

export class DirLock {
  readonly path: string;
  private readonly me: LockOwner;
  private held = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    dir: string,
    private readonly onLost: (owner: string) => void,
  ) {
    this.path = join(dir, LOCK_FILE);
    this.me = {
      id: randomBytes(9).toString('base64url'),
      host: hostname(),
      pid: process.pid,
      since: new Date().toISOString(),
    };
  }

  get isHeld(): boolean {
    return this.held;
  }

  /** True if this store holds the lock now; false if another live server does. */
  async tryLock(): Promise<boolean> {
    if (this.held) return true;
    if (await this.create()) return this.acquired();
    const owner = await this.readOwner();
    if (!(await this.isStale(owner))) return false;
    // Stale: remove it and race for a fresh one.
    await unlink(this.path).catch(ignoreMissing);
    if (!(await this.create())) return false;
    await sleep(RACE_CHECK_MS);
    if ((await this.readOwner())?.id !== this.me.id) return false;
    return this.acquired();
  }

  /** Who holds the lock, for error messages. */
  async describeOwner(): Promise<string> {
    const o = await this.readOwner();
    return o === undefined ? 'an unknown process' : `pid ${o.pid} on host ${o.host}`;
  }

  async release(): Promise<void> {
    if (!this.held) return;
    this.stopRefresh();
    this.held = false;
    heldHere.delete(this.me.id);
    if ((await this.readOwner())?.id === this.me.id) await unlink(this.path).catch(ignoreMissing);
  }

  private acquired(): boolean {
    this.held = true;
    heldHere.add(this.me.id);
    this.timer = setInterval(() => {
      void this.refresh();
    }, REFRESH_MS);
    this.timer.unref();
    return true;
  }

  private stopRefresh(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async refresh(): Promise<void> {
    if (!this.held) return;
    const owner = await this.readOwner();
    // Released while reading.
    if (!this.isHeld) return;
    if (owner?.id !== this.me.id) {
      this.held = false;
      heldHere.delete(this.me.id);
      this.stopRefresh();
      this.onLost(owner === undefined ? 'nobody' : `pid ${owner.pid} on host ${owner.host}`);
      return;
    }
    const now = new Date();
    await utimes(this.path, now, now).catch(() => undefined);
  }

  private async create(): Promise<boolean> {
    try {
      await writeFile(this.path, JSON.stringify(this.me) + '\n', { flag: 'wx', mode: 0o644 });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  }

  private async readOwner(): Promise<LockOwner | undefined> {
    try {
      const parsed: unknown = JSON.parse(await readFile(this.path, 'utf8'));
      if (typeof parsed !== 'object' || parsed === null) return undefined;
      const o = parsed as Record<string, unknown>;
      if (typeof o.id !== 'string' || typeof o.host !== 'string' || typeof o.pid !== 'number') {
        return undefined;
      }
      return { id: o.id, host: o.host, pid: o.pid, since: String(o.since) };
    } catch {
      // Missing, or half written by a creator that died: treated as no owner.
      return undefined;
    }
  }

  private async isStale(owner: LockOwner | undefined): Promise<boolean> {
    // Unreadable: a creator that died while writing it, or one still writing it (young).
    const maxAge = owner === undefined ? REFRESH_MS : STALE_MS;
    if (owner !== undefined && owner.host === this.me.host) {
      if (owner.pid === process.pid) return !heldHere.has(owner.id);
      if (!processExists(owner.pid)) return true;
    }
    try {
      const { mtimeMs } = await stat(this.path);
      return Date.now() - mtimeMs > maxAge;
    } catch {
      return true;
    }
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists, owned by another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed process whose parent has not reaped it yet still answers signal 0.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

function ignoreMissing(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
}
