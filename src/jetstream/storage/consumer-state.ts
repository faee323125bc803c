// A consumer's position as nats-server 2.9 keeps it (consumerMemStore and
// consumerFileStore share this logic there too): deliveries add pending entries,
// acks remove them and move the ack floor, AckNone moves the floor with every
// delivery, AckAll acknowledges everything up to the acked message. Any store
// (memory or file) can keep its state in a ConsumerBook and persist it as it likes.
import type { ConsumerState, ConsumerStoreConfig } from './types.js';

export class ConsumerBook {
  readonly state: ConsumerState = {
    delivered: { consumer: 0, stream: 0 },
    ackFloor: { consumer: 0, stream: 0 },
    pending: new Map(),
    redelivered: new Map(),
  };

  constructor(private readonly cfg: ConsumerStoreConfig) {}

  setStarting(streamSeq: number): void {
    this.state.delivered.stream = streamSeq;
  }

  /** Returns false when nothing changed (a delivery at or below the ack floor). */
  updateDelivered(dseq: number, sseq: number, dc: number, ts: number): boolean {
    const s = this.state;
    if (dseq <= s.ackFloor.consumer) return false;
    if (this.cfg.ackPolicy === 'none') {
      s.delivered.consumer = dseq;
      s.delivered.stream = sseq;
      s.ackFloor.consumer = dseq;
      s.ackFloor.stream = sseq;
      return true;
    }
    if (sseq <= s.delivered.stream) {
      // A redelivery: the pending entry gets the new delivery sequence and time.
      const p = s.pending.get(sseq);
      if (p !== undefined) {
        p.sequence = dseq;
        p.ts = ts;
      }
    } else s.pending.set(sseq, { sequence: dseq, ts });
    if (dseq > s.delivered.consumer) s.delivered.consumer = dseq;
    if (sseq > s.delivered.stream) s.delivered.stream = sseq;
    // As the reference: how many times it was sent again (its delivery count less one).
    if (dc > 1) s.redelivered.set(sseq, dc - 1);
    return true;
  }

  /** Returns false when the ack changed nothing (unknown, or below the floor). */
  updateAcks(dseq: number, sseq: number): boolean {
    const s = this.state;
    if (this.cfg.ackPolicy === 'none') return false;
    const p = s.pending.get(sseq);
    if (p === undefined) return false;
    if (dseq <= s.ackFloor.consumer) return false;
    if (this.cfg.ackPolicy === 'all') {
      for (const seq of [...s.pending.keys()]) {
        if (seq > s.ackFloor.stream && seq <= sseq) {
          s.pending.delete(seq);
          s.redelivered.delete(seq);
        }
      }
      s.ackFloor.consumer = dseq;
      s.ackFloor.stream = sseq;
      return true;
    }
    s.pending.delete(sseq);
    s.redelivered.delete(sseq);
    const original = p.sequence;
    // Every field is read and the floor written at one place whichever case this is:
    // the case of nothing left pending comes now and then in a run of acks, and a
    // property access first met there would throw away the optimised ack path (V8's
    // "insufficient type feedback" deopt) to compile it again.
    const floor = s.ackFloor;
    const delivered = s.delivered;
    const deliveredConsumer = delivered.consumer;
    const deliveredStream = delivered.stream;
    let floorConsumer = floor.consumer;
    let floorStream = floor.stream;
    if (s.pending.size === 0) {
      floorConsumer = deliveredConsumer;
      floorStream = deliveredStream;
    } else if (original === floorConsumer + 1) {
      const first = floorConsumer === 0;
      floorConsumer = original;
      floorStream = sseq;
      if (!first && deliveredConsumer > original) {
        // The floor moves up to just below the oldest message still pending.
        for (let ss = sseq + 1; ss < deliveredStream; ss++) {
          const next = s.pending.get(ss);
          if (next !== undefined) {
            if (next.sequence > 0) {
              floorConsumer = next.sequence - 1;
              floorStream = ss - 1;
            }
            break;
          }
        }
      }
    }
    floor.consumer = floorConsumer;
    floor.stream = floorStream;
    return true;
  }

  /** Replaces the state (nats-server's Update); throws on an inconsistent one. */
  update(next: ConsumerState): void {
    if (next.ackFloor.consumer > next.delivered.consumer)
      throw new Error('bad ack floor for consumer');
    if (next.ackFloor.stream > next.delivered.stream) throw new Error('bad ack floor for stream');
    for (const seq of next.pending.keys()) {
      if (seq <= next.ackFloor.stream || seq > next.delivered.stream) {
        throw new Error(`bad pending entry, sequence [${seq}] out of range`);
      }
    }
    if (next.delivered.consumer < this.state.delivered.consumer)
      throw new Error('old update ignored');
    const s = this.state;
    s.delivered = { ...next.delivered };
    s.ackFloor = { ...next.ackFloor };
    s.pending = new Map([...next.pending].map(([k, v]) => [k, { sequence: v.sequence, ts: v.ts }]));
    s.redelivered = new Map(next.redelivered);
  }

  /** A copy the caller may keep. */
  copy(): ConsumerState {
    const s = this.state;
    return {
      delivered: { ...s.delivered },
      ackFloor: { ...s.ackFloor },
      pending: new Map([...s.pending].map(([k, v]) => [k, { sequence: v.sequence, ts: v.ts }])),
      redelivered: new Map(s.redelivered),
    };
  }
}
