// Reading messages back from a slice: one positioned read of up to read_buffer_size
// bytes from the requested message on, parsed into messages with the sequence and
// timestamp from the index, so a subscription catching up reads the log in large
// sequential blocks instead of one small read per message.
import Long from 'long';
import type { IoScheduler } from './file-io.js';
import { type Crc32, RECORD_HEADER_SIZE } from './file-record.js';
import type { Slice } from './file-slice.js';
import type { StoredMsg } from './types.js';

export interface ReadBlock {
  readonly slice: Slice;
  readonly from: number;
  /** The last sequence asked for. */
  readonly to: number;
  /** Messages from..from+length-1 (shorter than asked if a record was bad). */
  readonly msgs: StoredMsg[];
}

/** True when every message asked for was read (no bad record cut the block short). */
export function isWhole(b: ReadBlock): boolean {
  return b.msgs.length === b.to - b.from + 1;
}

/**
 * A message read back from a slice. Its timestamp becomes a Long only when asked for:
 * delivery needs the bytes alone, and a catch-up reads every message once.
 */
class ReadMsg implements StoredMsg {
  constructor(
    readonly sequence: number,
    readonly encoded: Buffer,
    private readonly tsLow: number,
    private readonly tsHigh: number,
  ) {}

  get timestamp(): Long {
    return Long.fromBits(this.tsLow, this.tsHigh);
  }
}

/** The last message of the block that starts at `seq`: as many as fit in `maxBytes`, at least one. */
export function blockEnd(slice: Slice, seq: number, maxBytes: number): number {
  let to = seq;
  let bytes = RECORD_HEADER_SIZE + slice.sizeOf(seq);
  while (to < slice.lastSeq) {
    bytes += RECORD_HEADER_SIZE + slice.sizeOf(to + 1);
    if (bytes > maxBytes) break;
    to++;
  }
  return to;
}

/**
 * Reads messages `seq`..`to` of `slice` (its index resident, see blockEnd). Records
 * are checked against the index and, with `crc`, their CRC; reading stops before
 * the first bad one, which `warn` reports.
 */
export async function readBlock(
  io: IoScheduler,
  slice: Slice,
  seq: number,
  to: number,
  crc: Crc32 | undefined,
  warn: (text: string) => void,
): Promise<ReadBlock> {
  const start = slice.offsetOf(seq);
  const end = slice.offsetOf(to) + RECORD_HEADER_SIZE + slice.sizeOf(to);
  // Appended but not on disk yet (evicted from the cache before its round ran).
  if (end > slice.dat.written) await io.flush();
  const buf = Buffer.allocUnsafe(end - start);
  const msgs: StoredMsg[] = [];
  const block: ReadBlock = { slice, from: seq, to, msgs };
  if (slice.dat.dead) return block;
  try {
    await io.pool.use(slice.dat, async (h) => {
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await h.read(buf, got, buf.length - got, start + got);
        if (bytesRead === 0) throw new Error(`unexpected end of file at offset ${start + got}`);
        got += bytesRead;
      }
    });
  } catch (err) {
    // A slice removed by limits meanwhile has nothing to give; anything else is logged.
    if (!isDead(slice)) warn(`file store: cannot read ${slice.dat.path}: ${String(err)}`);
    return block;
  }
  let pos = 0;
  for (let s = seq; s <= to; s++) {
    const size = slice.sizeOf(s);
    const field = buf.readUInt32LE(pos);
    const encoded = buf.subarray(pos + RECORD_HEADER_SIZE, pos + RECORD_HEADER_SIZE + size);
    if (
      field !== size ||
      (crc !== undefined && crc.bytes(encoded, 0, size) !== buf.readUInt32LE(pos + 4))
    ) {
      warn(
        `file store: corrupt record for message ${s} in ${slice.dat.path} at offset ${start + pos}`,
      );
      break;
    }
    msgs.push(new ReadMsg(s, encoded, slice.tsLowOf(s), slice.tsHighOf(s)));
    pos += RECORD_HEADER_SIZE + size;
  }
  return block;
}

// Read again after an await: limits may have removed the slice meanwhile.
function isDead(slice: Slice): boolean {
  return slice.dat.dead;
}
