// Reading nats-server 2.9's own file-store files out of its snapshots, so that a stream
// backed up from nats-server restores into wirebus (the migration path): message blocks
// (`msgs/<n>.blk`), their index files (`msgs/<n>.idx`: first and last sequence and the
// deleted sequences), and consumer states (`obs/<name>/o.dat`). Checksums (HighwayHash)
// are not verified; encrypted or compressed stores are not supported.

import type { ConsumerState, StoredMsg } from '../storage/types.js';

/** The reference's file magic and the bits of its record header. */
const MAGIC = 22;
const HBIT = 0x80000000;
const MSG_HDR_SIZE = 22;
const CHECKSUM_SIZE = 8;
const EBIT = 1n << 63n;

export const BAD_CONTENT = 'bad reference snapshot content';

class Varints {
  p: number;
  constructor(
    private readonly b: Buffer,
    start: number,
  ) {
    this.p = start;
  }

  /** An unsigned varint (Go's binary.Uvarint) as read. */
  private raw(): bigint {
    let x = 0n;
    let shift = 0n;
    for (;;) {
      if (this.p >= this.b.length || shift > 63n) throw new Error(BAD_CONTENT);
      const c = this.b[this.p++]!;
      x |= BigInt(c & 0x7f) << shift;
      if (c < 0x80) return x;
      shift += 7n;
    }
  }

  uint(): number {
    // Sequences carry the erase bit in indexes; it is not part of the number.
    return Number(this.raw() & ~EBIT);
  }

  int(): number {
    // Zig-zag, as Go's binary.PutVarint.
    const x = this.raw();
    return Number(x & 1n ? -(x >> 1n) - 1n : x >> 1n);
  }
}

export interface BlockIndex {
  first: number;
  last: number;
  deleted: Set<number>;
}

/** A block's `.idx`: magic, version, msgs, bytes, first seq/ts, last seq/ts, deletes. */
export function parseIndex(b: Buffer): BlockIndex {
  if (b.length < 2 || b[0] !== MAGIC) throw new Error(BAD_CONTENT);
  const v = new Varints(b, 2);
  v.uint();
  v.uint();
  const first = v.uint();
  v.int();
  const last = v.uint();
  v.int();
  const ndel = v.uint();
  v.p += CHECKSUM_SIZE;
  const deleted = new Set<number>();
  for (let i = 0; i < ndel; i++) {
    const d = v.uint();
    if (d === 0) break;
    deleted.add(d + first);
  }
  return { first, last, deleted };
}

/** The live messages of a `.blk`, in order: erased, deleted and compacted-away ones skipped. */
export function* blockMsgs(b: Buffer, idx: BlockIndex): Generator<StoredMsg> {
  let p = 0;
  while (p < b.length) {
    if (b.length - p < MSG_HDR_SIZE) throw new Error(BAD_CONTENT);
    const raw = b.readUInt32LE(p);
    const hasHeaders = (raw & HBIT) !== 0;
    const rl = raw & ~HBIT;
    const slen = b.readUInt16LE(p + 20);
    if (rl < MSG_HDR_SIZE + CHECKSUM_SIZE || p + rl > b.length || slen > rl) {
      throw new Error(BAD_CONTENT);
    }
    const seqBits = b.readBigUInt64LE(p + 4);
    const seq = Number(seqBits & ~EBIT);
    const live =
      seqBits !== 0n && (seqBits & EBIT) === 0n && seq >= idx.first && !idx.deleted.has(seq);
    if (live) {
      const ts = Number(b.readBigInt64LE(p + 12));
      let q = p + MSG_HDR_SIZE;
      const subject = b.toString('utf8', q, q + slen);
      q += slen;
      const end = p + rl - CHECKSUM_SIZE;
      let hdr: Buffer = Buffer.alloc(0);
      if (hasHeaders) {
        const hl = b.readUInt32LE(q);
        q += 4;
        if (q + hl > end) throw new Error(BAD_CONTENT);
        hdr = b.subarray(q, q + hl);
        q += hl;
      }
      yield { subject, seq, ts, hdr, data: b.subarray(q, end) };
    }
    p += rl;
  }
}

/** A consumer's `o.dat` (versions 1 and 2 of the reference's encodeConsumerState). */
export function parseConsumerStateFile(b: Buffer): ConsumerState {
  if (b.length < 2 || b[0] !== MAGIC || (b[1] !== 1 && b[1] !== 2)) throw new Error(BAD_CONTENT);
  const version = b[1];
  const v = new Varints(b, 2);
  const ackFloor = { consumer: v.uint(), stream: v.uint() };
  const delivered = { consumer: v.uint(), stream: v.uint() };
  if (version === 1) {
    if (ackFloor.consumer > 1) delivered.consumer += ackFloor.consumer - 1;
    if (ackFloor.stream > 1) delivered.stream += ackFloor.stream - 1;
  }
  const pending = new Map<number, { sequence: number; ts: number }>();
  const np = v.uint();
  if (np > 0) {
    const mints = v.int();
    for (let i = 0; i < np; i++) {
      const sseq = v.uint() + ackFloor.stream;
      const dseq = version === 2 ? v.uint() + ackFloor.consumer : 0;
      const ts = v.int();
      const sec = version === 1 ? ts + mints : mints - ts;
      pending.set(sseq, { sequence: dseq, ts: sec * 1e9 });
    }
  }
  const redelivered = new Map<number, number>();
  if (v.p < b.length) {
    const nr = v.uint();
    for (let i = 0; i < nr; i++) {
      const seq = v.uint();
      const n = v.uint();
      if (seq > 0 && n > 0) redelivered.set(seq + ackFloor.stream, n);
    }
  }
  return { delivered, ackFloor, pending, redelivered };
}
