// What a wirebus snapshot holds and how it is read back (the format is documented in
// storage/FILE-FORMAT.md, "Snapshots"): an S2-framed tar in nats-server's directory
// layout, with wirebus's own files for the messages and the consumers' positions.

import {
  blankStoredMsg,
  type ConsumerState,
  type StoredMsg,
  type StreamStore,
} from '../storage/types.js';
import { S2Writer } from './s2.js';
import { tarEnd, tarEntry } from './tar.js';

export const META = 'meta.inf';
/** Names the format and the sequence range the snapshot covers. */
export const WIREBUS_INFO = 'wirebus.json';
export const FORMAT = 'wirebus-jetstream-snapshot';
export const VERSION = 1;
const MSGS_PREFIX = 'msgs/';
const MSGS_SUFFIX = '.wbm';
const OBS_PREFIX = 'obs/';
const CONSUMER_STATE = 'state.json';
/** Messages are grouped into tar entries of about this size (restore holds one at a time). */
const BATCH_BYTES = 1024 * 1024;

export interface SnapshotConsumer {
  name: string;
  meta: Buffer;
  state: ConsumerState;
}

export interface SnapshotSource {
  /** The stream's meta.inf (its config and creation time). */
  meta: Buffer;
  store: StreamStore;
  firstSeq: number;
  lastSeq: number;
  consumers: SnapshotConsumer[];
}

/** The consumer state as JSON: sequence pairs, pending deliveries, redelivery counts. */
export function consumerStateJson(st: ConsumerState): Buffer {
  return Buffer.from(
    JSON.stringify({
      delivered: { consumer_seq: st.delivered.consumer, stream_seq: st.delivered.stream },
      ack_floor: { consumer_seq: st.ackFloor.consumer, stream_seq: st.ackFloor.stream },
      pending: [...st.pending].map(([sseq, p]) => [sseq, p.sequence, p.ts]),
      redelivered: [...st.redelivered],
    }),
  );
}

function isPair(v: unknown): v is { consumer_seq: number; stream_seq: number } {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return Number.isSafeInteger(o.consumer_seq) && Number.isSafeInteger(o.stream_seq);
}

function isTuples(v: unknown, width: number): v is number[][] {
  return (
    Array.isArray(v) &&
    v.every((t) => Array.isArray(t) && t.length === width && t.every((n) => typeof n === 'number'))
  );
}

export function parseConsumerState(body: Buffer): ConsumerState | null {
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (!isPair(o.delivered) || !isPair(o.ack_floor)) return null;
  if (!isTuples(o.pending, 3) || !isTuples(o.redelivered, 2)) return null;
  return {
    delivered: { consumer: o.delivered.consumer_seq, stream: o.delivered.stream_seq },
    ackFloor: { consumer: o.ack_floor.consumer_seq, stream: o.ack_floor.stream_seq },
    pending: new Map(o.pending.map(([s, d, ts]) => [s!, { sequence: d!, ts: ts! }])),
    redelivered: new Map(o.redelivered.map(([s, n]) => [s!, n!])),
  };
}

/** One message record: seq (u64), ts (i64 ns), subject, header and data, each sized. */
function encodeMsg(m: StoredMsg): Buffer {
  const subj = Buffer.from(m.subject, 'utf8');
  const b = Buffer.allocUnsafe(8 + 8 + 2 + subj.length + 4 + m.hdr.length + 4 + m.data.length);
  let p = b.writeBigUInt64LE(BigInt(m.seq), 0);
  p = b.writeBigInt64LE(BigInt(Math.round(m.ts)), p);
  p = b.writeUInt16LE(subj.length, p);
  p += subj.copy(b, p);
  p = b.writeUInt32LE(m.hdr.length, p);
  p += m.hdr.copy(b, p);
  p = b.writeUInt32LE(m.data.length, p);
  m.data.copy(b, p);
  return b;
}

