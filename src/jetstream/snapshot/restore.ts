// Rebuilding a stream from a snapshot as its chunks arrive (the reference's RestoreStream,
// without staging the whole snapshot first): the S2 stream is decoded and the tar read
// piece by piece, messages go into a new store at their original sequences and times,
// and once the last chunk came the stream is registered and its consumers re-created at
// their saved positions.

import type { JsAccount } from '../account.js';
import { decodeConsumerConfig } from '../consumer-config.js';
import { addConsumer } from '../consumer-manage.js';
import { JsErr, type ApiError } from '../errors.js';
import { JsonFields } from '../json.js';
import type { ConsumerState, StoredMsg, StreamStore } from '../storage/types.js';
import { storeConfigOf, streamMeta, type StreamConfig } from '../stream-config.js';
import { Stream } from '../stream.js';
import { nowNs } from '../time.js';
import {
  consumerEntry,
  decodeMsgs,
  FORMAT,
  isMsgsEntry,
  META,
  parseConsumerState,
  referenceBlockEntry,
  VERSION,
  WIREBUS_INFO,
} from './archive.js';
import { blockMsgs, parseConsumerStateFile, parseIndex, type BlockIndex } from './reference.js';
import { S2Reader } from './s2.js';
import { TarReader } from './tar.js';

interface PendingConsumer {
  meta?: Buffer;
  state?: ConsumerState;
}

export class Restorer {
  private readonly s2 = new S2Reader();
  private readonly tar: TarReader;
  private error: string | null = null;
  private created: number | null = null;
  private store: StreamStore | null = null;
  private lastSeq = 0;
  private readonly consumers = new Map<string, PendingConsumer>();
  /** A nats-server snapshot's blocks and indexes, until both halves of a block came. */
  private readonly refBlocks = new Map<number, { blk?: Buffer; idx?: BlockIndex }>();
  /** Bytes received, for the completion advisory and log. */
  total = 0;

  constructor(
    private readonly jsa: JsAccount,
    private readonly cfg: StreamConfig,
  ) {
    this.tar = new TarReader(
      (name, body) => this.entry(name, body),
      `unexpected content (account=${jsa.accountName})`,
    );
  }

