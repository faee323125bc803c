// Sequential reading of a store file for recovery: a fixed-size window slides over
// the file, so memory stays bounded whatever the file size. Every record's CRC is
// checked; the first record that cannot be read ends the scan with its offset and
// the reason, and the caller decides (cut the file there or refuse to start).
import type { FileHandle } from 'node:fs/promises';
import {
  type Crc32,
  FileStoreError,
  MAX_RECORD_SIZE,
  MAX_TYPED_SIZE,
  RECORD_HEADER_SIZE,
} from './file-record.js';

export interface ScannedRecord {
  readonly offset: number;
  /** The record type (typed files), 0 for untyped files. */
  readonly type: number;
  /** A view into the reader's window: valid until the next call to next(). */
  readonly payload: Buffer;
  /** Offset just past this record. */
  readonly end: number;
}

export interface BadRecord {
  readonly offset: number;
  /** True when the file ends inside the record (a torn write), false for damage. */
  readonly eof: boolean;
  readonly reason: string;
}

export class FileReader {
  private buf: Buffer;
  /** File offset of buf[0] and number of valid bytes in buf. */
  private bufStart = 0;
  private bufLen = 0;
  /** Where the next record starts. */
  pos: number;
  bad: BadRecord | undefined;
  /**
   * Where an all-zero record header was found: the file was extended with zeros (a
   * crash on some file systems) and ends there. The reference cuts it there, unasked.
   */
  zeroAt: number | undefined;

  constructor(
    private readonly handle: FileHandle,
    readonly fileSize: number,
    start: number,
    windowSize: number,
    private readonly typed: boolean,
    private readonly crc: Crc32,
  ) {
    this.buf = Buffer.allocUnsafe(Math.max(4096, Math.min(windowSize, fileSize)));
    this.pos = start;
    this.bufStart = start;
  }

  /** `n` bytes at file offset `at`, as a view of the window (read from disk as needed). */
  async bytes(at: number, n: number): Promise<Buffer> {
    if (at < this.bufStart || at + n > this.bufStart + this.bufLen) await this.fill(at, n);
    const from = at - this.bufStart;
    return this.buf.subarray(from, from + n);
  }

  /**
   * The next record, or undefined at the end of the file or at the first bad record
   * (then `bad` says where and why, and `pos` is its offset).
   */
  async next(): Promise<ScannedRecord | undefined> {
    const at = this.pos;
    const left = this.fileSize - at;
    if (left === 0) return undefined;
    if (left < RECORD_HEADER_SIZE) {
      return this.fail(at, true, `unexpected end of file (${left} bytes of a record header)`);
    }
    const head = await this.bytes(at, RECORD_HEADER_SIZE);
    const sizeField = head.readUInt32LE(0);
    const crc = head.readUInt32LE(4);
    if (sizeField === 0 && crc === 0) {
      this.zeroAt = at;
      return undefined;
    }
    const type = this.typed ? sizeField >>> 24 : 0;
    const size = this.typed ? sizeField & MAX_TYPED_SIZE : sizeField;
    if (size > MAX_RECORD_SIZE) return this.fail(at, false, `invalid record size ${size}`);
    const end = at + RECORD_HEADER_SIZE + size;
    if (end > this.fileSize) {
      return this.fail(
        at,
        true,
        `unexpected end of file (record of ${size} bytes, ${left - RECORD_HEADER_SIZE} left)`,
      );
    }
    const payload = await this.bytes(at + RECORD_HEADER_SIZE, size);
    if (this.crc.bytes(payload, 0, size) !== crc) return this.fail(at, false, 'CRC mismatch');
    this.pos = end;
    return { offset: at, type, payload, end };
  }

  private fail(offset: number, eof: boolean, reason: string): ScannedRecord | undefined {
    this.bad = { offset, eof, reason };
    return undefined;
  }

  private async fill(at: number, n: number): Promise<void> {
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
    // Keep what is still ahead of `at`, read the rest of the window after it.
    let kept = 0;
    if (at >= this.bufStart && at < this.bufStart + this.bufLen) {
      kept = this.bufStart + this.bufLen - at;
      this.buf.copy(this.buf, 0, at - this.bufStart, this.bufLen);
    }
    this.bufStart = at;
    this.bufLen = kept;
    const want = Math.min(this.buf.length, this.fileSize - at);
    while (this.bufLen < want) {
      const { bytesRead } = await this.handle.read(
        this.buf,
        this.bufLen,
        want - this.bufLen,
        at + this.bufLen,
      );
      if (bytesRead === 0) break;
      this.bufLen += bytesRead;
    }
    if (this.bufLen < n) throw new Error(`short read at offset ${at} (file changed while read)`);
  }
}

/**
 * The outcome of an unreadable record at recovery: with truncate_bad_eof the file is
 * cut there (logged with what was removed) and its new size returned; without it the
 * store refuses to start, naming the file and the offset.
 */
export async function cutOrRefuse(
  handle: FileHandle,
  path: string,
  size: number,
  bad: BadRecord,
  truncate: boolean,
  warn: (text: string) => void,
): Promise<number> {
  if (!truncate) {
    throw new FileStoreError(
      bad.eof ? 'TRUNCATED' : 'CORRUPT',
      `file store: ${bad.reason} in ${path} at offset ${bad.offset}; ` +
        'start with --file_truncate_bad_eof to cut the file there',
      path,
      bad.offset,
    );
  }
  await handle.truncate(bad.offset);
  await handle.datasync();
  warn(
    `file store: ${bad.reason} in ${path} at offset ${bad.offset}: ` +
      `file cut there (${size - bad.offset} bytes removed)`,
  );
  return bad.offset;
}

/** Cuts a file at its zero padding (see FileReader.zeroAt); returns the new size. */
export async function cutZeros(
  handle: FileHandle,
  path: string,
  size: number,
  at: number,
  warn: (text: string) => void,
): Promise<number> {
  await handle.truncate(at);
  await handle.datasync();
  warn(`file store: ${path} ended with ${size - at} zero bytes from offset ${at}: cut there`);
  return at;
}