/** The records of one messages entry; throws on a truncated or inconsistent one. */
export function* decodeMsgs(b: Buffer): Generator<StoredMsg> {
  let p = 0;
  while (p < b.length) {
    if (b.length - p < 22) throw new Error('truncated message record');
    const seq = Number(b.readBigUInt64LE(p));
    const ts = Number(b.readBigInt64LE(p + 8));
    const sl = b.readUInt16LE(p + 16);
    p += 18;
    if (b.length - p < sl + 4) throw new Error('truncated message record');
    const subject = b.toString('utf8', p, p + sl);
    p += sl;
    const hl = b.readUInt32LE(p);
    p += 4;
    if (b.length - p < hl + 4) throw new Error('truncated message record');
    const hdr = b.subarray(p, p + hl);
    p += hl;
    const dl = b.readUInt32LE(p);
    p += 4;
    if (b.length - p < dl) throw new Error('truncated message record');
    const data = b.subarray(p, p + dl);
    p += dl;
    yield { subject, seq, ts, hdr, data };
  }
}

/** A messages entry's name (`msgs/<n>.wbm`), or null for any other name. */
export function isMsgsEntry(name: string): boolean {
  return name.startsWith(MSGS_PREFIX) && name.endsWith(MSGS_SUFFIX);
}

/** A consumer's file: its meta, wirebus's state, or nats-server's state (`o.dat`). */
export type ConsumerFile = 'meta' | 'state' | 'o.dat' | 'meta.sum';

/** `obs/<consumer>/<file>`: the consumer and the file, or null. */
export function consumerEntry(name: string): { consumer: string; file: ConsumerFile } | null {
  if (!name.startsWith(OBS_PREFIX)) return null;
  const parts = name.substring(OBS_PREFIX.length).split('/');
  if (parts.length !== 2 || parts[0] === '') return null;
  const consumer = parts[0]!;
  if (parts[1] === META) return { consumer, file: 'meta' };
  if (parts[1] === CONSUMER_STATE) return { consumer, file: 'state' };
  if (parts[1] === 'o.dat' || parts[1] === 'meta.sum') return { consumer, file: parts[1] };
  return null;
}

/** nats-server's `msgs/<n>.blk` or `.idx`: the block number and the kind, or null. */
export function referenceBlockEntry(name: string): { block: number; kind: 'blk' | 'idx' } | null {
  const m = /^msgs\/(\d+)\.(blk|idx)$/.exec(name);
  return m === null ? null : { block: Number(m[1]), kind: m[2] as 'blk' | 'idx' };
}

/**
 * The snapshot's bytes, piece by piece: messages are read from the store as the pieces are
 * taken, so a large stream is never held whole. Sequences removed meanwhile are left out.
 */
export function* snapshotBytes(src: SnapshotSource): Generator<Buffer> {
  const s2 = new S2Writer();
  const mtime = Date.now() / 1000;
  const entry = (name: string, body: Buffer): Buffer[] =>
    s2.frame(Buffer.concat(tarEntry(name, body, mtime)));
  yield* entry(META, src.meta);
  const info = { format: FORMAT, version: VERSION, first_seq: src.firstSeq, last_seq: src.lastSeq };
  yield* entry(WIREBUS_INFO, Buffer.from(JSON.stringify(info)));
  let batch: Buffer[] = [];
  let size = 0;
  let n = 0;
  const into = blankStoredMsg();
  for (let seq = src.firstSeq; seq > 0 && seq <= src.lastSeq;) {
    const m = src.store.loadNextMsg('', false, seq, into);
    if (m === undefined || m.seq > src.lastSeq) break;
    const rec = encodeMsg(m);
    batch.push(rec);
    size += rec.length;
    seq = m.seq + 1;
    if (size >= BATCH_BYTES) {
      yield* entry(`${MSGS_PREFIX}${++n}${MSGS_SUFFIX}`, Buffer.concat(batch));
      batch = [];
      size = 0;
    }
  }
  if (batch.length > 0) yield* entry(`${MSGS_PREFIX}${++n}${MSGS_SUFFIX}`, Buffer.concat(batch));
  for (const c of src.consumers) {
    yield* entry(`${OBS_PREFIX}${c.name}/${META}`, c.meta);
    yield* entry(`${OBS_PREFIX}${c.name}/${CONSUMER_STATE}`, consumerStateJson(c.state));
  }
  yield* s2.frame(tarEnd());
}
