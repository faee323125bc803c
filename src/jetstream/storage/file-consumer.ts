// A consumer's state on disk: `obs/<consumer>/o.dat`, the whole state rewritten (a
// new file renamed over the old one, so a crash leaves one or the other, never a mix)
// at most every `flushMs` while it changes, as nats-server's consumer file store
// does (about ten writes a second under load), and never before the stream's messages
// it names are written. stop() writes it at once.
import { readFileSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { endianness } from 'node:os';
import { join } from 'node:path';
import type { ConsumerState, ConsumerStore, ConsumerStoreConfig } from './types.js';
import { ConsumerBook } from './consumer-state.js';
import { CONSUMER_MAGIC, FILE_HEADER_SIZE, fileHeader, headerProblem } from './file-record.js';
import { syncDir } from './file-io.js';

export const CONSUMER_STATE_FILE = 'o.dat';

export interface ConsumerFileOptions {
  readonly flushMs: number;
  readonly syncAlways: boolean;
  readonly warn: (text: string) => void;
  /** Resolves once every message the stream stored so far is written (and synced with `always`). */
  readonly streamWritten: () => Promise<void>;
}

export class FileConsumerStore implements ConsumerStore {
  private readonly book: ConsumerBook;
  private dirty = false;
  /**
   * A write is armed (the timer) or running: what changes until then rides on it. One
   * field for both, read by every delivery and ack: their optimised code then never
   * meets a branch it has not seen (checking the timer, then the write, cost a deopt and
   * recompile of the whole delivery and ack paths at the first write).
   */
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private closed = false;
  private readonly path: string;

  constructor(
    private readonly dir: string,
    cfg: ConsumerStoreConfig,
    private readonly options: ConsumerFileOptions,
    private readonly onClose: (c: FileConsumerStore) => void,
  ) {
    this.book = new ConsumerBook(cfg);
    this.path = join(dir, CONSUMER_STATE_FILE);
    const saved = readState(this.path, options.warn);
    if (saved !== undefined) {
      try {
        this.book.update(saved);
      } catch (err) {
        options.warn(`consumer state ${this.path}: ${String(err)}; the consumer starts without it`);
      }
    }
  }

  setStarting(streamSeq: number): void {
    this.book.setStarting(streamSeq);
    this.changed();
  }

  updateDelivered(dseq: number, sseq: number, deliveryCount: number, ts: number): void {
    if (this.book.updateDelivered(dseq, sseq, deliveryCount, ts)) this.changed();
  }

  updateAcks(dseq: number, sseq: number): void {
    if (this.book.updateAcks(dseq, sseq)) this.changed();
  }

  update(state: ConsumerState): void {
    this.book.update(state);
    this.changed();
  }

  state(): ConsumerState {
    return this.book.copy();
  }

  private changed(): void {
    if (this.closed) return;
    this.dirty = true;
    if (!this.scheduled) this.arm();
  }

  private arm(): void {
    this.scheduled = true;
    this.timer = setTimeout(() => this.kick(), this.options.flushMs);
    this.timer.unref();
  }

  private kick(): void {
    this.timer = undefined;
    if (this.writing !== undefined) return;
    if (!this.dirty) {
      this.scheduled = false;
      return;
    }
    this.writing = this.write()
      .catch((err: unknown) => {
        this.options.warn(
          `consumer state ${this.path}: ${err instanceof Error ? err.message : String(err)}`,
        );
      })
      .finally(() => {
        this.writing = undefined;
        // Armed again whether or not something changed during the write: a busy
        // consumer's deliveries and acks then never call arm() themselves (its first call
        // from their optimised code would cost V8 a deopt and a recompile of the whole
        // delivery or ack path). The timer finds nothing to write once it goes quiet.
        if (this.closed) this.scheduled = false;
        else this.arm();
      });
  }

  private async write(): Promise<void> {
    this.dirty = false;
    const bytes = encodeState(this.book.state);
    // The messages this state names were stored before now: written only once they
    // are, so a crash never leaves the state ahead of the stream. (It did: delivered
    // past the stream's last sequence after a kill -9 in a slow round, and the consumer
    // would have passed over the messages stored again under those sequences.)
    await this.options.streamWritten();
    const tmp = `${this.path}.tmp`;
    await mkdir(this.dir, { recursive: true });
    const h = await open(tmp, 'w', 0o640);
    try {
      await h.writeFile(bytes);
      if (this.options.syncAlways) await h.datasync();
    } finally {
      await h.close();
    }
    await rename(tmp, this.path);
    if (this.options.syncAlways) syncDir(this.dir);
  }

  /** Writes the state now (server shutdown). */
  async stop(): Promise<void> {
    if (this.closed) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing !== undefined) await this.writing;
    // A write that ended meanwhile armed the timer again.
    clearTimeout(this.timer);
    this.timer = undefined;
    this.closed = true;
    this.dirty = true;
    await this.write();
    this.onClose(this);
  }

  async delete(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.closed = true;
    while (this.writing !== undefined) await this.writing;
    await rm(this.dir, { recursive: true, force: true });
    this.onClose(this);
  }
}

