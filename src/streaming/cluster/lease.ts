// Leader election for clustered streaming, from the replicated engine itself: the
// Leader holds a lease, the key `leader` of a replicated key-value bucket, and renews
// it by compare-and-set on the key's revision (docs/design/clustered-streaming.md
// argues why two Leaders never coexist):
//
// - The Leader renews every renewInterval with update(key, value, its revision). A
//   renewal sent at t and acknowledged makes it Leader until t + leaseTimeout (t is
//   taken before the request leaves, so the lease never lasts longer than JetStream
//   saw it). When that time comes without a newer renewal, it stops acting (a timer,
//   not the renewal loop, so a slow request cannot delay it). A renewal refused
//   because the revision moved means someone else holds the lease: it steps down at
//   once.
// - A lease that ran out without being taken (no renewal got through: JetStream was
//   electing the bucket's raft leader, the connection was moving to another server)
//   suspends the Leader instead: it does nothing a client can see, and the renewals go
//   on against its revision. One that succeeds proves nobody took the lease meanwhile
//   (a take writes a new revision), so the Leader resumes where it stood; a refused one
//   means another node holds it, and so does `suspendLimit` without success: then it
//   steps down.
// - Another node reads the key every renewInterval. Once it has seen the same
//   revision for electionTimeout (> leaseTimeout) on its own clock, the Leader that
//   wrote it has stopped acting, whatever it is doing; then the node takes the lease
//   with update(key, value, that revision), which JetStream accepts for one node only.
//   A node that sees the lease released (a Leader that stopped cleanly) takes it at once.
//   A read that fails starts that count again: a Leader suspended while the bucket had
//   no raft leader renews within one interval once it has one, before anyone could
//   take over.
// - A missing key is created with create(), which also succeeds for one node only.
// - A renewal in flight when the lease's connection moves to another server (its
//   server was killed) is given up, and the next one sent at once through the new
//   server (reconnected()): its answer is lost with the old connection, and waiting
//   for its timeout would let the lease lapse. A given-up renewal never extends the
//   lease; the compare-and-set alone says who holds it.
//
// Clocks: only durations on each node's monotonic clock are compared, never
// timestamps across nodes. Clock rates may differ by the margin electionTimeout -
// leaseTimeout over one lease.

import type { JetStreamClient } from 'nats';

/**
 * The part of a key-value bucket the lease uses. update() must be a true
 * compare-and-set in log order: `leaseBucket()` below, not the `nats` client's
 * kv.update().
 */
export interface LeaseBucket {
  get(key: string): Promise<{
    readonly revision: number;
    readonly value: Uint8Array;
    readonly operation: string;
  } | null>;
  create(key: string, value: Uint8Array): Promise<number>;
  update(key: string, value: Uint8Array, revision: number): Promise<number>;
}

export interface LeaseTiming {
  readonly renewInterval: number;
  readonly leaseTimeout: number;
  readonly electionTimeout: number;
  /** How long a Leader whose lease ran out stays suspended before it steps down. */
  readonly suspendLimit: number;
}

export type Role = 'Leader' | 'Follower' | 'Candidate';

export interface LeaseHooks {
  /** The lease is ours: become Leader (the lease is renewed meanwhile). */
  elected(): Promise<void>;
  /**
   * The lease ran out without being taken: do nothing a client can see (hold what
   * comes in and what would go out) until resumed() or lost().
   */
  suspended(reason: string): void;
  /**
   * A renewal got through after the lease ran out (suspended() or not yet): nobody
   * else led meanwhile; carry on.
   */
  resumed(): void;
  /** The lease is lost or was never usable: stop leading at once. */
  lost(reason: string): void;
  info(text: string): void;
}

export const LEASE_KEY = 'leader';

interface LeaseValue {
  node: string;
  server: string;
  released?: boolean;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function now(): number {
  return performance.now();
}

function readValue(bytes: Uint8Array): LeaseValue | null {
  try {
    const v = JSON.parse(dec.decode(bytes)) as Partial<LeaseValue>;
    return typeof v.node === 'string' && typeof v.server === 'string' ? (v as LeaseValue) : null;
  } catch {
    return null;
  }
}

export class Lease {
  private leading = false;
  /** Elected, promotion running: the lease is ours but the node does not serve yet. */
  private promoting = false;
  private revision = 0;
  private validUntil = 0;
  private expiry: NodeJS.Timeout | undefined;
  /** The lease ran out without a renewal: since when (0 while valid). */
  private suspendedAt = 0;
  private loop: NodeJS.Timeout | undefined;
  private busy = false;
  /** Counts the loop's requests given up (reconnected()): an answer to one is ignored. */
  private attempt = 0;
  private stopped = false;
  /** Follower: the revision last seen and when it was first seen. */
  private seenRevision = -1;
  private seenAt = 0;
  private seenFresh = false;
  /** The node that holds the lease, as last read. */
  holder = '';

