// max_inactivity: tells the owner of a store that a channel has had no publish, no
// subscription change and no active subscription for the channel's max_inactivity.
// The server decides what to do (the reference deletes the channel). Any store type
// uses it: activity is reported by the store's own write calls.

import type { ChannelLimits } from './limits.js';
import { startTimer } from './timers.js';
import type { StoreHooks } from './types.js';

/**
 * The max_inactivity watch of channel `name`, if it needs one: max_inactivity is set
 * and the store's owner listens (onChannelInactive). Without one, a channel's stores
 * make no call at all on activity.
 */
export function watchChannelInactivity(
  name: string,
  limits: ChannelLimits,
  hooks: StoreHooks,
  hasActiveSubs: () => boolean,
): InactivityWatch | undefined {
  const report = hooks.onChannelInactive;
  if (limits.maxInactivity <= 0 || report === undefined) return undefined;
  return new InactivityWatch(limits.maxInactivity, hasActiveSubs, () => {
    report(name);
  });
}

export class InactivityWatch {
  private lastActivity: number;
  private timer: NodeJS.Timeout | undefined;
  private reported = false;
  private stopped = false;

  constructor(
    private readonly maxIdleMs: number,
    /** True while the channel has a subscription that is not closed (offline). */
    private readonly hasActiveSubs: () => boolean,
    private readonly report: () => void,
  ) {
    this.lastActivity = Date.now();
    this.arm(maxIdleMs);
  }

  /**
   * A publish or a subscription change. Cheap enough for every publish: it only
   * records the time, and the timer is moved when it fires. A bound function: the
   * channel's stores are given it as their activity callback.
   */
  readonly touch = (): void => {
    this.lastActivity = Date.now();
    this.reported = false;
    if (this.timer === undefined && !this.stopped) this.arm(this.maxIdleMs);
  };

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(delayMs: number): void {
    this.timer = startTimer(delayMs, () => {
      this.fire();
    });
  }

  private fire(): void {
    this.timer = undefined;
    if (this.stopped) return;
    const idle = Date.now() - this.lastActivity;
    if (idle < this.maxIdleMs) {
      this.arm(this.maxIdleMs - idle);
      return;
    }
    // With an active subscription, the next subscription change or publish re-arms.
    if (this.reported || this.hasActiveSubs()) return;
    this.reported = true;
    this.report();
  }
}
