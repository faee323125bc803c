// A Follower's warm view: the state bucket watched (clients, channels, subscriptions
// with their delivery state), and every channel's messages heard on core NATS as the
// Leader publishes them to JetStream, each applied once that Leader confirmed that
// JetStream stored it (its confirmation subject, writer.ts; follow-channel.ts). The streams are read
// only where the live view has a hole (a channel first seen, a gap, a reconnect), so
// nats-server does not deliver every message a second time to every Follower. A
// promotion then only waits for the last few writes (catchUp), instead of reading
// the world.
import {
  Events,
  type KV,
  type KvEntry,
  type Msg,
  type QueuedIterator,
  type Subscription,
} from 'nats';
import {
  decodeChannel,
  decodeClient,
  decodeInfo,
  decodeSub,
  readLeaderHeaders,
  storedFromStream,
  type LeaderHeaders,
} from './codec.js';
import { makeStoredMsg } from '../message.js';
import type { JsChannel } from './channel.js';
import type { JsEngine } from './engine.js';
import { ChannelFollow } from './follow-channel.js';
import {
  allAckSubjects,
  allConfirmSubjects,
  CHANNEL_PREFIX,
  channelFromToken,
  channelSubject,
  CLIENT_PREFIX,
  EXPECTED_LAST_HEADER,
  INFO_KEY,
  REPLY_HEADER,
  SUB_PREFIX,
  TIMESTAMP_HEADER,
} from './names.js';
import { ackedSequence } from './writer.js';
import type { ClientRecord, ServerInfoRecord } from '../types.js';

/** What the Follower changes in the store's mirror. */
export interface FollowTarget {
  applyInfo(info: ServerInfoRecord): void;
  applyClient(id: string, record: ClientRecord | null): void;
  /** The channel (created in the mirror when new), or undefined when it was deleted. */
  applyChannel(name: string, exists: boolean): JsChannel | undefined;
  mirrorChannel(name: string): JsChannel | undefined;
  mirrorChannels(): IterableIterator<JsChannel>;
  warn(text: string): void;
}

const EMPTY = new Uint8Array(0);

/** How long a promotion waits for the reads to deliver the last writes. */
const CATCH_UP_MS = 5000;
/** How often unmatched publishes and confirmations are looked at (follow-channel.ts tick()). */
const TICK_MS = 500;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() >= end) return false;
    await sleep(10);
  }
  return true;
}

/** The client's message as it holds it: the header block is the bytes before the data. */
interface RawMsg {
  _rdata?: unknown;
  _msg?: { hdr?: unknown };
}

/** The raw header block of a message, null when the client does not show it. */
function rawHeaders(m: Msg, data: Uint8Array): Uint8Array | null {
  const raw = m as unknown as RawMsg;
  const all = raw._rdata;
  const hdr = raw._msg?.hdr;
  if (!(all instanceof Uint8Array) || typeof hdr !== 'number' || hdr < 0) return null;
  if (all.length - hdr !== data.length) return null;
  return all.subarray(0, hdr);
}

/** The Leader's headers through the client's parser (a block readLeaderHeaders refused). */
function leaderHeadersOf(m: Msg): LeaderHeaders | null {
  const h = m.headers;
  const expected = h?.get(EXPECTED_LAST_HEADER);
  if (h === undefined || expected === undefined || !/^\d{1,15}$/.test(expected)) return null;
  const reply = h.get(REPLY_HEADER);
  const stored = storedFromStream(0, '', h.get(TIMESTAMP_HEADER), undefined, EMPTY);
  return { expectedLast: Number(expected), timestamp: stored.timestamp, reply };
}

