// Recovery of a file stream: every block read once, one at a time (memory bounded by
// the largest block plus the index being built), every record's CRC checked.
//
// A torn record at the end of a block (a crash during a write) is cut off. A damaged
// record elsewhere (a flipped byte) is skipped: the reader looks for the next sound
// record after it and goes on, so what follows is kept; only if none follows is the
// block cut there. Each loss is reported through `warn`. Then tombstones, the newest
// state record (everything below its first sequence is gone) and erased records decide
// which slots are live, and the subject index is built from the live ones.
import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  truncateSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { BlockSlots, SubjectTable } from './file-index.js';
import { LogFile, type FileIo } from './file-io.js';
import { Block } from './file-query.js';
import {
  BLOCK_MAGIC,
  DELETES_MAGIC,
  FILE_HEADER_SIZE,
  KIND_MSG,
  KIND_STATE,
  MIN_RECORD,
  TOMBSTONE_SIZE,
  getU64,
  headerProblem,
  newRecordView,
  readRecord,
  readTombstone,
  recordLength,
} from './file-record.js';

export interface RecoveredLog {
  blocks: Block[];
  subjects: SubjectTable;
  msgs: number;
  bytes: number;
  firstSeq: number;
  firstTs: number;
  lastSeq: number;
  lastTs: number;
}

export const blockPath = (dir: string, id: number): string => join(dir, `${id}.blk`);
export const deletesPath = (dir: string, id: number): string => join(dir, `${id}.dlt`);

export function recoverLog(
  dir: string,
  io: FileIo,
  subjects: SubjectTable,
  warn: (text: string) => void,
): RecoveredLog {
  const names = existsSync(dir) ? readdirSync(dir) : [];
  const ids: number[] = [];
  for (const name of names) {
    const m = /^(\d+)\.(blk|dlt|new)$/.exec(name);
    if (m === null) continue;
    const id = Number(m[1]);
    if (m[2] === 'blk') ids.push(id);
    // An interrupted compaction (its .blk is intact) or a delete file without its block.
    else if (m[2] === 'new' || !names.includes(`${id}.blk`)) unlinkSync(join(dir, name));
  }
  ids.sort((a, b) => a - b);

  const out: RecoveredLog = {
    blocks: [],
    subjects,
    msgs: 0,
    bytes: 0,
    firstSeq: 0,
    firstTs: 0,
    lastSeq: 0,
    lastTs: 0,
  };
  let markFirst = 0;
  const tombstones = new Map<Block, Set<number>>();
  let prevBlockLast = 0;
  for (const id of ids) {
    const path = blockPath(dir, id);
    const buf = readFileSync(path);
    const slots = new BlockSlots(0);
    let end = FILE_HEADER_SIZE;
    if (buf.length < FILE_HEADER_SIZE) {
      // Created, and the crash came before its first write.
      warn(`file store: ${path}: empty block (a write the crash interrupted); removed`);
      unlinkSync(path);
      continue;
    }
    const problem = headerProblem(buf, BLOCK_MAGIC);
    if (problem !== undefined) {
      warn(`file store: ${path}: ${problem}; the block is set aside as ${path}.bad`);
      renameAside(path);
      continue;
    }
    const rec = newRecordView();
    let pos = FILE_HEADER_SIZE;
    let prevStart = -1;
    let prevEnd = -1;
    let prevSid = 0;
    while (pos < buf.length) {
      const why = recordAt(buf, pos, rec);
      if (why !== undefined) {
        const next = resync(buf, pos + 1, rec);
        if (next < 0) {
          warn(
            `file store: ${path}: ${why} at offset ${pos}; ${buf.length - pos} bytes cut (a write the crash interrupted)`,
          );
          break;
        }
        warn(`file store: ${path}: ${why} at offset ${pos}; ${next - pos} bytes skipped`);
        pos = next;
        continue;
      }
      if (rec.kind === KIND_STATE) {
        markFirst = Math.max(markFirst, getU64(buf, rec.subjectEnd));
        if (rec.seq >= out.lastSeq) {
          out.lastSeq = rec.seq;
          out.lastTs = rec.ts;
        }
      } else if (rec.seq <= prevBlockLast || (slots.count > 0 && rec.seq <= slots.last)) {
        warn(`file store: ${path}: sequence ${rec.seq} out of order at offset ${pos}; skipped`);
      } else {
        if (slots.count === 0) slots.base = rec.seq;
        let sid = 0;
        if (rec.kind === KIND_MSG) {
          const len = rec.subjectEnd - rec.subjectStart;
          if (
            prevStart >= 0 &&
            prevEnd - prevStart === len &&
            buf.compare(buf, prevStart, prevEnd, rec.subjectStart, rec.subjectEnd) === 0
          ) {
            sid = prevSid;
          } else {
            sid = subjects.intern(buf.toString('utf8', rec.subjectStart, rec.subjectEnd)).id;
            prevSid = sid;
            prevStart = rec.subjectStart;
            prevEnd = rec.subjectEnd;
          }
          slots.add(rec.seq, pos, rec.rl, sid, rec.ts);
        } else {
          slots.add(rec.seq, 0, rec.rl, 0, rec.ts);
        }
        if (rec.seq >= out.lastSeq) {
          out.lastSeq = rec.seq;
          out.lastTs = rec.ts;
        }
      }
      pos += rec.rl;
      end = pos;
    }
    if (end < buf.length) truncateSync(path, end);
    const file = new LogFile(path, end, io, dir);
    const block = new Block(id, file, slots);
    const dead = readTombstones(deletesPath(dir, id), warn);
    if (dead.size > 0) {
      tombstones.set(block, dead);
      block.deletes = new LogFile(deletesPath(dir, id), dead.fileSize, io);
    } else if (dead.fileSize > 0)
      block.deletes = new LogFile(deletesPath(dir, id), dead.fileSize, io);
    slots.shrink();
    if (slots.count > 0) prevBlockLast = slots.last;
    out.blocks.push(block);
  }

  // Which slots are live: above the newest first sequence, not tombstoned.
  out.lastSeq = Math.max(out.lastSeq, markFirst - 1);
  const byId = subjects.byId;
  for (const b of out.blocks) {
    const s = b.slots;
    const dead = tombstones.get(b);
    s.live = 0;
    s.liveBytes = 0;
    for (let i = 0; i < s.count; i++) {
      if (s.off[i] === 0) continue;
      const seq = s.base + i;
      if (seq < markFirst || dead?.has(seq) === true) {
        s.off[i] = 0;
        continue;
      }
      s.live++;
      s.liveBytes += s.len[i]!;
      subjects.added(byId[s.sid[i]!]!, seq);
      if (out.msgs++ === 0) {
        out.firstSeq = seq;
        out.firstTs = s.ts[i]!;
      }
      out.bytes += s.len[i]!;
    }
  }
  subjects.dropUnused();
  if (out.msgs === 0) out.firstSeq = out.lastSeq === 0 ? 0 : out.lastSeq + 1;
  return out;
}

