// A Follower's warm view: the state bucket watched (clients, channels, subscriptions
// with their delivery state) and every channel's stream read by an ordered consumer,
// all applied to the store's mirror as they are written. A promotion then only waits
// for the last few writes (catchUp), instead of reading the world.
import {
  DeliverPolicy,
  type ConsumerMessages,
  type KV,
  type KvEntry,
  type QueuedIterator,
} from 'nats';
import { decodeChannel, decodeClient, decodeInfo, decodeSub, storedFromStream } from './codec.js';
import type { JsChannel } from './channel.js';
import type { JsEngine } from './engine.js';
import {
  CHANNEL_PREFIX,
  channelFromToken,
  CLIENT_PREFIX,
  INFO_KEY,
  REPLY_HEADER,
  SUB_PREFIX,
  TIMESTAMP_HEADER,
} from './names.js';
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

/** How long a promotion waits for the consumers to deliver the last writes. */
const CATCH_UP_MS = 5000;
const RETRY_CONSUMER_MS = 500;

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

export class Follower {
  /** Highest bucket revision applied. */
  private revision = 0;
  private watch: QueuedIterator<KvEntry> | undefined;
  private readonly consumers = new Map<JsChannel, ConsumerMessages>();
  private stopped = false;

  constructor(
    private readonly target: FollowTarget,
    private readonly engine: JsEngine,
    private readonly kv: KV,
  ) {}

  async start(): Promise<void> {
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
      const before = this.target.mirrorChannel(name);
      const ch = this.target.applyChannel(name, !deleted);
      if (before !== undefined && ch === undefined) this.dropConsumer(before);
      if (ch !== undefined && !this.consumers.has(ch)) void this.follow(ch);
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
      if (!this.consumers.has(ch)) void this.follow(ch);
      ch.subs.apply(record, pending);
    }
  }

  /** Reads the channel's stream from after what the mirror holds, for as long as we follow. */
  private async follow(ch: JsChannel): Promise<void> {
    while (!this.stopped && this.target.mirrorChannel(ch.name) === ch && !this.consumers.has(ch)) {
      const from = ch.msgs.lastSequence + 1;
      try {
        // An ordered consumer: no state on the server, recreated by the client on a gap.
        const consumer = await this.engine.js.consumers.get(ch.stream, {
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: from,
        });
        const messages = await consumer.consume({
          callback: (m) => {
            if (this.stopped) return;
            const h = m.headers;
            const reply = h?.get(REPLY_HEADER);
            ch.msgs.apply(
              storedFromStream(
                m.seq,
                ch.name,
                h?.get(TIMESTAMP_HEADER),
                reply === '' ? undefined : reply,
                m.data,
              ),
            );
          },
        });
        if (this.isStopped() || this.target.mirrorChannel(ch.name) !== ch) {
          messages.stop();
          return;
        }
        this.consumers.set(ch, messages);
        return;
      } catch {
        // The stream is not created yet (the Leader writes the channel's key first).
        await sleep(RETRY_CONSUMER_MS);
      }
    }
  }

  private isStopped(): boolean {
    return this.stopped;
  }

  private dropConsumer(ch: JsChannel): void {
    this.consumers.get(ch)?.stop();
    this.consumers.delete(ch);
  }

  /**
   * Before a promotion: waits until the mirror holds everything JetStream holds (the
   * bucket's last revision, each stream's last sequence), reading directly what the
   * consumers did not deliver in time, and drops what the streams no longer hold.
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
    for (const messages of this.consumers.values()) messages.stop();
    this.consumers.clear();
  }
}
