// Fault tolerance (`--ft_group NAME`, spec §5.1): several servers share one store (a
// FILE directory or the SQL database); the one holding the store's exclusive lock is
// active, the others are standbys that serve no streaming client and do not read the
// store.
//
// - The active server publishes a heartbeat every HB_INTERVAL_MS (±10%) on
//   `_STAN.ft.<cluster_id>.<ft_group>`: CtrlMsg{FTHeartbeat, ServerID, Data:
//   activation time}.
// - A standby that has heard no heartbeat for HB_TIMEOUT_MS (±10%) tries the lock
//   (store.tryExclusiveLock(): a lock file for FILE, the wb_lock row for SQL). The
//   lock is what makes a server active, never the heartbeats: a standby that misses
//   heartbeats while the active still holds the lock just tries again later.
// - Once it holds the lock it heartbeats at once (other standbys keep waiting), then
//   recovers the store and opens the client subjects (FtHost.activate).
// - An active server that hears another active one with an earlier activation time
//   aborts, as the reference (`ft: serverID "x" claims to be active, aborting`). So
//   does one whose store reports the lock lost (see SqlLock).

import { spb as spbImpl } from './protocol/generated/static.js';
import type { spb as SpbTypes } from './protocol/generated/static-types.js';
import type { Bus, BusSubscription } from './bus.js';
import type { Store } from './store/types.js';

const spb = spbImpl as unknown as typeof SpbTypes;
const FT_HEARTBEAT = spb.CtrlMsg.Type.FTHeartbeat;

export interface FtTiming {
  /** Active server's heartbeat period. */
  readonly hbInterval: number;
  /** Silence after which a standby tries the lock. */
  readonly hbTimeout: number;
}

/** The reference's: 1 s heartbeats, 1.25 s before trying the lock. */
export const DEFAULT_FT_TIMING: FtTiming = { hbInterval: 1000, hbTimeout: 1250 };

/** What fault tolerance needs from the streaming server. */
export interface FtHost {
  readonly serverId: string;
  readonly clusterId: string;
  readonly bus: Pick<Bus, 'subscribe' | 'publish'>;
  readonly store: Pick<Store, 'tryExclusiveLock'>;
  readonly logger: {
    info(m: string): void;
    error(m: string): void;
  };
  /** The lock is ours: recover the store and serve clients. */
  activate(): Promise<void>;
  /** Stop serving at once (lost lock, two actives), logging why. */
  abort(reason: string): void;
}

export function ftSubject(clusterId: string, group: string): string {
  return `_STAN.ft.${clusterId}.${group}`;
}

/** ±10%, so that standbys started together do not try the lock in step. */
function jitter(ms: number): number {
  return ms * (0.9 + Math.random() * 0.2);
}

export class FtMember {
  readonly subject: string;
  private hbSub: BusSubscription | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private hbTimer: NodeJS.Timeout | undefined;
  private lastHeard = Date.now();
  private activatedAt: Date | undefined;
  private trying = false;
  private stopped = false;

  constructor(
    private readonly host: FtHost,
    readonly group: string,
    private readonly timing: FtTiming = DEFAULT_FT_TIMING,
  ) {
    this.subject = ftSubject(host.clusterId, group);
  }

  get isActive(): boolean {
    return this.activatedAt !== undefined;
  }

  /** Starts as a standby: listens for heartbeats and watches for their absence. */
  start(): void {
    this.hbSub = this.host.bus.subscribe(this.subject, (_s, _r, data) => {
      this.onHeartbeat(data);
    });
    this.lastHeard = Date.now();
    this.host.logger.info(`STAN: Starting in standby mode (ft group "${this.group}")`);
    this.scheduleCheck();
  }

  stop(): void {
    this.stopped = true;
    this.hbSub?.unsubscribe();
    if (this.checkTimer !== undefined) clearTimeout(this.checkTimer);
    if (this.hbTimer !== undefined) clearTimeout(this.hbTimer);
  }

  private isStopped(): boolean {
    return this.stopped;
  }

  private scheduleCheck(): void {
    if (this.stopped || this.isActive) return;
    this.checkTimer = setTimeout(
      () => {
        void this.check();
      },
      jitter(this.timing.hbTimeout / 2),
    );
  }

  private async check(): Promise<void> {
    if (this.stopped || this.isActive || this.trying) return;
    if (Date.now() - this.lastHeard < jitter(this.timing.hbTimeout)) {
      this.scheduleCheck();
      return;
    }
    this.trying = true;
    let locked = false;
    try {
      locked = await this.host.store.tryExclusiveLock();
    } catch (err) {
      this.host.logger.error(`STAN: ft: unable to get the store lock: ${String(err)}`);
    } finally {
      this.trying = false;
    }
    // stop() may have run while the lock was being tried.
    if (this.isStopped()) return;
    if (!locked) {
      this.scheduleCheck();
      return;
    }
    this.activatedAt = new Date();
    this.host.logger.info('STAN: ft: got the store lock, this server is now active');
    this.heartbeat();
    try {
      await this.host.activate();
    } catch (err) {
      this.host.abort(
        `ft: unable to activate: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  private heartbeat(): void {
    if (this.stopped || this.activatedAt === undefined) return;
    const msg = spb.CtrlMsg.encode({
      MsgType: FT_HEARTBEAT,
      ServerID: this.host.serverId,
      Data: Buffer.from(this.activatedAt.toISOString()),
    }).finish();
    this.host.bus.publish(this.subject, null, msg);
    this.hbTimer = setTimeout(() => {
      this.heartbeat();
    }, jitter(this.timing.hbInterval));
  }

  private onHeartbeat(data: Buffer): void {
    let m: SpbTypes.CtrlMsg;
    try {
      m = spb.CtrlMsg.decode(data);
    } catch {
      return;
    }
    if (m.MsgType !== FT_HEARTBEAT || m.ServerID === this.host.serverId) return;
    this.lastHeard = Date.now();
    if (this.activatedAt === undefined) return;
    // Two actives: the store lock says it cannot happen. If it does, as the reference:
    // the one that became active later leaves (the other one was serving first).
    const theirs = Date.parse(Buffer.from(m.Data).toString());
    const reason = `ft: serverID "${m.ServerID}" claims to be active`;
    if (Number.isFinite(theirs) && theirs < this.activatedAt.getTime()) {
      this.stop();
      this.host.abort(reason);
    } else {
      this.host.logger.error(`STAN: ${reason}`);
    }
  }
}
