// The open files of the FILE store: every file is known by path (StoreFile) and opened
// through one pool, least recently used first, so the number of open files stays
// under fds_limit however many channels and slices there are.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

// Only writes create a file: a read of a removed slice must fail, not recreate it.
const CREATE_FLAGS = constants.O_RDWR | constants.O_CREAT;
const OPEN_FLAGS = constants.O_RDWR;

interface PoolEntry {
  readonly handle: Promise<FileHandle>;
  busy: number;
  drained: (() => void)[];
}

/**
 * Open files, least recently used first. Past the cap, idle files are closed; a file
 * in use is never closed under its user (the cap is soft), and reopens on next use.
 */
export class FilePool {
  private readonly entries = new Map<StoreFile, PoolEntry>();

  constructor(private readonly cap: number) {}

  get openCount(): number {
    return this.entries.size;
  }

  async use<T>(file: StoreFile, fn: (h: FileHandle) => Promise<T>, create = false): Promise<T> {
    let entry = this.entries.get(file);
    if (entry === undefined) {
      const flags = (create ? CREATE_FLAGS : OPEN_FLAGS) | (file.dsync ? constants.O_DSYNC : 0);
      entry = { handle: open(file.path, flags, 0o644), busy: 0, drained: [] };
      // A failed open must not stay cached.
      entry.handle.catch(() => {
        if (this.entries.get(file) === entry) this.entries.delete(file);
      });
      this.entries.set(file, entry);
      // Busy first: trimming must not close the file it is opening.
      entry.busy++;
      this.trim();
    } else {
      this.entries.delete(file);
      this.entries.set(file, entry);
      entry.busy++;
    }
    try {
      const h = await entry.handle;
      // Removed while it was being opened (a deleted channel, whose path may be a new
      // channel's by now): nothing may be written through it.
      if (create && file.dead) {
        if (this.entries.get(file) === entry) this.entries.delete(file);
        entry.drained.push(() => void closeQuietly(entry.handle));
        throw new DeadFileError(file.path);
      }
      return await fn(h);
    } finally {
      entry.busy--;
      if (entry.busy === 0) {
        if (entry.drained.length > 0) for (const done of entry.drained.splice(0)) done();
        else if (this.entries.size > this.cap) this.trim();
      }
    }
  }

  /** How many files one round may use at once, to stay under the cap. */
  get parallel(): number {
    return Math.max(1, this.cap >> 1);
  }

  /** Closes `file` once nobody uses it (before an unlink or a rename over it). */
  async close(file: StoreFile): Promise<void> {
    const entry = this.entries.get(file);
    if (entry === undefined) return;
    this.entries.delete(file);
    if (entry.busy > 0) await new Promise<void>((r) => entry.drained.push(r));
    await closeQuietly(entry.handle);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((f) => this.close(f)));
  }

  private trim(): void {
    if (this.entries.size <= this.cap) return;
    for (const [file, entry] of this.entries) {
      if (this.entries.size <= this.cap) break;
      if (entry.busy === 0) {
        this.entries.delete(file);
        void closeQuietly(entry.handle);
      }
    }
  }
}

/** A write to a file that was removed meanwhile: dropped, not a store failure. */
export class DeadFileError extends Error {
  override readonly name = 'DeadFileError';

  constructor(path: string) {
    super(`${path} was removed`);
  }
}

async function closeQuietly(handle: Promise<FileHandle>): Promise<void> {
  try {
    await (await handle).close();
  } catch {
    // Already failed to open or already closed: nothing to release.
  }
}

/** A file of the store, known by path; its handle lives in the pool. */
export class StoreFile {
  /** Removed from the store: nothing more is written to it. */
  dead = false;

  constructor(public path: string) {}

  /** Opened with O_DSYNC: a completed write is on disk, no fdatasync needed. */
  get dsync(): boolean {
    return false;
  }
}
