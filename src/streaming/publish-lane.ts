// A lane of publish batches: the PubAcks queued during one event-loop turn and the
// channels that stored messages, flushed together and answered once the flush
// resolves (a PubAck means "persisted", as in the reference). A lane runs one batch
// at a time, so its PubAcks keep their arrival order across batches.
//
// Most stores flush every channel at once (a FILE store's one fsync, a SQL store's
// one transaction): the server then has a single lane for every channel. A store
// whose channels become durable each on their own (the clustered JetStream store:
// one stream per channel) gives each channel a lane of its own (server.ts laneFor):
// a channel whose stream is electing its raft leader then holds back its own
// PubAcks only, never those of a channel whose stream answers.
import type { Bus } from './bus.js';
import { type Channel, newStampTurn } from './channel.js';
import { PubAckBatch } from './pub-acks.js';

/** What a lane needs from the server. */
export interface LaneHost {
  readonly bus: Bus;
  readonly logger: { error(message: string): void };
  /** Whether the channel is still the server's (not deleted meanwhile). */
  isCurrent(channel: Channel): boolean;
}

const DONE: Promise<void> = Promise.resolve();

export class PublishLane {
  /** PubAcks of this turn, in arrival order. */
  acks: PubAckBatch;
  /** A sent batch, emptied, for the next one. */
  private spare: PubAckBatch | null = null;
  /**
   * Channels with new messages this turn. One array for the life of the lane, emptied
   * by each batch (which takes a copy): a new `[]` per batch starts with small-integer
   * elements, and the first channel pushed into it changed its map under the optimized
   * publish path (a deopt of markDirty and the publish handler in a fresh server's
   * first messages).
   */
  private readonly dirty: Channel[] = [];
  /** The last batch started, until its PubAcks went out. */
  running: Promise<void> | null = null;
  /** In the server's list of lanes to run at the end of this turn. */
  queued = false;

  constructor(
    private readonly host: LaneHost,
    /** Resolves once everything this lane's channels stored before the call is durable. */
    private readonly flushStore: () => Promise<void>,
    /** Bytes of a batch's first PubAck buffer (pub-acks.ts). */
    private readonly ackBytes?: number,
  ) {
    this.acks = new PubAckBatch(ackBytes);
  }

  /** The channel stored a message this turn. */
  markDirty(channel: Channel): void {
    if (!channel.dirty) {
      channel.dirty = true;
      this.dirty.push(channel);
    }
  }

  /** Drops what this turn queued (a clustered step-down: the next Leader answers). */
  reset(): void {
    this.acks = new PubAckBatch(this.ackBytes);
    this.spare = null;
    this.dirty.length = 0;
  }

  /** Starts a batch of what was queued: flush, then delivery, then the PubAcks in order. */
  run(): void {
    // The messages stored from here on are the next batch's: a new clock reading.
    newStampTurn();
    const acks = this.acks;
    if (acks.size === 0 && this.dirty.length === 0) return;
    const previous = this.running ?? DONE;
    const dirty = this.dirty.slice();
    this.dirty.length = 0;
    // What this batch stored; later publishes wait for their own flush.
    const upTo = dirty.map((ch) => ch.store.msgs.lastSequence);
    this.acks = this.spare ?? new PubAckBatch(this.ackBytes);
    this.spare = null;
    // A publish during this batch's flush must mark its channel for the next batch:
    // `upTo` covers only what is stored now (seen with the FILE store's real flushes).
    for (const ch of dirty) ch.dirty = false;
    // Asked now, so that it covers what this batch stored and no more: asked after the
    // previous batch, it would wait for whatever was stored meanwhile too (with FILE,
    // one more round per batch). PubAcks still go out in order, after `previous`.
    const durable = this.flushStore().then(
      () => null,
      (err: unknown) => ({ err }),
    );
    const host = this.host;
    const run = previous
      .then(() => durable)
      .then((failure) => {
        if (failure === null) {
          for (let i = 0; i < dirty.length; i++) {
            const ch = dirty[i]!;
            if (upTo[i]! > ch.deliverable) ch.deliverable = upTo[i]!;
            if (host.isCurrent(ch)) ch.deliverNew();
            else ch.dirty = false;
          }
          acks.send(host.bus, null);
          acks.clear();
          this.spare = acks;
          return;
        }
        // The writes of this batch may be lost: no PubAck may say otherwise.
        const why = String(failure.err);
        host.logger.error(`STAN: Error flushing the store: ${why}`);
        for (const ch of dirty) ch.dirty = false;
        acks.send(host.bus, `stan: store flush failed: ${why}`);
      });
    this.running = run;
    void run.then(() => {
      if (this.running === run) this.running = null;
    });
  }
}
