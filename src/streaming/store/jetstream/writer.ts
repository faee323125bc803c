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
// resend instead.) At most WINDOW messages of a channel are out at a time; the rest
// go out as acknowledgements come back.
//
// The Followers do not listen to the PubAcks: once a turn, for every channel that had
// some, the Leader publishes the highest sequence JetStream acknowledged to the
// channel's confirmation subject (names.ts confirmSubjectPrefix). A Follower applies a
// publish it heard once a confirmation of the same Leader term covers its sequence:
// one message per turn instead of one per stored message, for the Followers and for
// the nats-servers that routed every PubAck to them.
import { headers, type Msg, type MsgHdrs } from 'nats';
import type { StoredMsg } from '../types.js';
import type { JsChannel } from './channel.js';
import { msgParts } from './codec.js';
import type { JsEngine } from './engine.js';
import { FrameWriter } from './frames.js';
import { REPLY_HEADER, TIMESTAMP_HEADER } from './names.js';
import { perf } from '../../../server/clock.js';

/** Unacknowledged for this long: sent again. */
const RETRY_MS = 1000;
/**
 * Sooner when JetStream answered "no responders": the stream has no raft leader (one
 * is being elected), so nothing was stored, and the resend goes through as soon as it
 * has one instead of up to a second later.
 */
const RETRY_LEADERLESS_MS = 200;
/**
 * Messages of one channel published and not acknowledged yet, at most. Deep enough
 * to keep JetStream busy (thousands a second at any round trip under 100 ms); bounded
 * so that JetStream's queues stay short: a publisher with 16k PubAcks outstanding
 * would otherwise put 16k writes ahead of everything else there, the lease renewals
 * and state writes included, for seconds under load.
 */
const WINDOW = 2048;
const WRONG_LAST = /wrong last sequence: (\d+)/;

export interface WriterHost {
  readonly engine: JsEngine;
  /** The writes failed for good: the node must stop leading. */
  fail(reason: string): void;
  isWriting(): boolean;
}

export class MessageWriter {
  /**
   * One header set for every publish: the client encodes it inside publish(), so it
   * is refilled for the next message instead of made anew.
   */
  private readonly headers: MsgHdrs = headers();
  /** Ready-made frames, one write a turn (frames.ts); null: the client's publish(). */
  private readonly frames: FrameWriter | null;
  /** Channels acknowledged this turn, confirmed to the Followers at its end. */
  private confirmDue: JsChannel[] = [];
  private readonly confirmNow = (): void => {
    this.confirm();
  };

  constructor(
    private readonly host: WriterHost,
    /** Acks come back on `<ackPrefix>.<channel index>`. */
    private readonly ackPrefix: string,
    /** Confirmations go to `<confirmPrefix>.<channel index>`. */
    private readonly confirmPrefix: string,
    private readonly failAfterMs: number,
  ) {
    this.frames = FrameWriter.of(host.engine.nc);
  }

  publish(ch: JsChannel, msg: StoredMsg): void {
    if (ch.inflightCount === 0) ch.progressAt = perf.now();
    ch.inflight.push(msg);
    ch.sent = msg.sequence;
    // While a resend is being sorted out, later messages wait their turn; beyond the
    // window, they wait for acknowledgements.
    if (!ch.retrying) this.fill(ch);
  }

  /** Publishes waiting messages while fewer than WINDOW are out. */
  private fill(ch: JsChannel): void {
    const end = Math.min(ch.inflight.length, ch.inflightHead + WINDOW);
    while (ch.sentUpTo < end) this.send(ch, ch.inflight[ch.sentUpTo++]!);
  }

  private send(ch: JsChannel, msg: StoredMsg): void {
    const { reply, data } = msgParts(msg.encoded);
    const frames = this.frames;
    if (frames !== null) {
      const prefix = (ch.framePrefix ??= FrameWriter.prefix(
        ch.subject,
        `${this.ackPrefix}.${ch.index}`,
      ));
      if (frames.add(prefix, msg.sequence - 1, msg.timestamp, reply, data)) return;
      frames.flush();
    }
    const h = this.headers;
    h.set('Nats-Expected-Last-Sequence', String(msg.sequence - 1));
    h.set(TIMESTAMP_HEADER, msg.timestamp.toString());
    if (reply.length > 0) {
      // A view of the stored bytes: Buffer.from(reply) would copy them first.
      h.set(REPLY_HEADER, Buffer.from(reply.buffer, reply.byteOffset, reply.length).toString());
    } else if (h.has(REPLY_HEADER)) h.delete(REPLY_HEADER);
    const options = (ch.publishOptions ??= { reply: `${this.ackPrefix}.${ch.index}`, headers: h });
    this.host.engine.nc.publish(ch.subject, data, options);
  }

