// A channel of the SQL store: its message and subscription stores, its max_inactivity
// watch, and its part of each batch.
import { watchChannelInactivity, type InactivityWatch } from '../inactivity.js';
import type { ChannelLimits } from '../limits.js';
import type { ChannelStore, StoreHooks } from '../types.js';
import { int } from './literal.js';
import { SqlMsgStore, type MsgChanges, type StoredBlock } from './msgs.js';
import { SqlSubStore, type SubChanges } from './subs.js';

/** What a channel needs from its store. */
export interface SqlChannelContext {
  readonly isClosed: () => boolean;
  readonly unavailable: () => Error | undefined;
  /** The channel has changes for the next batch. */
  readonly changed: (channel: SqlChannel) => void;
  /** ... or will have in `ms` (delivery state waiting for acks). */
  readonly later: (ms: number) => void;
  readonly fetch: (channelId: number, from: number, to: number) => Promise<StoredBlock[]>;
}

/** Everything one channel adds to a batch. */
export interface ChannelChanges {
  readonly msgs: MsgChanges;
  readonly subs: SubChanges;
  /** `(id, first_seq, last_seq, max_sub_id)` for the wb_channels update. */
  readonly channelRow: string;
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
    });
    this.subs = new SqlSubStore(id, limits.maxSubscriptions, {
      isClosed: ctx.isClosed,
      changed,
      later: ctx.later,
      onChange: touch,
    });
  }

  /** What is due for the next batch; everything when `all` (closing). */
  takeChanges(all: boolean): ChannelChanges {
    this.queued = false;
    return {
      msgs: this.msgs.takeChanges(),
      subs: this.subs.takeChanges(all),
      channelRow:
        `(${this.id},${int(this.msgs.firstSequence)},${int(this.msgs.lastSequence)},` +
        `${int(this.subs.maxSubId)})`,
    };
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
  }
}