export class Follower {
  /** Highest bucket revision applied. */
  private revision = 0;
  private watch: QueuedIterator<KvEntry> | undefined;
  /** The followed channels by name. */
  private readonly follows = new Map<string, ChannelFollow>();
  /** Ack subject → channel, learnt from the publishes that name it. */
  private readonly byAck = new Map<string, ChannelFollow>();
  private readonly subjectPrefix: string;
  private readonly ackPrefix: string;
  private readonly confirmPrefix: string;
  private msgSub: Subscription | undefined;
  private confirmSub: Subscription | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopStatuses: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly target: FollowTarget,
    private readonly engine: JsEngine,
    private readonly kv: KV,
    clusterId: string,
  ) {
    this.subjectPrefix = channelSubject(clusterId, '');
    this.ackPrefix = allAckSubjects(clusterId).slice(0, -1);
    this.confirmPrefix = allConfirmSubjects(clusterId).slice(0, -1);
  }

  /** Starts following; on failure nothing is left listening (the caller opens another). */
  async start(): Promise<void> {
    try {
      await this.listen();
    } catch (err) {
      this.stop();
      throw err;
    }
  }

  private async listen(): Promise<void> {
    const nc = this.engine.nc;
    // Listening before anything is read: what is published from now on is heard.
    this.msgSub = nc.subscribe(this.subjectPrefix + '>', {
      callback: (err, m) => {
        if (err === null) this.onPublish(m);
      },
    });
    this.confirmSub = nc.subscribe(this.confirmPrefix + '>', {
      callback: (err, m) => {
        if (err === null) this.onConfirm(m);
      },
    });
    await nc.flush();
    this.watch = await this.kv.watch({ key: '>' });
    const iter = this.watch;
    void (async () => {
      for await (const e of iter) {
        if (this.stopped) break;
        this.revision = Math.max(this.revision, e.revision);
        try {
          this.apply(e);
        } catch (err) {
          this.target.warn(`clustered: skipping bucket key "${e.key}": ${String(err)}`);
        }
      }
    })();
    this.timer = setInterval(() => {
      for (const f of this.follows.values()) f.tick();
    }, TICK_MS);
    // Messages may have been missed while disconnected: read what the streams hold.
    const statuses = nc.status();
    // The client's status iterator has stop() (its type does not say so): a stopped
    // Follower must not stay among the connection's listeners.
    this.stopStatuses = (): void => (statuses as Partial<{ stop(): void }>).stop?.();
    void (async () => {
      for await (const s of statuses) {
        if (this.stopped) break;
        if (s.type === Events.Reconnect) for (const f of this.follows.values()) void f.read();
      }
    })();
  }

  /** The Leader's publish to a channel stream, heard on core NATS. */
  private onPublish(m: Msg): void {
    if (this.stopped) return;
    const f = this.follows.get(m.subject.slice(this.subjectPrefix.length));
    if (f === undefined) return; // not known yet: read when its key arrives
    const ack = m.reply;
    const data = m.data;
    // The headers read in place (the client's parser costs a fifth of a Follower's time).
    const raw = rawHeaders(m, data);
    let h: LeaderHeaders | null = raw === null ? null : readLeaderHeaders(raw);
    h ??= leaderHeadersOf(m);
    if (ack === undefined || !ack.startsWith(this.ackPrefix) || h === null) {
      // Not a Leader's publish (a JetStream application's?): JetStream may store it,
      // and no Leader will confirm it.
      f.unconfirmable();
      return;
    }
    if (this.byAck.get(ack) !== f) this.byAck.set(ack, f);
    const seq = h.expectedLast + 1;
    f.published(seq, ack, makeStoredMsg(seq, h.timestamp, f.ch.name, h.reply, data));
  }

  /**
   * A Leader's confirmation: JetStream stored its publishes to a channel (those with
   * the ack subject of the same term and index) up to a sequence.
   */
  private onConfirm(m: Msg): void {
    if (this.stopped) return;
    const seq = ackedSequence(m.data);
    if (seq === 0) return;
    const ack = this.ackPrefix + m.subject.slice(this.confirmPrefix.length);
    const f = this.byAck.get(ack) ?? this.byStream(m.data);
    f?.confirmedThrough(seq, ack);
  }

  /** The channel a confirmation names (no publish of that Leader heard yet). */
  private byStream(data: Uint8Array): ChannelFollow | undefined {
    let stream: unknown;
    try {
      stream = (JSON.parse(Buffer.from(data).toString()) as { stream?: unknown }).stream;
    } catch {
      return undefined;
    }
    for (const f of this.follows.values()) if (f.ch.stream === stream) return f;
    return undefined;
  }

  private apply(e: KvEntry): void {
    const deleted = e.operation !== 'PUT';
    const k = e.key;
    if (k === INFO_KEY) {
      if (!deleted) this.target.applyInfo(decodeInfo(e.value));
    } else if (k.startsWith(CLIENT_PREFIX)) {
      const id = k.slice(CLIENT_PREFIX.length);
      this.target.applyClient(id, deleted ? null : decodeClient(e.value));
    } else if (k.startsWith(CHANNEL_PREFIX)) {
      const name = deleted
        ? channelFromToken(k.slice(CHANNEL_PREFIX.length))
        : decodeChannel(e.value);
      const ch = this.target.applyChannel(name, !deleted);
      this.follow(name, ch);
    } else if (k.startsWith(SUB_PREFIX)) {
      const rest = k.slice(SUB_PREFIX.length);
      const dot = rest.lastIndexOf('.');
      const name = channelFromToken(rest.slice(0, dot));
      const id = Number(rest.slice(dot + 1));
      let ch = this.target.mirrorChannel(name);
      if (deleted) {
        ch?.subs.applyDelete(id);
        return;
      }
      const { record, pending } = decodeSub(e.value);
      ch ??= this.target.applyChannel(name, true);
      if (ch === undefined) return;
      this.follow(name, ch);
      ch.subs.apply(record, pending);
    }
  }

  /** Follows the mirror's channel `name` (undefined: no longer), reading its stream first. */
  private follow(name: string, ch: JsChannel | undefined): void {
    const f = this.follows.get(name);
    if (f !== undefined && f.ch === ch) return;
    if (f !== undefined) {
      f.stop();
      this.follows.delete(name);
      for (const [ack, g] of this.byAck) if (g === f) this.byAck.delete(ack);
    }
    if (ch === undefined || this.stopped) return;
    const g = new ChannelFollow(ch, this.engine);
    this.follows.set(name, g);
    void g.read();
  }

  /** The channel's follower (tests). */
  channelFollow(name: string): ChannelFollow | undefined {
    return this.follows.get(name);
  }

  /**
   * Before a promotion: waits until the mirror holds everything JetStream holds (the
   * bucket's last revision, each stream's last sequence), reading directly what the
   * reads did not deliver in time, and drops what the streams no longer hold.
   * Returns the channels whose stream is missing (created by the new Leader).
   */
  async catchUp(): Promise<JsChannel[]> {
    const status = await this.kv.status();
    const target = status.streamInfo.state.last_seq;
    if (!(await until(() => this.revision >= target, CATCH_UP_MS))) {
      throw new Error(`the state bucket was not read up to revision ${target} in time`);
    }
    const missing: JsChannel[] = [];
    for (const ch of [...this.target.mirrorChannels()]) {
      const state = await this.engine.streamState(ch.stream);
      if (state === null) {
        missing.push(ch);
        continue;
      }
      const f = this.follows.get(ch.name);
      if (f !== undefined && f.ch === ch && ch.msgs.lastSequence < state.last) void f.read();
      await until(() => ch.msgs.lastSequence >= state.last, CATCH_UP_MS);
      for (let seq = Math.max(ch.msgs.lastSequence + 1, state.first); seq <= state.last; seq++) {
        const m = await this.engine.jsm.streams.getMessage(ch.stream, { seq }).catch(() => null);
        if (m === null) continue; // deleted meanwhile (limits)
        const reply = m.header.get(REPLY_HEADER);
        ch.msgs.apply(
          storedFromStream(
            m.seq,
            ch.name,
            m.header.get(TIMESTAMP_HEADER),
            reply === '' ? undefined : reply,
            m.data,
          ),
        );
      }
      ch.msgs.dropBefore(state.first);
      ch.purgedTo = state.first;
    }
    return missing;
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
    this.msgSub?.unsubscribe();
    this.confirmSub?.unsubscribe();
    if (this.timer !== undefined) clearInterval(this.timer);
    this.stopStatuses?.();
    for (const f of this.follows.values()) f.stop();
    this.follows.clear();
    this.byAck.clear();
  }
}
