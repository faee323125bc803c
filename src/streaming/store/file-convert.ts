// Conversion of a directory in wirebus's former FILE format (before the reference's
// layout was adopted) into the reference's layout, done once, in place, at start.
//
// The former format: DIR/VERSION ("wirebus-file-store 1"), DIR/server.dat and
// DIR/clients.dat, DIR/channels/<name>/{msgs.N.dat, msgs.N.idx, subs.dat,
// channel.dat}; every file starts with "WBFS" + u32 1 (8 bytes); a record is u32 size
// (typed: type << 24 | size) + u32 CRC32 (IEEE) of the size field's 4 bytes then the
// payload, + payload. Payloads (protobuf) are the same in both formats; server.dat's
// one record was typed (type 1). channel.dat (the first sequence) has no equivalent:
// limits are applied again at start, as the reference does.
//
// Crash safety: everything is written under DIR/.convert/ first and synced, then
// DIR/.convert/DONE marks it complete; only then are the results moved into place
// (renames) and the former files removed, VERSION last. A start that finds VERSION
// without DONE starts over; with DONE it finishes the moves.
import { crc32 } from 'node:zlib';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir } from './file-io.js';
import { replaceFile } from './file-meta.js';
import {
  type Crc32,
  FileStoreError,
  INDEX_RECORD_SIZE,
  RECORD_HEADER_SIZE,
  fileHeader,
  putIndexRecord,
  putRecord,
  scanMsgProto,
} from './file-record.js';

const OLD_MAGIC = 0x53464257;
const OLD_HEADER = 8;
const WORK = '.convert';
const DONE = 'DONE';
const OLD_CHANNELS = 'channels';
const MOVED_CHANNELS = '.convert-old-channels';

interface OldRecord {
  readonly field: number;
  readonly payload: Buffer;
}

/** The records of a former-format file; refuses a damaged one, naming file and offset. */
function oldRecords(b: Buffer, path: string, typed: boolean): OldRecord[] {
  const bad = (offset: number, why: string): FileStoreError =>
    new FileStoreError(
      'CORRUPT',
      `file store: cannot convert ${path}: ${why} at offset ${offset}; start the previous ` +
        'wirebus version with --file_truncate_bad_eof once, then this one',
      path,
      offset,
    );
  if (b.length === 0) return [];
  if (b.length < OLD_HEADER || b.readUInt32LE(0) !== OLD_MAGIC) throw bad(0, 'not a wirebus file');
  const out: OldRecord[] = [];
  for (let pos = OLD_HEADER; pos < b.length;) {
    if (b.length - pos < RECORD_HEADER_SIZE) throw bad(pos, 'unexpected end of file');
    const field = b.readUInt32LE(pos);
    const end = pos + RECORD_HEADER_SIZE + (typed ? field & 0xffffff : field);
    if (end > b.length) throw bad(pos, 'unexpected end of file');
    const payload = b.subarray(pos + RECORD_HEADER_SIZE, end);
    if (crc32(payload, crc32(b.subarray(pos, pos + 4))) !== b.readUInt32LE(pos + 4)) {
      throw bad(pos, 'CRC mismatch');
    }
    out.push({ field, payload });
    pos = end;
  }
  return out;
}

/** A typed log (subs.dat, clients.dat) in the reference's framing. */
function typedLog(records: readonly OldRecord[], crc: Crc32): Buffer {
  const parts = [fileHeader()];
  for (const r of records) {
    const b = Buffer.allocUnsafe(RECORD_HEADER_SIZE + r.payload.length);
    putRecord(b, 0, r.field, r.payload, crc);
    parts.push(b);
  }
  return Buffer.concat(parts);
}

