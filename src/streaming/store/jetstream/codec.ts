// The JSON values of the state bucket and the message form of a channel stream.
// Values are validated when read: a bucket another program wrote into must not take
// a node down (a bad value is skipped and logged by the caller).
import Long from 'long';
import { makeStoredMsg } from '../message.js';
import type { ClientRecord, ServerInfoRecord, StoredMsg, SubRecord } from '../types.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

export function toJson(value: unknown): Uint8Array {
  return enc.encode(JSON.stringify(value));
}

function parse(bytes: Uint8Array): Record<string, unknown> {
  const v: unknown = JSON.parse(dec.decode(bytes));
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
  return v as Record<string, unknown>;
}

function str(o: Record<string, unknown>, k: string): string {
  const v = o[k];
  if (typeof v !== 'string') throw new Error(`${k}: not a string`);
  return v;
}

function num(o: Record<string, unknown>, k: string): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${k}: not a number`);
  return v;
}

function bool(o: Record<string, unknown>, k: string): boolean {
  const v = o[k];
  if (typeof v !== 'boolean') throw new Error(`${k}: not a boolean`);
  return v;
}

export function encodeInfo(info: ServerInfoRecord): Uint8Array {
  return toJson(info);
}

export function decodeInfo(bytes: Uint8Array): ServerInfoRecord {
  const o = parse(bytes);
  return {
    clusterID: str(o, 'clusterID'),
    discovery: str(o, 'discovery'),
    publish: str(o, 'publish'),
    subscribe: str(o, 'subscribe'),
    unsubscribe: str(o, 'unsubscribe'),
    close: str(o, 'close'),
    subClose: str(o, 'subClose'),
    acksSubs: str(o, 'acksSubs'),
    nodeID: str(o, 'nodeID'),
  };
}

export function encodeClient(c: ClientRecord): Uint8Array {
  return toJson({ ...c, connID: Buffer.from(c.connID).toString('base64') });
}

export function decodeClient(bytes: Uint8Array): ClientRecord {
  const o = parse(bytes);
  return {
    id: str(o, 'id'),
    hbInbox: str(o, 'hbInbox'),
    connID: new Uint8Array(Buffer.from(str(o, 'connID'), 'base64')),
    protocol: num(o, 'protocol'),
    pingInterval: num(o, 'pingInterval'),
    pingMaxOut: num(o, 'pingMaxOut'),
  };
}

/**
 * A subscription with its delivery state: the record, and the sequences awaiting an
 * ack as ranges `[[first, last], ...]` (a window of thousands in flight is a few
 * ranges, not thousands of numbers, in a value written every 100 ms).
 */
export function encodeSub(record: SubRecord, pending: ReadonlySet<number>): Uint8Array {
  const seqs = [...pending].sort((a, b) => a - b);
  const ranges: [number, number][] = [];
  for (const seq of seqs) {
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last[1] + 1 === seq) last[1] = seq;
    else ranges.push([seq, seq]);
  }
  return toJson({ ...record, pending: ranges });
}

function expandRanges(v: unknown): number[] {
  if (!Array.isArray(v)) throw new Error('pending: not a list of ranges');
  const out: number[] = [];
  for (const r of v as unknown[]) {
    if (!Array.isArray(r) || r.length !== 2) throw new Error('pending: not a range');
    const [a, b] = r as unknown[];
    if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b) || (a as number) > (b as number)) {
      throw new Error('pending: bad range');
    }
    for (let seq = a as number; seq <= (b as number); seq++) out.push(seq);
  }
  return out;
}

export function decodeSub(bytes: Uint8Array): { record: SubRecord; pending: number[] } {
  const o = parse(bytes);
  const pending = expandRanges(o.pending);
  return {
    record: {
      id: num(o, 'id'),
      clientID: str(o, 'clientID'),
      qGroup: str(o, 'qGroup'),
      inbox: str(o, 'inbox'),
      ackInbox: str(o, 'ackInbox'),
      maxInFlight: num(o, 'maxInFlight'),
      ackWaitInSecs: num(o, 'ackWaitInSecs'),
      durableName: str(o, 'durableName'),
      lastSent: num(o, 'lastSent'),
      isDurable: bool(o, 'isDurable'),
      isClosed: bool(o, 'isClosed'),
    },
    pending,
  };
}

export function decodeChannel(bytes: Uint8Array): string {
  return str(parse(bytes), 'name');
}

// MsgProto fields (protocol/proto/pb.proto): 3 reply (string), 4 data (bytes).
const REPLY_FIELD = 3;
const DATA_FIELD = 4;

const EMPTY: Uint8Array = new Uint8Array(0);

/** The answer of msgParts: one object for every call, to be read before the next. */
export interface MsgParts {
  reply: Uint8Array;
  data: Uint8Array;
}
const parts: MsgParts = { reply: EMPTY, data: EMPTY };

/** msgParts' read position, so that reading a varint needs no closure. */
let cursor = 0;

function readVarint(b: Uint8Array): number {
  let v = 0;
  let mul = 1;
  for (;;) {
    const x = b[cursor++];
    if (x === undefined) throw new Error('MsgProto: truncated varint');
    v += (x & 0x7f) * mul;
    if (x < 0x80) return v;
    mul *= 128;
  }
}

/**
 * The reply and data of a marshaled MsgProto, as views into it (no copy): what a
 * channel stream stores. Walks the protobuf fields; the encoder's order is not assumed.
 * Called for every message the Leader publishes, so it allocates nothing: the answer
 * is the same object each time (read it at once).
 */
export function msgParts(encoded: Uint8Array): MsgParts {
  let reply: Uint8Array = EMPTY;
  let data: Uint8Array = EMPTY;
  cursor = 0;
  const n = encoded.length;
  while (cursor < n) {
    const tag = readVarint(encoded);
    const field = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0:
        readVarint(encoded);
        break;
      case 1:
        cursor += 8;
        break;
      case 5:
        cursor += 4;
        break;
      case 2: {
        const len = readVarint(encoded);
        if (field === REPLY_FIELD) reply = encoded.subarray(cursor, cursor + len);
        else if (field === DATA_FIELD) data = encoded.subarray(cursor, cursor + len);
        cursor += len;
        break;
      }
      default:
        throw new Error(`MsgProto: wire type ${tag & 7} unexpected`);
    }
  }
  parts.reply = reply;
  parts.data = data;
  return parts;
}

/** A message read from a channel stream, as the store keeps it. */
export function storedFromStream(
  sequence: number,
  channel: string,
  timestamp: string | undefined,
  reply: string | undefined,
  data: Uint8Array,
): StoredMsg {
  const ts =
    timestamp !== undefined && /^\d+$/.test(timestamp) ? Long.fromString(timestamp) : Long.ZERO;
  return makeStoredMsg(sequence, ts, channel, reply ?? '', data);
}
