// The JSON values of the state bucket and the message form of a channel stream.
// Values are validated when read: a bucket another program wrote into must not take
// a node down (a bad value is skipped and logged by the caller).
import Long from 'long';
import { makeStoredMsg } from '../message.js';
import { REPLY_HEADER, TIMESTAMP_HEADER } from './names.js';
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

/** What a Leader's publish says in its headers (readLeaderHeaders). */
export interface LeaderHeaders {
  /** Nats-Expected-Last-Sequence: the message is sequence expectedLast + 1. */
  expectedLast: number;
  timestamp: Long;
  /** Stan-Reply, '' when absent. */
  reply: string;
}
const leaderHeaders: LeaderHeaders = { expectedLast: 0, timestamp: Long.ZERO, reply: '' };

const HEADER_LINE = Buffer.from('NATS/1.0\r\n');
const EXPECTED_KEY = Buffer.from('Nats-Expected-Last-Sequence: ');
const TIMESTAMP_KEY = Buffer.from(`${TIMESTAMP_HEADER}: `);
const REPLY_KEY = Buffer.from(`${REPLY_HEADER}: `);
const TWO_16 = 65536;
const TWO_32 = 4294967296;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

function startsWithAt(b: Uint8Array, at: number, key: Buffer): boolean {
  if (at + key.length > b.length) return false;
  for (let i = 0; i < key.length; i++) if (b[at + i] !== key[i]) return false;
  return true;
}

/** The decimal digits b[start..end) as a number (at most 16 digits), -1 if not digits. */
function digits(b: Uint8Array, start: number, end: number): number {
  let v = 0;
  for (let i = start; i < end; i++) {
    const c = b[i]! - 0x30;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * A non-negative decimal of 1 to 19 digits as a Long, in two exact halves of double
 * arithmetic: Long.fromString() multiplies Longs digit by digit, a tenth of a
 * Follower's time. Null when it is not such a decimal (or above 2^63 - 1).
 */
export function longFromDecimal(b: Uint8Array, start: number, end: number): Long | null {
  const n = end - start;
  if (n < 1 || n > 19) return null;
  const split = Math.max(start, end - 9);
  const a = digits(b, start, split); // < 10^10 < 2^34
  const lo = digits(b, split, end); // < 10^9
  if (a < 0 || lo < 0) return null;
  // a * 10^9 + lo = ah * 10^9 * 2^16 + al * 10^9 + lo, every product below 2^53.
  const al = a % TWO_16;
  const ah = (a - al) / TWO_16;
  const t1 = al * 1e9 + lo;
  const t2 = ah * 1e9;
  const t2l = t2 % TWO_16;
  const low = t1 + t2l * TWO_16;
  const lowBits = low % TWO_32;
  const high = (t2 - t2l) / TWO_16 + (low - lowBits) / TWO_32;
  if (high > 0x7fffffff) return null;
  return Long.fromBits(lowBits | 0, high, false);
}

/**
 * Reads the header block of a Leader's publish (frames.ts writes it: the version line,
 * then Nats-Expected-Last-Sequence, Stan-Timestamp and maybe Stan-Reply) in place.
 * Returns one object for every call, to be read before the next; null when the block
 * is not in that form (the caller then reads it with the client's parser).
 */
export function readLeaderHeaders(b: Uint8Array): LeaderHeaders | null {
  if (!startsWithAt(b, 0, HEADER_LINE)) return null;
  let expected = -1;
  let timestamp: Long | null = null;
  let reply = '';
  let at = HEADER_LINE.length;
  while (at < b.length) {
    let end = at;
    while (end < b.length && b[end] !== 0x0d) end++;
    if (end === at) break; // the empty line that ends the block
    if (startsWithAt(b, at, EXPECTED_KEY)) {
      const v = digits(b, at + EXPECTED_KEY.length, end);
      if (end - at - EXPECTED_KEY.length > 15 || v < 0) return null;
      expected = v;
    } else if (startsWithAt(b, at, TIMESTAMP_KEY)) {
      timestamp = longFromDecimal(b, at + TIMESTAMP_KEY.length, end);
      if (timestamp === null) return null;
    } else if (startsWithAt(b, at, REPLY_KEY)) {
      const from = at + REPLY_KEY.length;
      // Outer white space: the client's parser trims it; leave such a value to it.
      if (end === from || isSpace(b[from]!) || isSpace(b[end - 1]!)) return null;
      reply = Buffer.from(b.buffer, b.byteOffset + from, end - from).toString();
    } else return null;
    at = end + 2;
  }
  if (expected < 0 || timestamp === null) return null;
  leaderHeaders.expectedLast = expected;
  leaderHeaders.timestamp = timestamp;
  leaderHeaders.reply = reply;
  return leaderHeaders;
}
