// The root of a FILE store, as the reference lays it out: server.dat (the ServerInfo),
// clients.dat (client registrations) and one directory per channel.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClientDelete } from '../protocol/index.js';
import { replaceFile } from './file-meta.js';
import { replayLog, type ReplayResult } from './file-log.js';
import type { FileStoreTuning } from './file-options.js';
import {
  Crc32,
  FILE_HEADER_SIZE,
  FileStoreError,
  RECORD_HEADER_SIZE,
  checkFileHeader,
  fileHeader,
  putRecord,
} from './file-record.js';
import { decodeClient, decodeServerInfo, encodeServerInfo } from './records.js';
import type { ClientRecord, ServerInfoRecord } from './types.js';

export const SERVER_FILE = 'server.dat';
export const CLIENTS_FILE = 'clients.dat';
/** Left by a start with truncate_bad_eof: the next start must not cut again unasked. */
export const TRUNCATE_WITNESS = '.truncate.lck';

/** clients.dat record types (the reference's). */
export const CLIENT_ADD = 1;
export const CLIENT_DELETE = 2;

/** Channel directories: every directory of the root, as the reference reads them. */
export async function channelDirs(dir: string): Promise<string[]> {
  const names: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory()) names.push(e.name);
  }
  return names.sort();
}

/** Creates server.dat and clients.dat with their version header if missing (as the reference does). */
export async function ensureRootFiles(dir: string): Promise<void> {
  for (const name of [SERVER_FILE, CLIENTS_FILE]) {
    try {
      await writeFile(join(dir, name), fileHeader(), { flag: 'wx', mode: 0o644 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

export async function writeServerInfo(
  dir: string,
  info: ServerInfoRecord,
  crc: Crc32,
): Promise<void> {
  const payload = encodeServerInfo(info);
  const b = Buffer.allocUnsafe(FILE_HEADER_SIZE + RECORD_HEADER_SIZE + payload.length);
  fileHeader().copy(b, 0);
  // Untyped: the size field is the size.
  putRecord(b, FILE_HEADER_SIZE, payload.length, payload, crc);
  await replaceFile(join(dir, SERVER_FILE), [b]);
}

/**
 * The ServerInfo in server.dat: one untyped record after the version, and nothing
 * else (the reference checks the size). Missing or only a version: a new store.
 */
export async function readServerInfo(
  dir: string,
  tuning: FileStoreTuning,
): Promise<ServerInfoRecord | undefined> {
  const path = join(dir, SERVER_FILE);
  let b: Buffer;
  try {
    b = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (b.length === 0) return undefined;
  checkFileHeader(b, path);
  if (b.length === FILE_HEADER_SIZE) return undefined;
  const bad = (why: string): FileStoreError =>
    new FileStoreError(
      'CORRUPT',
      `file store: unable to recover server file ${path}: ${why}`,
      path,
    );
  if (b.length < FILE_HEADER_SIZE + RECORD_HEADER_SIZE) throw bad('unexpected end of file');
  const size = b.readUInt32LE(FILE_HEADER_SIZE);
  const expected = FILE_HEADER_SIZE + RECORD_HEADER_SIZE + size;
  if (b.length !== expected) {
    throw bad(`incorrect file size, expected ${expected} bytes, got ${b.length} bytes`);
  }
  const payload = b.subarray(FILE_HEADER_SIZE + RECORD_HEADER_SIZE);
  const stored = b.readUInt32LE(FILE_HEADER_SIZE + 4);
  const crc = Crc32.of(tuning.crcPoly).bytes(payload, 0, payload.length);
  if (crc !== stored) {
    throw bad(`corrupted data, expected crc to be 0x${hex(stored)}, got 0x${hex(crc)}`);
  }
  try {
    return decodeServerInfo(payload);
  } catch (err) {
    throw bad(`undecodable server info (${String(err)})`);
  }
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

export function encodeClientDelete(id: string): Uint8Array {
  return ClientDelete.encode({ ID: id }).finish();
}

export async function readClients(
  dir: string,
  tuning: FileStoreTuning,
  warn: (text: string) => void,
): Promise<{ clients: Map<string, ClientRecord>; log: ReplayResult }> {
  const clients = new Map<string, ClientRecord>();
  const log = await replayLog(join(dir, CLIENTS_FILE), tuning, warn, (type, payload) => {
    try {
      if (type === CLIENT_ADD) {
        const c = decodeClient(payload);
        clients.set(c.id, c);
      } else if (type === CLIENT_DELETE) {
        clients.delete(ClientDelete.decode(payload).ID);
      } else {
        return `unknown record type ${type}`;
      }
      return undefined;
    } catch (err) {
      return `undecodable record of type ${type} (${String(err)})`;
    }
  });
  return { clients, log };
}
