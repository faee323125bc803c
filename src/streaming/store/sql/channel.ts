// A channel of the SQL store: its message and subscription stores, its max_inactivity
// watch, and its part of each batch.
import { watchChannelInactivity, type InactivityWatch } from '../inactivity.js';
import type { ChannelLimits } from '../limits.js';
import type { ChannelStore, StoreHooks } from '../types.js';
import type { SqlDialect } from './db.js';
import { SqlMsgStore, type FetchedMsg, type MsgChanges, type RecentBudget } from './msgs.js';
import { SqlSubStore, type SubIds } from './subs.js';

/** What a channel needs from its store. */
export interface SqlChannelContext {
  readonly isClosed: () => boolean;
  readonly unavailable: () => Error | undefined;
  readonly dialect: SqlDialect;
  readonly noCaching: boolean;
  /** Rows per INSERT at most (0: no limit). */
  readonly insertMaxRows: number;
  readonly budget: RecentBudget;
  readonly subIds: SubIds;
  /** The channel has changes for the next batch. */
  readonly changed: (channel: SqlChannel) => void;
  /** ... or will have in `ms` (delivery state waiting for acks). */
  readonly later: (ms: number) => void;
  readonly fetch: (channelId: number, from: number, to: number) => Promise<FetchedMsg[]>;
}

/** Everything one channel adds to a batch. */
export interface ChannelChanges {
  readonly msgs: MsgChanges;
  readonly subs: string[];
}

export class SqlChannel implements ChannelStore {
  readonly msgs: SqlMsgStore;
  readonly subs: SqlSubStore;
  /** Already in the next batch's set of changed channels. */
  queued = false;
  private readonly watch: InactivityWatch | undefined;

  constructor(
    readonly id: number,
    readonly name: string,
    readonly limits: ChannelLimits,
    ctx: SqlChannelContext,
    hooks: StoreHooks,
  ) {
    this.watch = watchChannelInactivity(name, limits, hooks, () => this.subs.hasActive());
    const touch = this.watch?.touch;
    const changed = (): void => {
      if (!this.queued) ctx.changed(this);
    };
    this.msgs = new SqlMsgStore(name, id, limits, {
      isClosed: ctx.isClosed,
      unavailable: ctx.unavailable,
      warn: hooks.warn,
      onStored: touch,
      changed,
      fetch: (from, to) => ctx.fetch(id, from, to),
      dialect: ctx.dialect,
      insertMaxRows: ctx.insertMaxRows,
      budget: ctx.budget,
    });
    this.subs = new SqlSubStore(id, limits.maxSubscriptions, {
      isClosed: ctx.isClosed,
      dialect: ctx.dialect,
      noCaching: ctx.noCaching,
      ids: ctx.subIds,
      changed,
      later: ctx.later,
      onChange: touch,
    });
  }

  /** What is due for the next batch; everything when `all` (closing). */
  takeChanges(all: boolean): ChannelChanges {
    this.queued = false;
    return { msgs: this.msgs.takeChanges(), subs: this.subs.takeChanges(all) };
  }

  /** Closing: no timer may fire any more. */
  stopTimers(): void {
    this.msgs.stopTimer();
    this.watch?.stop();
  }

  /** Deleted: no timer may fire and nothing of it may be written any more. */
  dispose(): void {
    this.msgs.stopTimer();
    this.watch?.stop();
    this.subs.dropChanges();
    this.msgs.takeChanges();
    this.msgs.clearRecent();
  }
}
