// The root of a FILE store: the VERSION file that says which format the directory
// holds, server.dat (the ServerInfo) and clients.dat (client registrations).
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClientDelete, ClientInfo, ServerInfo } from '../protocol/index.js';
import { replaceFile } from './file-meta.js';
import { replayLog, type ReplayResult } from './file-log.js';
import type { FileStoreTuning } from './file-options.js';
import {
  FILE_HEADER_SIZE,
  FORMAT_VERSION,
  FileStoreError,
  RECORD_HEADER_SIZE,
  fileHeader,
  putRecord,
  typedSize,
} from './file-record.js';
import { LOCK_FILE } from './file-lock.js';
import type { ClientRecord, ServerInfoRecord } from './types.js';

export const VERSION_FILE = 'VERSION';
export const SERVER_FILE = 'server.dat';
export const CLIENTS_FILE = 'clients.dat';
export const CHANNELS_DIR = 'channels';

const VERSION_TEXT = /^wirebus-file-store (\d+)\n?$/;

/** clients.dat record types (the reference's). */
export const CLIENT_ADD = 1;
export const CLIENT_DELETE = 2;
const SERVER_INFO = 1;

/**
 * Checks (or, for a new store, writes) the VERSION file. A directory that holds
 * anything else and no VERSION is not ours: refused rather than written over.
 */
export async function checkVersion(dir: string): Promise<void> {
  const path = join(dir, VERSION_FILE);
  let text: string | undefined;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (text === undefined) {
    const others = (await readdir(dir)).filter(
      (n) => n !== LOCK_FILE && n !== `${VERSION_FILE}.tmp`,
    );
    if (others.length > 0) {
      throw new FileStoreError(
        'VERSION',
        `file store: ${dir} is not empty and has no ${VERSION_FILE} file: ` +
          `not a wirebus file store (found ${others.slice(0, 3).join(', ')})`,
        path,
      );
    }
    // VERSION first: a crash right after it leaves a store that opens, never a
    // directory that looks like somebody else's.
    await replaceFile(path, [Buffer.from(`wirebus-file-store ${FORMAT_VERSION}\n`)]);
    await mkdir(join(dir, CHANNELS_DIR), { recursive: true });
    return;
  }
  const m = VERSION_TEXT.exec(text);
  if (m === null) {
    throw new FileStoreError('VERSION', `file store: ${path} is not a wirebus version file`, path);
  }
  if (Number(m[1]) !== FORMAT_VERSION) {
    throw new FileStoreError(
      'VERSION',
      `file store: ${dir} holds format version ${m[1]}, this server reads version ${FORMAT_VERSION}`,
      path,
    );
  }
  await mkdir(join(dir, CHANNELS_DIR), { recursive: true });
}

export async function writeServerInfo(dir: string, info: ServerInfoRecord): Promise<void> {
  const payload = ServerInfo.encode({
    ClusterID: info.clusterID,
    Discovery: info.discovery,
    Publish: info.publish,
    Subscribe: info.subscribe,
    Unsubscribe: info.unsubscribe,
    Close: info.close,
    SubClose: info.subClose,
    AcksSubs: info.acksSubs,
    NodeID: info.nodeID,
  }).finish();
  const b = Buffer.allocUnsafe(FILE_HEADER_SIZE + RECORD_HEADER_SIZE + payload.length);
  fileHeader().copy(b, 0);
  putRecord(b, FILE_HEADER_SIZE, typedSize(SERVER_INFO, payload.length), payload);
  await replaceFile(join(dir, SERVER_FILE), [b]);
}

export async function readServerInfo(
  dir: string,
  tuning: FileStoreTuning,
  warn: (text: string) => void,
): Promise<ServerInfoRecord | undefined> {
  let info: ServerInfoRecord | undefined;
  await replayLog(join(dir, SERVER_FILE), tuning, warn, (type, payload) => {
    if (type !== SERVER_INFO) return `unknown record type ${type}`;
    try {
      const s = ServerInfo.decode(payload);
      info = {
        clusterID: s.ClusterID,
        discovery: s.Discovery,
        publish: s.Publish,
        subscribe: s.Subscribe,
        unsubscribe: s.Unsubscribe,
        close: s.Close,
        subClose: s.SubClose,
        acksSubs: s.AcksSubs,
        nodeID: s.NodeID,
      };
      return undefined;
    } catch (err) {
      return `undecodable server info (${String(err)})`;
    }
  });
  return info;
}

export function encodeClient(c: ClientRecord): Uint8Array {
  return ClientInfo.encode({
    ID: c.id,
    HbInbox: c.hbInbox,
    ConnID: c.connID,
    Protocol: c.protocol,
    PingInterval: c.pingInterval,
    PingMaxOut: c.pingMaxOut,
  }).finish();
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
        const c = ClientInfo.decode(payload);
        clients.set(c.ID, {
          id: c.ID,
          hbInbox: c.HbInbox,
          connID: Buffer.from(c.ConnID),
          protocol: c.Protocol,
          pingInterval: c.PingInterval,
          pingMaxOut: c.PingMaxOut,
        });
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