  constructor(
    private readonly bucket: LeaseBucket,
    private readonly nodeId: string,
    private readonly serverId: string,
    private readonly timing: LeaseTiming,
    private readonly hooks: LeaseHooks,
  ) {}

  /** What /streaming/serverz reports. */
  get role(): Role {
    if (this.leading && !this.promoting && now() < this.validUntil) return 'Leader';
    if (this.leading) return 'Candidate';
    return this.seenFresh ? 'Follower' : 'Candidate';
  }

  /** True while this node may act as Leader (lease held and valid). */
  get valid(): boolean {
    return this.leading && now() < this.validUntil;
  }

  start(): void {
    this.seenAt = now();
    this.schedule(0);
  }

  /** Stops; a Leader releases the lease (after it stopped serving) so that another takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.loop !== undefined) clearTimeout(this.loop);
    if (this.expiry !== undefined) clearTimeout(this.expiry);
    if (this.leading && now() < this.validUntil) {
      this.leading = false;
      const value = enc.encode(
        JSON.stringify({ node: this.nodeId, server: this.serverId, released: true }),
      );
      await this.bucket.update(LEASE_KEY, value, this.revision).catch(() => undefined);
    }
    this.leading = false;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.loop = setTimeout(() => {
      void this.tick();
    }, ms);
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.busy) return;
    this.busy = true;
    const attempt = this.attempt;
    try {
      if (this.leading) await this.renew(attempt);
      else await this.observe();
    } finally {
      // Given up meanwhile: reconnected() started the loop again.
      if (attempt === this.attempt) {
        this.busy = false;
        // ±10%, so that nodes started together do not read and write in step.
        this.schedule(this.timing.renewInterval * (0.9 + Math.random() * 0.2));
      }
    }
  }

  /**
   * The lease's connection moved to another server (its server died or stopped
   * answering). A renewal in flight is lost with the old connection: its answer would
   * have come there, and one written while disconnected was dropped by the client at
   * the reconnect. Waiting for it would take its whole timeout, as long as the lease
   * itself, and suspend the Leader. So it is given up: it never extends the lease,
   * whatever became of it (one that JetStream stored all the same is adopted by the
   * next renewal, adoptOwnRenewal; the compare-and-set keeps deciding who holds the
   * lease), and the next renewal goes out at once, through the new server.
   */
  reconnected(server: string): void {
    if (!this.leading || this.stopped) return;
    this.attempt++;
    this.busy = false;
    if (this.loop !== undefined) clearTimeout(this.loop);
    this.hooks.info(`clustered: the lease connection moved to ${server}: renewing through it`);
    this.schedule(0);
  }

  private value(): Uint8Array {
    return enc.encode(JSON.stringify({ node: this.nodeId, server: this.serverId }));
  }

  private async renew(attempt: number): Promise<void> {
    const sentAt = now();
    try {
      const revision = await this.bucket.update(LEASE_KEY, this.value(), this.revision);
      if (!this.leading || this.stopped || attempt !== this.attempt) return;
      this.revision = revision;
      // Ran out before this renewal came back (suspended, or not yet: requests that
      // came in meanwhile were held all the same, bus-gate.ts).
      const lapsed = this.suspendedAt !== 0 || now() >= this.validUntil;
      this.extend(sentAt);
      if (lapsed && now() < this.validUntil) {
        if (this.suspendedAt !== 0) {
          this.hooks.info(`clustered: node "${this.nodeId}" renewed its lease, serving again`);
        }
        this.suspendedAt = 0;
        this.hooks.resumed();
      }
    } catch (err) {
      if (!this.leading || attempt !== this.attempt) return;
      // Refused because the revision moved: someone else holds the lease now, unless
      // the move was an earlier renewal of ours that timed out (or was given up) but
      // was stored.
      if (/wrong last sequence/i.test(String(err))) await this.adoptOwnRenewal(attempt);
      // Otherwise (JetStream unreachable, no answer) the expiry timer decides.
    }
  }

  /**
   * The key's revision is not ours any more. If the key still names this node, the
   * last write was one of our renewals (another node's take would name it): carry on
   * from its revision, without extending the lease (when it was sent is unknown; the
   * next renewal extends it). Otherwise another node took the lease: step down.
   */
  private async adoptOwnRenewal(attempt: number): Promise<void> {
    let entry;
    try {
      entry = await this.bucket.get(LEASE_KEY);
    } catch {
      return; // the expiry timer decides
    }
    if (!this.leading || this.stopped || attempt !== this.attempt) return;
    if (entry === null) return; // the expiry timer decides
    const value = entry.operation === 'PUT' ? readValue(entry.value) : null;
    const ours =
      value !== null &&
      value.released !== true &&
      value.node === this.nodeId &&
      value.server === this.serverId;
    if (ours && entry.revision > this.revision) this.revision = entry.revision;
    else this.lose('the lease was taken by another node');
  }