// o.dat: file header, u32 payload length, u32 CRC32 of the payload, then doubles:
// ack floor (consumer, stream), delivered (consumer, stream), pending count, each
// pending (stream seq, delivery seq, ts), redelivered count, each (stream seq, count).
function encodeState(s: ConsumerState): Buffer {
  const n = 5 + 3 * s.pending.size + 1 + 2 * s.redelivered.size;
  const start = FILE_HEADER_SIZE + 8;
  // A buffer of its own (8-aligned, not a slice of Node's pool) whose doubles are
  // written through a Float64Array: a plain store per value, not writeDoubleLE's
  // checks and byte shuffling, run ten times a second over every pending ack (and
  // compiled by V8 for that loop, on a fresh server's first busy consumer).
  const b = Buffer.from(new ArrayBuffer(start + n * 8));
  const d = LITTLE_ENDIAN ? new Float64Array(b.buffer, start, n) : new Float64Array(n);
  let i = 0;
  d[i++] = s.ackFloor.consumer;
  d[i++] = s.ackFloor.stream;
  d[i++] = s.delivered.consumer;
  d[i++] = s.delivered.stream;
  d[i++] = s.pending.size;
  for (const [seq, p] of s.pending) {
    d[i++] = seq;
    d[i++] = p.sequence;
    d[i++] = p.ts;
  }
  d[i++] = s.redelivered.size;
  for (const [seq, dc] of s.redelivered) {
    d[i++] = seq;
    d[i++] = dc;
  }
  if (!LITTLE_ENDIAN) for (let k = 0; k < n; k++) b.writeDoubleLE(d[k]!, start + k * 8);
  fileHeader(CONSUMER_MAGIC).copy(b, 0);
  const payload = b.subarray(start);
  b.writeUInt32LE(payload.length, FILE_HEADER_SIZE);
  b.writeUInt32LE(crc32(payload), FILE_HEADER_SIZE + 4);
  return b;
}

/** o.dat's doubles are little-endian: a Float64Array writes them as they are here. */
const LITTLE_ENDIAN = endianness() === 'LE';

function readState(path: string, warn: (text: string) => void): ConsumerState | undefined {
  let b: Buffer;
  try {
    b = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const problem = stateProblem(b);
  if (problem !== undefined) {
    warn(`consumer state ${path}: ${problem}; the consumer starts without it`);
    return undefined;
  }
  const payload = b.subarray(FILE_HEADER_SIZE + 8);
  let pos = 0;
  const get = (): number => {
    if (pos + 8 > payload.length) throw new RangeError('truncated');
    const v = payload.readDoubleLE(pos);
    pos += 8;
    return v;
  };
  try {
    const s: ConsumerState = {
      ackFloor: { consumer: get(), stream: get() },
      delivered: { consumer: get(), stream: get() },
      pending: new Map(),
      redelivered: new Map(),
    };
    for (let n = get(); n > 0; n--) {
      const seq = get();
      s.pending.set(seq, { sequence: get(), ts: get() });
    }
    for (let n = get(); n > 0; n--) {
      const seq = get();
      s.redelivered.set(seq, get());
    }
    return s;
  } catch {
    warn(`consumer state ${path}: truncated; the consumer starts without it`);
    return undefined;
  }
}

function stateProblem(b: Buffer): string | undefined {
  const problem = headerProblem(b, CONSUMER_MAGIC);
  if (problem !== undefined) return problem;
  if (b.length < FILE_HEADER_SIZE + 8) return 'file too short';
  const payload = b.subarray(FILE_HEADER_SIZE + 8);
  const len = b.readUInt32LE(FILE_HEADER_SIZE);
  if (payload.length !== len || len % 8 !== 0) return 'length mismatch';
  if (crc32(payload) !== b.readUInt32LE(FILE_HEADER_SIZE + 4)) return 'checksum mismatch';
  return undefined;
}