  /** One chunk of the snapshot; a failure is kept and reported once the last chunk came. */
  feed(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.error !== null) return;
    try {
      for (const piece of this.s2.push(chunk)) this.tar.push(piece);
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    }
  }

  /** The end of the snapshot: the restored stream, or the reference's restore error. */
  async finish(): Promise<Stream | ApiError> {
    if (this.error === null && (!this.s2.complete || !this.tar.ended))
      this.error = 'unexpected EOF';
    if (this.error === null && this.refBlocks.size > 0)
      this.error = `unexpected content (account=${this.jsa.accountName})`;
    if (this.error === null && (this.created === null || this.store === null))
      this.error = `snapshot has no ${this.created === null ? META : WIREBUS_INFO}`;
    if (this.error !== null) return this.fail(JsErr.streamRestore(this.error));
    const store = this.store!;
    while (store.state().lastSeq < this.lastSeq) store.skipMsg();
    const durable = await new Promise<Error | undefined>((resolve) => store.onDurable(resolve));
    if (durable !== undefined) return this.fail(JsErr.streamRestore(durable.message));
    const jsa = this.jsa;
    if (jsa.streams.has(this.cfg.name)) return this.fail(JsErr.streamNameExistRestoreFailed());
    const stream = new Stream(jsa, this.cfg, store, this.created!);
    jsa.streams.set(this.cfg.name, stream);
    jsa.storageDelta(this.cfg.storage, store.state().bytes);
    stream.start();
    for (const [name, c] of this.consumers) {
      const err = this.restoreConsumer(stream, name, c);
      if (err !== null) {
        jsa.streams.delete(this.cfg.name);
        jsa.storageDelta(this.cfg.storage, -store.state().bytes);
        await stream.stop();
        this.store = null;
        await store.delete();
        return JsErr.streamRestore(`error restoring consumer [${JSON.stringify(name)}]: ${err}`);
      }
    }
    this.store = null;
    return stream;
  }

  /** Drops what was restored so far (a failed or abandoned restore). */
  async abort(): Promise<void> {
    const store = this.store;
    this.store = null;
    if (store !== null) await store.delete();
  }

  private async fail(err: ApiError): Promise<ApiError> {
    await this.abort();
    return err;
  }

  private entry(name: string, body: Buffer): void {
    if (name === META) return this.meta(body);
    if (name === WIREBUS_INFO) return this.info(body);
    if (isMsgsEntry(name)) return this.msgs(body);
    const ce = consumerEntry(name);
    if (ce !== null) {
      let c = this.consumers.get(ce.consumer);
      if (c === undefined) this.consumers.set(ce.consumer, (c = {}));
      if (ce.file === 'meta') c.meta = body;
      else if (ce.file === 'o.dat') c.state = parseConsumerStateFile(body);
      else if (ce.file === 'state') {
        const st = parseConsumerState(body);
        if (st === null) throw new Error(`bad state of consumer ${JSON.stringify(ce.consumer)}`);
        c.state = st;
      }
      return;
    }
    // The rest of a nats-server snapshot: its blocks and indexes; checksums and the
    // per-subject summaries are not needed.
    const rb = referenceBlockEntry(name);
    if (rb !== null) return this.referenceBlock(rb.block, rb.kind, body);
    if (name === 'meta.sum' || /^msgs\/\d+\.fss$/.test(name)) return;
    throw new Error(`unexpected content (account=${this.jsa.accountName})`);
  }

  private meta(body: Buffer): void {
    const f = JsonFields.parse(body);
    if (f === null) throw new Error('invalid character in stream meta');
    if (f.str('name') !== this.cfg.name) throw new Error('stream names do not match');
    this.created = f.time('created') ?? nowNs();
  }

  private info(body: Buffer): void {
    const f = JsonFields.parse(body);
    if (f === null || f.str('format') !== FORMAT || f.int('version') !== VERSION)
      throw new Error(`unsupported snapshot format ${body.toString('utf8', 0, 100)}`);
    if (this.created === null || this.store !== null) throw new Error('snapshot out of order');
    const first = f.uint('first_seq');
    const last = f.uint('last_seq');
    if (!f.ok || last < first - 1) throw new Error('bad snapshot sequence range');
    this.openStore(first);
    this.lastSeq = last;
  }

  /** The new stream's store, its next sequence `first`. */
  private openStore(first: number): StreamStore {
    if (this.created === null || this.store !== null) throw new Error('snapshot out of order');
    if (this.jsa.streams.has(this.cfg.name)) throw new Error('stream name already in use');
    const store = this.jsa
      .provider(this.cfg.storage)
      .openStream(storeConfigOf(this.cfg), streamMeta(this.cfg, this.created));
    this.store = store;
    if (first > 1) store.compact(first);
    return store;
  }

  /** Half of a nats-server block; once both came, its live messages are stored. */
  private referenceBlock(n: number, kind: 'blk' | 'idx', body: Buffer): void {
    let rb = this.refBlocks.get(n);
    if (rb === undefined) this.refBlocks.set(n, (rb = {}));
    if (kind === 'blk') rb.blk = body;
    else rb.idx = parseIndex(body);
    if (rb.blk === undefined || rb.idx === undefined) return;
    this.refBlocks.delete(n);
    const idx = rb.idx;
    const store = this.store ?? this.openStore(idx.first);
    if (idx.last > this.lastSeq) this.lastSeq = idx.last;
    this.storeAll(store, blockMsgs(rb.blk, idx));
  }

  private msgs(body: Buffer): void {
    const store = this.store;
    if (store === null) throw new Error('snapshot out of order');
    this.storeAll(store, decodeMsgs(body));
  }

  /** Stores messages at their own sequences, the ones between them deleted. */
  private storeAll(store: StreamStore, msgs: Iterable<StoredMsg>): void {
    for (const m of msgs) {
      let next = store.state().lastSeq + 1;
      if (m.seq < next || m.seq > this.lastSeq) throw new Error(`bad message sequence ${m.seq}`);
      for (; next < m.seq; next++) store.skipMsg();
      store.storeMsg(m.subject, m.hdr, m.data, m.ts);
    }
  }

  private restoreConsumer(stream: Stream, name: string, c: PendingConsumer): string | null {
    if (c.meta === undefined || c.state === undefined) return 'incomplete consumer';
    const f = JsonFields.parse(c.meta);
    // wirebus nests the config; nats-server's meta is the config with Created and Name.
    const inner = f === null ? null : f.has('config') ? f.obj('config') : f;
    const ccfg = inner === null ? null : decodeConsumerConfig(inner);
    if (f === null || ccfg === null) return 'bad consumer config';
    try {
      const made = addConsumer(this.jsa, stream, ccfg, {
        name,
        createdNs: f.time('created') ?? nowNs(),
        state: c.state,
      });
      return 'err_code' in made ? made.description : null;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }
}
