// The S2 stream container of JetStream snapshots (the Snappy framing format with S2's
// stream identifier and repeat offsets): nats-server writes its snapshots through an S2
// writer, and reads restores through an S2 reader. wirebus writes stored (uncompressed)
// chunks, which every S2 and Snappy reader accepts, and reads compressed chunks too, so a
// snapshot taken by nats-server can be read.

/** What the reference's S2 reader says of any input it cannot decode. */
export const S2_CORRUPT = 's2: corrupt input';

const STREAM_ID = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x53, 0x32, 0x73, 0x54, 0x77, 0x4f]);
const SNAPPY_ID = Buffer.from('sNaPpY', 'latin1');
const CHUNK_COMPRESSED = 0x00;
const CHUNK_UNCOMPRESSED = 0x01;
const CHUNK_STREAM_ID = 0xff;
/** The largest uncompressed chunk a writer emits (S2 readers take up to 4 MB). */
const MAX_CHUNK = 64 * 1024;
/** The largest block S2 allows in a stream. */
const MAX_BLOCK = 4 * 1024 * 1024;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli), masked as the framing format stores it. */
function maskedCrc(b: Buffer): number {
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = CRC_TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  c = (c ^ 0xffffffff) >>> 0;
  return (((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0;
}

/** Frames bytes as an S2 stream: the stream identifier first, then stored chunks. */
export class S2Writer {
  private started = false;

  /** The framed form of `data` (the stream identifier before the first bytes). */
  frame(data: Buffer): Buffer[] {
    const out: Buffer[] = [];
    if (!this.started) {
      this.started = true;
      out.push(STREAM_ID);
    }
    for (let o = 0; o < data.length; o += MAX_CHUNK) {
      const part = data.subarray(o, Math.min(data.length, o + MAX_CHUNK));
      const head = Buffer.allocUnsafe(8);
      const len = part.length + 4;
      head[0] = CHUNK_UNCOMPRESSED;
      head[1] = len & 0xff;
      head[2] = (len >>> 8) & 0xff;
      head[3] = (len >>> 16) & 0xff;
      head.writeUInt32LE(maskedCrc(part), 4);
      out.push(head, part);
    }
    return out;
  }

  /** An empty stream still has its identifier. */
  end(): Buffer[] {
    return this.started ? [] : this.frame(Buffer.alloc(0));
  }
}

/** Reads an S2 (or Snappy) framed stream pushed to it in pieces of any size. */
export class S2Reader {
  private pending: Buffer = Buffer.alloc(0);
  private sawId = false;

  /** The decoded bytes of the complete chunks so far; throws S2_CORRUPT. */
  push(bytes: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    const out: Buffer[] = [];
    let p = 0;
    const b = this.pending;
    while (b.length - p >= 4) {
      const type = b[p]!;
      const len = b[p + 1]! | (b[p + 2]! << 8) | (b[p + 3]! << 16);
      if (!this.sawId && type !== CHUNK_STREAM_ID) throw new Error(S2_CORRUPT);
      if (len > MAX_BLOCK + 4 + 16) throw new Error(S2_CORRUPT);
      if (b.length - p - 4 < len) break;
      const body = b.subarray(p + 4, p + 4 + len);
      p += 4 + len;
      if (type === CHUNK_STREAM_ID) {
        if (len !== 6) throw new Error(S2_CORRUPT);
        const id = body.toString('latin1');
        if (id !== 'S2sTwO' && !body.equals(SNAPPY_ID)) throw new Error(S2_CORRUPT);
        this.sawId = true;
      } else if (type === CHUNK_COMPRESSED || type === CHUNK_UNCOMPRESSED) {
        if (len < 4) throw new Error(S2_CORRUPT);
        const crc = body.readUInt32LE(0);
        const data =
          type === CHUNK_UNCOMPRESSED
            ? Buffer.from(body.subarray(4))
            : decodeBlock(body.subarray(4));
        if (maskedCrc(data) !== crc) throw new Error(S2_CORRUPT);
        out.push(data);
      } else if (type < 0x80) {
        // Reserved unskippable chunks.
        throw new Error(S2_CORRUPT);
      }
      // Padding (0xfe) and reserved skippable chunks (0x80-0xfd) carry nothing.
    }
    this.pending = p === b.length ? Buffer.alloc(0) : Buffer.from(b.subarray(p));
    return out;
  }

  /** Whether the stream ended on a chunk boundary. */
  get complete(): boolean {
    return this.pending.length === 0;
  }
}

/** Decodes one Snappy/S2 block: the uncompressed length, then literals and copies. */
export function decodeBlock(src: Buffer): Buffer {
  let s = 0;
  let n = 0;
  for (let shift = 0; ; shift += 7) {
    if (s >= src.length || shift > 28) throw new Error(S2_CORRUPT);
    const c = src[s++]!;
    n += (c & 0x7f) * 2 ** shift;
    if (c < 0x80) break;
  }
  if (n > MAX_BLOCK) throw new Error(S2_CORRUPT);
  const dst = Buffer.allocUnsafe(n);
  let d = 0;
  let offset = 0;
  while (s < src.length) {
    const tag = src[s]!;
    let length: number;
    switch (tag & 3) {
      case 0: {
        let x = tag >>> 2;
        if (x < 60) s++;
        else {
          const extra = x - 59;
          if (s + 1 + extra > src.length) throw new Error(S2_CORRUPT);
          x = 0;
          for (let i = 0; i < extra; i++) x += src[s + 1 + i]! * 2 ** (8 * i);
          s += 1 + extra;
        }
        length = x + 1;
        if (length > n - d || length > src.length - s) throw new Error(S2_CORRUPT);
        src.copy(dst, d, s, s + length);
        d += length;
        s += length;
        continue;
      }
      case 1: {
        if (s + 2 > src.length) throw new Error(S2_CORRUPT);
        const o = ((tag & 0xe0) << 3) | src[s + 1]!;
        length = (tag >>> 2) & 7;
        s += 2;
        if (o !== 0) {
          offset = o;
          length += 4;
        } else {
          // S2's repeat of the last offset, with its own length encoding.
          if (length === 5) {
            if (s + 1 > src.length) throw new Error(S2_CORRUPT);
            length = src[s]! + 4;
            s += 1;
          } else if (length === 6) {
            if (s + 2 > src.length) throw new Error(S2_CORRUPT);
            length = (src[s]! | (src[s + 1]! << 8)) + 256;
            s += 2;
          } else if (length === 7) {
            if (s + 3 > src.length) throw new Error(S2_CORRUPT);
            length = (src[s]! | (src[s + 1]! << 8) | (src[s + 2]! << 16)) + 65536;
            s += 3;
          }
          length += 4;
        }
        break;
      }
      case 2:
        if (s + 3 > src.length) throw new Error(S2_CORRUPT);
        length = 1 + (tag >>> 2);
        offset = src[s + 1]! | (src[s + 2]! << 8);
        s += 3;
        break;
      default:
        if (s + 5 > src.length) throw new Error(S2_CORRUPT);
        length = 1 + (tag >>> 2);
        offset = src.readUInt32LE(s + 1);
        s += 5;
    }
    if (offset <= 0 || d < offset || length > n - d) throw new Error(S2_CORRUPT);
    for (const end = d + length; d < end; d++) dst[d] = dst[d - offset]!;
  }
  if (d !== n) throw new Error(S2_CORRUPT);
  return dst;
}