/** A slice's .dat and its .idx, in the reference's framing. */
function slice(records: readonly OldRecord[], crc: Crc32, path: string): [Buffer, Buffer] {
  const dat = [fileHeader()];
  const idx = Buffer.allocUnsafe(4 + records.length * INDEX_RECORD_SIZE);
  fileHeader().copy(idx, 0);
  let offset = 4;
  const p = { seq: 0, tsLow: 0, tsHigh: 0 };
  records.forEach((r, i) => {
    if (!scanMsgProto(r.payload, p)) {
      throw new FileStoreError(
        'CORRUPT',
        `file store: cannot convert ${path}: record ${i} is not a message`,
        path,
      );
    }
    const b = Buffer.allocUnsafe(RECORD_HEADER_SIZE + r.payload.length);
    putRecord(b, 0, r.payload.length, r.payload, crc);
    dat.push(b);
    putIndexRecord(
      idx,
      4 + i * INDEX_RECORD_SIZE,
      p.seq,
      offset,
      p.tsLow,
      p.tsHigh,
      r.payload.length,
      crc,
    );
    offset += b.length;
  });
  return [Buffer.concat(dat), idx];
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Writes the converted store under DIR/.convert and marks it DONE. */
async function writeConverted(dir: string, crc: Crc32): Promise<void> {
  const work = join(dir, WORK);
  await rm(work, { recursive: true, force: true });
  await mkdir(work);
  const readOld = async (path: string, typed = true): Promise<OldRecord[]> =>
    oldRecords(await readFile(path).catch(() => Buffer.alloc(0)), path, typed);

  const info = await readOld(join(dir, 'server.dat'));
  if (info.length > 0) {
    const payload = info[info.length - 1]!.payload;
    const b = Buffer.allocUnsafe(4 + RECORD_HEADER_SIZE + payload.length);
    fileHeader().copy(b, 0);
    putRecord(b, 4, payload.length, payload, crc);
    await replaceFile(join(work, 'server.dat'), [b]);
  }
  await replaceFile(join(work, 'clients.dat'), [
    typedLog(await readOld(join(dir, 'clients.dat')), crc),
  ]);
  const root = join(dir, OLD_CHANNELS);
  const names = (await readdir(root, { withFileTypes: true }).catch(() => []))
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name);
  for (const name of names) {
    const from = join(root, name);
    const to = join(work, name);
    await mkdir(to);
    for (const file of await readdir(from)) {
      const m = /^msgs\.([1-9][0-9]*)\.dat$/.exec(file);
      if (m !== null) {
        const [dat, idx] = slice(await readOld(join(from, file), false), crc, join(from, file));
        if (dat.length > 4) {
          await replaceFile(join(to, file), [dat]);
          await replaceFile(join(to, `msgs.${m[1]}.idx`), [idx]);
        }
      } else if (file === 'subs.dat') {
        await replaceFile(join(to, file), [typedLog(await readOld(join(from, file)), crc)]);
      }
    }
  }
  await writeFile(join(work, DONE), '');
  await syncDir(work);
}

/** Moves the converted files into place and removes the former ones (idempotent). */
async function moveIntoPlace(dir: string): Promise<void> {
  const work = join(dir, WORK);
  const moved = join(dir, MOVED_CHANNELS);
  // The former channels/ goes aside first: a channel may be named "channels".
  if (!(await exists(moved)) && (await exists(join(dir, OLD_CHANNELS)))) {
    await rename(join(dir, OLD_CHANNELS), moved);
  }
  for (const name of await readdir(work)) {
    if (name !== DONE) await rename(join(work, name), join(dir, name));
  }
  await syncDir(dir);
  await rm(moved, { recursive: true, force: true });
  // VERSION goes before the (now empty but for DONE) work directory: a start that
  // finds DONE without VERSION only removes it.
  await rm(join(dir, 'VERSION'));
  await syncDir(dir);
  await rm(work, { recursive: true, force: true });
}

/**
 * Converts DIR from wirebus's former format if its VERSION file says so; returns
 * true if it did. Another VERSION is left alone (not wirebus's).
 */
export async function convertFormerFormat(
  dir: string,
  crc: Crc32,
  log: (text: string) => void,
): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(join(dir, 'VERSION'), 'utf8');
  } catch {
    if (await exists(join(dir, WORK, DONE))) await rm(join(dir, WORK), { recursive: true });
    return false;
  }
  const m = /^wirebus-file-store (\d+)/.exec(text);
  if (m === null) return false;
  if (m[1] !== '1') {
    throw new FileStoreError(
      'VERSION',
      `file store: ${dir} holds wirebus file format ${m[1]}, which this version cannot convert`,
      join(dir, 'VERSION'),
    );
  }
  if (!(await exists(join(dir, WORK, DONE)))) {
    log(`file store: converting ${dir} from wirebus's former format to nats-streaming-server's`);
    try {
      await writeConverted(dir, crc);
    } catch (err) {
      await rm(join(dir, WORK), { recursive: true, force: true });
      throw err;
    }
  }
  await moveIntoPlace(dir);
  log(`file store: ${dir} converted to nats-streaming-server's layout`);
  return true;
}
