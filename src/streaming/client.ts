// A registered streaming client and its heartbeats: every hb_interval the server
// sends an empty request to the client's heartbeat inbox and waits hb_timeout; a
// reply clears the failure count, each miss adds one, and past hb_fail_count misses
// the client is closed as if it had sent a CloseRequest (the reference's
// checkClientHealth).

import type { Bus } from './bus.js';
import { EMPTY } from './bus.js';
import type { ClientRecord } from './store/types.js';
import type { Sub } from './subscription.js';

export interface HeartbeatSettings {
  readonly interval: number;
  readonly timeout: number;
  readonly failCount: number;
}

export class StanClient {
  readonly id: string;
  readonly hbInbox: string;
  readonly connID: Uint8Array;
  /** connID as a map key. */
  readonly connKey: string;
  readonly protocol: number;
  readonly pingInterval: number;
  readonly pingMaxOut: number;
  /** Online subscriptions, in the order they were added (clientsz lists them so). */
  readonly subs: Sub[] = [];
  /** Heartbeats missed in a row. */
  failedHb = 0;
  closed = false;
  private hbTimer: NodeJS.Timeout | null = null;
  private hbInFlight = false;

  constructor(record: ClientRecord) {
    this.id = record.id;
    this.hbInbox = record.hbInbox;
    this.connID = record.connID;
    this.connKey = connKey(record.connID);
    this.protocol = record.protocol;
    this.pingInterval = record.pingInterval;
    this.pingMaxOut = record.pingMaxOut;
  }

  record(): ClientRecord {
    return {
      id: this.id,
      hbInbox: this.hbInbox,
      connID: this.connID,
      protocol: this.protocol,
      pingInterval: this.pingInterval,
      pingMaxOut: this.pingMaxOut,
    };
  }

  /** Read through a call: `closed` may change while a heartbeat is awaited. */
  isClosed(): boolean {
    return this.closed;
  }

  removeSub(sub: Sub): void {
    const i = this.subs.indexOf(sub);
    if (i >= 0) this.subs.splice(i, 1);
  }

  /** Starts (or restarts after `delay`) the heartbeat loop. */
  startHeartbeats(
    bus: Bus,
    hb: HeartbeatSettings,
    onDead: (client: StanClient) => void,
    delay = hb.interval,
  ): void {
    if (this.closed) return;
    if (this.hbTimer !== null) clearTimeout(this.hbTimer);
    this.hbTimer = setTimeout(() => {
      this.hbTimer = null;
      void this.beat(bus, hb, onDead);
    }, delay);
    this.hbTimer.unref();
  }

  /** A client ping while heartbeats fail: check again almost at once (1 ms, as the reference). */
  pingReceived(bus: Bus, hb: HeartbeatSettings, onDead: (client: StanClient) => void): void {
    if (this.failedHb > 0 && !this.hbInFlight) this.startHeartbeats(bus, hb, onDead, 1);
  }

  stopHeartbeats(): void {
    this.closed = true;
    if (this.hbTimer !== null) clearTimeout(this.hbTimer);
    this.hbTimer = null;
  }

  private async beat(
    bus: Bus,
    hb: HeartbeatSettings,
    onDead: (client: StanClient) => void,
  ): Promise<void> {
    if (this.closed || this.hbInFlight) return;
    this.hbInFlight = true;
    const reply = await bus.request(this.hbInbox, EMPTY, hb.timeout);
    this.hbInFlight = false;
    if (this.isClosed()) return;
    if (reply !== null) {
      this.failedHb = 0;
    } else {
      this.failedHb++;
      if (this.failedHb > hb.failCount) {
        onDead(this);
        return;
      }
    }
    this.startHeartbeats(bus, hb, onDead);
  }
}

export function connKey(connID: Uint8Array): string {
  return Buffer.from(connID.buffer, connID.byteOffset, connID.byteLength).toString('latin1');
}