  private extend(sentAt: number): void {
    this.validUntil = sentAt + this.timing.leaseTimeout;
    this.watchExpiry();
  }

  // A timer may fire a little before performance.now() reaches its time: look again.
  private watchExpiry(): void {
    if (this.expiry !== undefined) clearTimeout(this.expiry);
    this.expiry = setTimeout(
      () => {
        this.expiry = undefined;
        if (!this.leading) return;
        const t = now();
        if (t < this.validUntil) {
          this.watchExpiry();
        } else if (this.promoting) {
          // Nothing is served yet: no state worth keeping.
          this.lose(`could not renew the lease for ${this.timing.leaseTimeout} ms`);
        } else {
          if (this.suspendedAt === 0) {
            this.suspendedAt = t;
            this.hooks.suspended(`could not renew the lease for ${this.timing.leaseTimeout} ms`);
          }
          this.watchSuspension();
        }
      },
      Math.max(1, Math.ceil(this.validUntil - now())),
    );
  }

  /** A suspended Leader that cannot renew for suspendLimit steps down. */
  private watchSuspension(): void {
    this.expiry = setTimeout(
      () => {
        this.expiry = undefined;
        if (!this.leading || this.suspendedAt === 0) return;
        const waited = now() - this.suspendedAt;
        if (waited >= this.timing.suspendLimit) {
          this.lose(
            `could not renew the lease for ${Math.round(waited + this.timing.leaseTimeout)} ms`,
          );
        } else {
          this.watchSuspension();
        }
      },
      Math.max(1, Math.ceil(this.suspendedAt + this.timing.suspendLimit - now())),
    );
  }

  private async observe(): Promise<void> {
    let entry;
    try {
      entry = await this.bucket.get(LEASE_KEY);
    } catch {
      // The count starts again with the next read (see the top of this file).
      this.seenFresh = false;
      this.seenRevision = -1;
      return;
    }
    const t = now();
    if (entry === null) {
      await this.take(() => this.bucket.create(LEASE_KEY, this.value()));
      return;
    }
    const value = entry.operation === 'PUT' ? readValue(entry.value) : null;
    if (entry.revision !== this.seenRevision) {
      this.seenRevision = entry.revision;
      this.seenAt = t;
      this.holder = value !== null && value.released !== true ? value.node : '';
    }
    const free = value === null || value.released === true;
    const stale = t - this.seenAt >= this.timing.electionTimeout;
    this.seenFresh = !free && !stale;
    if (free || stale) {
      const revision = entry.revision;
      await this.take(() => this.bucket.update(LEASE_KEY, this.value(), revision));
    }
  }

  private async take(write: () => Promise<number>): Promise<void> {
    const sentAt = now();
    let revision: number;
    try {
      revision = await write();
    } catch {
      return; // another node was first
    }
    if (this.stopped) return;
    this.leading = true;
    this.promoting = true;
    this.revision = revision;
    this.holder = this.nodeId;
    this.extend(sentAt);
    this.hooks.info(`clustered: node "${this.nodeId}" holds the lease (revision ${revision})`);
    // The promotion runs while the loop keeps renewing the lease.
    void this.hooks.elected().then(
      () => {
        this.promoting = false;
      },
      (err: unknown) => {
        this.lose(`promotion failed: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
  }

  /** Steps down: not Leader any more; wait a whole election timeout before trying again. */
  lose(reason: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.promoting = false;
    this.validUntil = 0;
    this.suspendedAt = 0;
    if (this.expiry !== undefined) clearTimeout(this.expiry);
    this.seenRevision = -1;
    this.seenAt = now();
    this.seenFresh = false;
    this.hooks.lost(reason);
  }
}

/**
 * The lease's bucket: reads and create() through the `nats` client's KV, update() as
 * a publish to the key's subject expecting the bucket stream's last sequence.
 *
 * kv.update() sends `Nats-Expected-Last-Subject-Sequence`, which nats-server 2.9
 * checks, on a replicated stream, only when the leader proposes the write, against
 * what it has applied (`processClusteredInboundMsg`; `processJetStreamMsg` skips the
 * check when clustered): two updates against the same revision proposed together both
 * succeed. Two nodes took the lease in the same millisecond that way in the failover
 * test. `Nats-Expected-Last-Sequence` is checked again when each replica applies the
 * write, in log order, so exactly one succeeds. The bucket holds this one key, so the
 * stream's last sequence is the key's revision.
 */
export function leaseBucket(
  kv: LeaseBucket,
  js: JetStreamClient,
  bucket: string,
  timeoutMs: number,
): LeaseBucket {
  const subject = `$KV.${bucket}.${LEASE_KEY}`;
  return {
    get: (key) => kv.get(key),
    create: (key, value) => kv.create(key, value),
    update: async (_key, value, lastSequence) =>
      (await js.publish(subject, value, { expect: { lastSequence }, timeout: timeoutMs })).seq,
  };
}
