// A channel of the FILE store: the directory DIR/<name>/ with its message log and
// subs.dat, and the max_inactivity watch.
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { IoScheduler } from './file-io.js';
import type { StoreFile } from './file-pool.js';
import { recoverMsgs } from './file-msgs-recover.js';
import { type CacheBudget, FileMsgStore, type RecoveredMsgs } from './file-msgs.js';
import { sliceLimits, type FileStoreTuning } from './file-options.js';
import { Crc32 } from './file-record.js';
import { FileSubStore, recoverSubs, SUBS_FILE, type RecoveredSubs } from './file-subs.js';
import { watchChannelInactivity, type InactivityWatch } from './inactivity.js';
import type { ChannelLimits } from './limits.js';
import type { ChannelStore, StoreHooks } from './types.js';

export interface ChannelContext {
  readonly io: IoScheduler;
  readonly tuning: FileStoreTuning;
  readonly isClosed: () => boolean;
  readonly hooks: StoreHooks;
  readonly warn: (text: string) => void;
  /** The read caches' total, shared by the store's channels. */
  readonly cache: CacheBudget;
}

export interface RecoveredChannel {
  readonly msgs: RecoveredMsgs;
  readonly subs: RecoveredSubs;
}

export class FileChannel implements ChannelStore {
  readonly msgs: FileMsgStore;
  readonly subs: FileSubStore;
  private readonly watch: InactivityWatch | undefined;

  constructor(
    readonly name: string,
    readonly dir: string,
    readonly limits: ChannelLimits,
    ctx: ChannelContext,
    recovered: RecoveredChannel | undefined,
  ) {
    this.watch = watchChannelInactivity(name, limits, ctx.hooks, () => this.subs.hasActive());
    const touch = this.watch?.touch;
    this.msgs = new FileMsgStore(
      name,
      dir,
      limits,
      {
        isClosed: ctx.isClosed,
        warn: ctx.warn,
        onStored: touch,
        io: ctx.io,
        tuning: ctx.tuning,
        sliceLimits: sliceLimits(ctx.tuning, limits),
        crc: Crc32.of(ctx.tuning.crcPoly),
        cache: ctx.cache,
      },
      recovered?.msgs,
    );
    this.subs = new FileSubStore(
      join(dir, SUBS_FILE),
      limits.maxSubscriptions,
      { io: ctx.io, tuning: ctx.tuning, isClosed: ctx.isClosed, onChange: touch },
      recovered?.subs,
    );
  }

  /** Stops timers; with `dead`, nothing more is written (the channel is deleted). */
  dispose(dead: boolean): StoreFile[] {
    this.msgs.stopTimer();
    this.watch?.stop();
    if (!dead) return [];
    this.msgs.markDeleted();
    const files = [...this.msgs.files(), this.subs.log.file];
    for (const f of files) f.dead = true;
    return files;
  }
}

/** Reads a channel directory back: its message slices and its subscriptions. */
export async function recoverChannel(dir: string, ctx: ChannelContext): Promise<RecoveredChannel> {
  for (const name of await readdir(dir)) {
    // A replacement (index rebuild, compaction) that a crash interrupted.
    if (name.endsWith('.tmp')) await unlink(join(dir, name));
  }
  const warn = ctx.warn;
  const msgs = await recoverMsgs(dir, { io: ctx.io, tuning: ctx.tuning, warn });
  const subs = await recoverSubs(join(dir, SUBS_FILE), ctx.tuning, warn);
  return { msgs, subs };
}