  /** A JetStream PubAck (or error) for channel `ch`. */
  onAck(ch: JsChannel, msg: Msg): void {
    // The usual answer is read from its bytes; anything else is parsed in full.
    const fast = ackedSequence(msg.data);
    if (fast > 0) {
      this.stored(ch, fast);
      return;
    }
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
      ch.leaderless = true;
    }
    if (error !== '') {
      ch.lastError = error;
      const m = WRONG_LAST.exec(error);
      if (m !== null && Number(m[1]) > ch.acked && !ch.verifying && ch.inflightCount > 0) {
        void this.verify(ch);
      }
      return;
    }
    this.stored(ch, seq);
  }

  /** JetStream stored sequence `seq` of the channel's stream. */
  private stored(ch: JsChannel, seq: number): void {
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
    if (ch.sentUpTo < ch.inflightHead) ch.sentUpTo = ch.inflightHead;
    if (ch.inflightHead === ch.inflight.length) {
      ch.inflight = [];
      ch.inflightHead = 0;
      ch.sentUpTo = 0;
    } else if (ch.inflightHead >= 1024 && ch.inflightHead * 2 >= ch.inflight.length) {
      ch.inflight = ch.inflight.slice(ch.inflightHead);
      ch.sentUpTo -= ch.inflightHead;
      ch.inflightHead = 0;
    }
    ch.progressAt = perf.now();
    ch.lastError = '';
    ch.leaderless = false;
    if (!ch.confirmDue) {
      ch.confirmDue = true;
      if (this.confirmDue.push(ch) === 1) queueMicrotask(this.confirmNow);
    }
    const waiters = ch.waiters;
    let n = 0;
    while (n < waiters.length && waiters[n]!.seq <= ch.acked) waiters[n++]!.done();
    if (n > 0) ch.waiters = waiters.slice(n);
    if (ch.retrying) {
      // The resent head is in: the rest goes out again, pipelined.
      ch.retrying = false;
      ch.sentUpTo = ch.inflightHead;
    }
    this.fill(ch);
  }

  /** Tells the Followers how far JetStream stored each channel acknowledged this turn. */
  private confirm(): void {
    const due = this.confirmDue;
    this.confirmDue = [];
    const nc = this.host.engine.nc;
    for (const ch of due) {
      ch.confirmDue = false;
      if (nc.isClosed()) continue;
      const subject = (ch.confirmSubject ??= `${this.confirmPrefix}.${ch.index}`);
      nc.publish(subject, Buffer.from(`{"stream":"${ch.stream}","seq":${ch.acked}}`));
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

  /**
   * The Leader was suspended (no resends meanwhile), or its connection moved to
   * another server (no answers to what was in flight): what is unacknowledged goes
   * out again at the next check, and the time without progress counts from now.
   */
  resumed(channels: Iterable<JsChannel>): void {
    const due = perf.now() - RETRY_MS - 1;
    for (const ch of channels) {
      if (ch.inflightCount === 0) continue;
      ch.progressAt = due;
      ch.retriedAt = 0;
    }
  }

  /** Resends what JetStream did not acknowledge; fails once it has been too long. */
  check(channels: Iterable<JsChannel>): void {
    const now = perf.now();
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
      const wait = ch.leaderless ? RETRY_LEADERLESS_MS : RETRY_MS;
      if (idle > wait && now - ch.retriedAt > wait && !ch.verifying) {
        ch.retriedAt = now;
        ch.retrying = true;
        ch.sentUpTo = ch.inflightHead + 1;
        this.send(ch, ch.inflight[ch.inflightHead]!);
      }
    }
  }
}

const SEQ_FIELD = Buffer.from('"seq":');

/**
 * The sequence of a successful JetStream PubAck (`{"stream":"S","seq":N}` and maybe
 * `"duplicate":true`), read from the bytes; 0 for anything else (an error, an empty
 * status message), which onAck then parses in full.
 */
export function ackedSequence(data: Uint8Array): number {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  // "stream" first: a stream name cannot hold a quote, so no earlier "seq": can match.
  if (b.length < 20 || b[0] !== 0x7b || b[2] !== 0x73) return 0;
  const at = b.indexOf(SEQ_FIELD);
  if (at < 0) return 0;
  let seq = 0;
  let i = at + SEQ_FIELD.length;
  for (; i < b.length; i++) {
    const c = b[i]!;
    if (c < 0x30 || c > 0x39) break;
    seq = seq * 10 + (c - 0x30);
  }
  return i === at + SEQ_FIELD.length || (b[i] !== 0x2c && b[i] !== 0x7d) ? 0 : seq;
}
