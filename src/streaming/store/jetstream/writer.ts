// The Leader's message writes: each stored message is published at once to its
// channel's stream, acknowledged by JetStream in order, and sent again when it was
// not (a reconnect to another server, a stream leader election).
//
// Every publish carries `Nats-Expected-Last-Sequence: seq-1`: JetStream stores it only
// as the stream's next message, so a channel's stream never has a gap, a duplicate or
// a message out of order, and a deposed Leader's late write is refused once the new
// Leader wrote. A resend therefore starts with the first unacknowledged message
// alone: if JetStream answers "wrong last sequence" because an earlier attempt was
// stored after all, the stored message is read back and compared (timestamp and
// data); ours counts as acknowledged, anything else fails the store. Then the rest
// goes out again, pipelined. (Nats-Msg-Id deduplication would do the same for a
// header and a map entry per message in JetStream; this costs a read on the rare
// resend instead.)
import { headers, type Msg } from 'nats';
import type { StoredMsg } from '../types.js';
import type { JsChannel } from './channel.js';
import { msgParts } from './codec.js';
import type { JsEngine } from './engine.js';
import { REPLY_HEADER, TIMESTAMP_HEADER } from './names.js';

/** Unacknowledged for this long: sent again. */
const RETRY_MS = 1000;
const WRONG_LAST = /wrong last sequence: (\d+)/;

export interface WriterHost {
  readonly engine: JsEngine;
  /** The writes failed for good: the node must stop leading. */
  fail(reason: string): void;
  isWriting(): boolean;
}

export class MessageWriter {
  constructor(
    private readonly host: WriterHost,
    /** Acks come back on `<ackPrefix>.<channel index>`. */
    private readonly ackPrefix: string,
    private readonly failAfterMs: number,
  ) {}

  publish(ch: JsChannel, msg: StoredMsg): void {
    if (ch.inflightCount === 0) ch.progressAt = performance.now();
    ch.inflight.push(msg);
    ch.sent = msg.sequence;
    // While a resend is being sorted out, later messages wait their turn.
    if (!ch.retrying) this.send(ch, msg);
  }

  private send(ch: JsChannel, msg: StoredMsg): void {
    const { reply, data } = msgParts(msg.encoded);
    const h = headers();
    h.set('Nats-Expected-Last-Sequence', String(msg.sequence - 1));
    h.set(TIMESTAMP_HEADER, msg.timestamp.toString());
    if (reply.length > 0) h.set(REPLY_HEADER, Buffer.from(reply).toString());
    this.host.engine.nc.publish(ch.subject, data, {
      reply: `${this.ackPrefix}.${ch.index}`,
      headers: h,
    });
  }

  /** A JetStream PubAck (or error) for channel `ch`. */
  onAck(ch: JsChannel, msg: Msg): void {
    let seq = 0;
    let error = '';
    try {
      const o = JSON.parse(Buffer.from(msg.data).toString()) as {
        seq?: unknown;
        error?: { description?: unknown };
      };
      if (o.error !== undefined) error = String(o.error.description);
      else if (typeof o.seq === 'number') seq = o.seq;
    } catch {
      // No responders (an empty 503 status): the stream has no leader right now.
      error = msg.headers?.description ?? 'no answer from JetStream';
    }
    if (error !== '') {
      ch.lastError = error;
      const m = WRONG_LAST.exec(error);
      if (m !== null && Number(m[1]) > ch.acked && !ch.verifying && ch.inflightCount > 0) {
        void this.verify(ch);
      }
      return;
    }
    if (seq <= ch.acked) return;
    if (seq !== ch.acked + 1) {
      this.host.fail(
        `JetStream stored message ${seq} of channel "${ch.name}" where ${ch.acked + 1} was expected`,
      );
      return;
    }
    this.advance(ch);
  }

  /** The first unacknowledged message is stored. */
  private advance(ch: JsChannel): void {
    ch.acked++;
    ch.inflight[ch.inflightHead++] = undefined as unknown as StoredMsg;
    if (ch.inflightHead === ch.inflight.length) {
      ch.inflight = [];
      ch.inflightHead = 0;
    } else if (ch.inflightHead >= 1024 && ch.inflightHead * 2 >= ch.inflight.length) {
      ch.inflight = ch.inflight.slice(ch.inflightHead);
      ch.inflightHead = 0;
    }
    ch.progressAt = performance.now();
    ch.lastError = '';
    const waiters = ch.waiters;
    let n = 0;
    while (n < waiters.length && waiters[n]!.seq <= ch.acked) waiters[n++]!.done();
    if (n > 0) ch.waiters = waiters.slice(n);
    if (ch.retrying) {
      // The resent head is in: the rest goes out again, pipelined.
      ch.retrying = false;
      for (let i = ch.inflightHead; i < ch.inflight.length; i++) this.send(ch, ch.inflight[i]!);
    }
  }

  /**
   * JetStream holds more than we know was acknowledged: read the first unacknowledged
   * sequence back; if it is our message, an earlier attempt was stored.
   */
  private async verify(ch: JsChannel): Promise<void> {
    ch.verifying = true;
    try {
      const ours = ch.inflight[ch.inflightHead]!;
      const stored = await this.host.engine.jsm.streams.getMessage(ch.stream, {
        seq: ours.sequence,
      });
      if (!this.host.isWriting() || ch.inflight[ch.inflightHead] !== ours) return;
      const { data } = msgParts(ours.encoded);
      const same =
        stored.header.get(TIMESTAMP_HEADER) === ours.timestamp.toString() &&
        Buffer.compare(Buffer.from(stored.data), Buffer.from(data)) === 0;
      if (!same) {
        this.host.fail(
          `channel "${ch.name}": sequence ${ours.sequence} holds a message this Leader did not write`,
        );
        return;
      }
      this.advance(ch);
    } catch {
      // Not readable now: the next check resends and tries again.
    } finally {
      ch.verifying = false;
    }
  }

  /** Resends what JetStream did not acknowledge; fails once it has been too long. */
  check(channels: Iterable<JsChannel>): void {
    const now = performance.now();
    for (const ch of channels) {
      if (ch.inflightCount === 0) continue;
      const idle = now - ch.progressAt;
      if (idle > this.failAfterMs) {
        const why = ch.lastError !== '' ? `: ${ch.lastError}` : '';
        this.host.fail(
          `JetStream acknowledged nothing of channel "${ch.name}" for ${Math.round(idle)} ms${why}`,
        );
        return;
      }
      if (idle > RETRY_MS && now - ch.retriedAt > RETRY_MS && !ch.verifying) {
        ch.retriedAt = now;
        ch.retrying = true;
        this.send(ch, ch.inflight[ch.inflightHead]!);
      }
    }
  }
}