/** Decodes the record at `pos` into `rec`; a problem text if it is not a sound one. */
function recordAt(
  buf: Buffer,
  pos: number,
  rec: ReturnType<typeof newRecordView>,
): string | undefined {
  if (buf.length - pos < MIN_RECORD) return 'torn record';
  const rl = recordLength(buf, pos);
  if (rl === 0) return 'bad record length';
  if (pos + rl > buf.length) return 'torn record';
  return readRecord(buf, pos, rl, rec);
}

/** The offset of the next sound record at or after `from`, or -1. */
function resync(buf: Buffer, from: number, rec: ReturnType<typeof newRecordView>): number {
  for (let p = from; p + MIN_RECORD <= buf.length; p++) {
    const rl = recordLength(buf, p);
    if (rl === 0 || p + rl > buf.length) continue;
    if (buf.readUInt32LE(p + rl - 4) !== buf.readUInt32LE(p)) continue;
    if (readRecord(buf, p, rl, rec) === undefined) return p;
  }
  return -1;
}

interface Tombstones extends Set<number> {
  fileSize: number;
}

function readTombstones(path: string, warn: (text: string) => void): Tombstones {
  const out = new Set<number>() as Tombstones;
  out.fileSize = 0;
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw err;
  }
  const problem = headerProblem(buf, DELETES_MAGIC);
  if (problem !== undefined) {
    warn(`file store: ${path}: ${problem}; its deletes are lost`);
    unlinkSync(path);
    return out;
  }
  let pos = FILE_HEADER_SIZE;
  for (; pos + TOMBSTONE_SIZE <= buf.length; pos += TOMBSTONE_SIZE) {
    const seq = readTombstone(buf, pos);
    if (seq < 0) {
      warn(`file store: ${path}: damaged tombstone at offset ${pos}; skipped`);
      continue;
    }
    out.add(seq);
  }
  if (pos < buf.length) {
    warn(`file store: ${path}: torn tombstone at offset ${pos}; cut`);
    truncateSync(path, pos);
  }
  out.fileSize = pos;
  return out;
}

function renameAside(path: string): void {
  // Kept for inspection, out of the way of the block numbering.
  renameSync(path, `${path}.bad`);
}
