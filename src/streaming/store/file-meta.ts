// Small files of the FILE store that are rewritten rather than appended to:
// channels/<name>/channel.dat (the channel's first sequence) and server.dat (the
// ServerInfo), and the atomic replacement (temporary file, fsync, rename) used for
// them and for compactions.
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDir, type IoScheduler } from './file-io.js';
import { DeadFileError, type StoreFile } from './file-pool.js';
import {
  FILE_HEADER_SIZE,
  RECORD_HEADER_SIZE,
  checkFileHeader,
  fileHeader,
  getU64,
  putRecord,
  putU64,
  recordCrc,
  typedSize,
} from './file-record.js';

export const CHANNEL_META = 'channel.dat';
const FIRST_SEQ_RECORD = 1;
const FIRST_SEQ_FILE_SIZE = FILE_HEADER_SIZE + RECORD_HEADER_SIZE + 8;

/**
 * Overwrites channel.dat in place: 24 bytes at offset 0, within one disk sector, so
 * it is either the old or the new content; the CRC tells if neither.
 */
export async function writeFirstSeq(
  io: IoScheduler,
  file: StoreFile,
  first: number,
): Promise<void> {
  const b = Buffer.allocUnsafe(FIRST_SEQ_FILE_SIZE);
  fileHeader().copy(b, 0);
  const payload = Buffer.allocUnsafe(8);
  putU64(payload, 0, first);
  putRecord(b, FILE_HEADER_SIZE, typedSize(FIRST_SEQ_RECORD, 8), payload);
  try {
    await io.pool.use(file, (h) => h.write(b, 0, b.length, 0), true);
  } catch (err) {
    // The channel was deleted meanwhile: its directory is gone with it.
    if (err instanceof DeadFileError) return;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** The first sequence saved in channel.dat, or undefined if missing or unreadable. */
export async function readFirstSeq(path: string): Promise<number | undefined> {
  let b: Buffer;
  try {
    b = await readFile(path);
  } catch {
    return undefined;
  }
  if (b.length < FIRST_SEQ_FILE_SIZE) return undefined;
  try {
    checkFileHeader(b, path);
  } catch {
    return undefined;
  }
  const field = b.readUInt32LE(FILE_HEADER_SIZE);
  const payload = b.subarray(FIRST_SEQ_FILE_SIZE - 8, FIRST_SEQ_FILE_SIZE);
  if (field !== typedSize(FIRST_SEQ_RECORD, 8)) return undefined;
  if (recordCrc(field, payload) !== b.readUInt32LE(FILE_HEADER_SIZE + 4)) return undefined;
  const first = getU64(payload, 0);
  return Number.isFinite(first) ? first : undefined;
}

/**
 * Replaces `path` with `chunks` atomically: a crash leaves the old file or the new
 * one, never a mix. The temporary file is synced before the rename whatever the
 * sync option, since the rename makes it the only copy.
 */
export async function replaceFile(path: string, chunks: readonly Buffer[]): Promise<void> {
  const tmp = `${path}.tmp`;
  const h = await open(tmp, 'w', 0o644);
  try {
    await h.writev(chunks as Buffer[], 0);
    await h.datasync();
  } catch (err) {
    await h.close();
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await h.close();
  await rename(tmp, path);
  await syncDir(dirname(path));
}
