// The route protocol parser: what one server says to another over a route. It is a
// separate machine from the client parser so that the client's PUB fast path stays
// as it is; it shares parseSize with it. Like it, it works on Buffers and offsets,
// takes any split across reads, and hands a payload inside one read over without
// copying it.
//
// Ops (server/parser.go of the reference, kind ROUTER): INFO, CONNECT, PING, PONG,
// +OK, -ERR, `RS+ acc subject [queue weight]`, `RS- acc subject [queue]`,
// `RMSG acc subject [reply] size` and `HMSG acc subject [reply] hdr size`, where a
// message chosen for queue groups reads `RMSG acc subject + reply q1 q2 size` or
// `RMSG acc subject | q1 q2 size`.

import { OpParser } from '../protocol/op-parser.js';
import { parseSize } from '../protocol/parser.js';
import type { PublishedMessage } from '../server/message.js';

export const RouteParseFailure = {
  /** Not an op of the route protocol. */
  unknownOp: 0,
  /** PUB, SUB, UNSUB, HPUB or MSG: a client is talking to the route port. */
  clientProtocol: 1,
  /** Wrong argument count or a bad size or weight; `detail` says which. */
  badArguments: 2,
  /** A control line or payload beyond the bounds below. */
  tooLarge: 3,
  /** Anything but CRLF after a payload. */
  badFraming: 4,
} as const;
export type RouteParseFailure = (typeof RouteParseFailure)[keyof typeof RouteParseFailure];

export interface RouteParserHandler {
  onInfo(buf: Buffer, start: number, end: number): void;
  onConnect(buf: Buffer, start: number, end: number): void;
  onPing(): void;
  onPong(): void;
  onErr(buf: Buffer, start: number, end: number): void;
  /** RS+: account, subject and optional queue and weight are read off the parser. */
  onSub(p: RouteParser): void;
  /** RS-: account, subject and optional queue. */
  onUnsub(p: RouteParser): void;
  /** RMSG or HMSG with its payload; the parser is the message (PublishedMessage). */
  onMsg(p: RouteParser): void;
  onFailure(kind: RouteParseFailure, detail: string): void;
}

/**
 * The reference puts no limit on a route's lines or payloads (they come from a peer
 * that already checked its clients); these bounds only keep a broken peer from
 * growing memory without end. 64 MiB is the reference's largest max_payload.
 */
export const MAX_ROUTE_LINE = 1024 * 1024;
export const MAX_ROUTE_PAYLOAD = 64 * 1024 * 1024;

const CR = 13;
const LF = 10;
const SPACE = 32;
const TAB = 9;

const enum S {
  /** At the start of an op (or inside a line held in scratch). */
  LINE,
  PAYLOAD,
  END_R,
  END_N,
  DEAD,
}

const enum Op {
  INFO,
  CONNECT,
  PING,
  PONG,
  OK,
  ERR,
  RSUB,
  RUNSUB,
  RMSG,
  HMSG,
  CLIENT,
  UNKNOWN,
}

export class RouteParser extends OpParser implements PublishedMessage {
  private state: S = S.LINE;
  private readonly handler: RouteParserHandler;

  /** A control line split across reads. */
  private scratch: Buffer = Buffer.allocUnsafe(256);
  private scratchLen = 0;
  private split = false;

  /** Fields of the current RS+, RS-, RMSG or HMSG line, as offsets into argBuf. */
  fieldStart = new Int32Array(16);
  fieldEnd = new Int32Array(16);
  fieldCount = 0;

  // The current RMSG/HMSG beyond its MessageFields: the account and the queues.
  accountStart = 0;
  accountEnd = 0;
  /** Index in fieldStart of the first queue name; queueCount 0 for none. */
  queueFirst = 0;
  queueCount = 0;

  // The current RS+/RS-: queue and weight (queueStart -1 for a plain subscription).
  queueStart = -1;
  queueEnd = -1;
  weight = 0;

  constructor(handler: RouteParserHandler) {
    super();
    this.handler = handler;
  }

  /** Stops for good: the rest of this read and every later one are ignored. */
  stop(): void {
    this.state = S.DEAD;
    this.pending = null;
  }

  get stopped(): boolean {
    return this.state === S.DEAD;
  }

  protected inMessage(): boolean {
    const state = this.state;
    return state === S.PAYLOAD || state === S.END_R || state === S.END_N;
  }

  protected parseRead(buf: Buffer): void {
    const len = buf.length;
    let i = 0;
    while (i < len) {
      switch (this.state) {
        case S.LINE: {
          const nl = buf.indexOf(LF, i);
          if (nl < 0) {
            if (this.scratchLen + len - i > MAX_ROUTE_LINE) {
              return this.fail(RouteParseFailure.tooLarge, 'control line too long');
            }
            this.appendScratch(buf, i, len);
            this.split = true;
            return;
          }
          let line = buf;
          let start = i;
          let end = nl;
          if (this.split) {
            if (this.scratchLen + nl - i > MAX_ROUTE_LINE) {
              return this.fail(RouteParseFailure.tooLarge, 'control line too long');
            }
            this.appendScratch(buf, i, nl);
            line = this.scratch;
            start = 0;
            end = this.scratchLen;
            this.split = false;
            this.scratchLen = 0;
          }
          if (end > start && line[end - 1] === CR) end--;
          i = nl + 1;
          this.line(line, start, end);
          // line() moves the state on (to PAYLOAD after RMSG, DEAD on a failure).
          const next = this.state as S;
          if (next === S.DEAD) return;
          if (this.isSuspended()) {
            this.holdRest(buf, i);
            return;
          }
          if (next === S.PAYLOAD) i = this.beginPayload(buf, i, len);
          continue;
        }
        case S.PAYLOAD:
          i = this.gatherPayload(buf, i, len);
          if (this.pending === null) this.state = S.END_R;
          continue;
        case S.END_R:
          if (buf[i] !== CR)
            return this.fail(RouteParseFailure.badFraming, 'no CRLF after payload');
          this.state = S.END_N;
          i++;
          continue;
        case S.END_N:
          if (buf[i] !== LF)
            return this.fail(RouteParseFailure.badFraming, 'no CRLF after payload');
          this.state = S.LINE;
          i++;
          this.handler.onMsg(this);
          if (this.stopped) return;
          continue;
        case S.DEAD:
          return;
      }
    }
  }

  /** Dispatches one control line (without its CRLF). */
  private line(b: Buffer, start: number, end: number): void {
    const op = opOf(b, start, end);
    switch (op.op) {
      case Op.RMSG:
      case Op.HMSG:
        if (!this.msgArgs(b, start + op.len, end, op.op === Op.HMSG)) return;
        this.state = S.PAYLOAD;
        return;
      case Op.RSUB:
        if (!this.subArgs(b, start + op.len, end, true)) return;
        this.handler.onSub(this);
        return;
      case Op.RUNSUB:
        if (!this.subArgs(b, start + op.len, end, false)) return;
        this.handler.onUnsub(this);
        return;
      case Op.PING:
        this.handler.onPing();
        return;
      case Op.PONG:
        this.handler.onPong();
        return;
      case Op.OK:
        return;
      case Op.INFO:
        this.handler.onInfo(b, skipSpace(b, start + op.len, end), end);
        return;
      case Op.CONNECT:
        this.handler.onConnect(b, skipSpace(b, start + op.len, end), end);
        return;
      case Op.ERR:
        this.handler.onErr(b, skipSpace(b, start + op.len, end), end);
        return;
      case Op.CLIENT:
        this.fail(RouteParseFailure.clientProtocol, b.toString('latin1', start, start + op.len));
        return;
      case Op.UNKNOWN:
        this.fail(
          RouteParseFailure.unknownOp,
          b.toString('latin1', start, Math.min(end, start + 32)),
        );
        return;
    }
  }

  /** RMSG/HMSG arguments, as the reference's processRoutedMsgArgs and ...HeaderMsgArgs. */
  private msgArgs(b: Buffer, start: number, end: number, headers: boolean): boolean {
    const n = this.splitFields(b, start, end);
    const fs = this.fieldStart;
    const fe = this.fieldEnd;
    // Account, subject, then [reply], [hdr], size; or the + / | form with queues.
    const plain = headers ? 4 : 3;
    if (n < plain) return this.badArgs(headers ? 'HMSG' : 'RMSG', b, start, end);
    this.accountStart = fs[0]!;
    this.accountEnd = fe[0]!;
    this.subjectStart = fs[1]!;
    this.subjectEnd = fe[1]!;
    this.replyStart = -1;
    this.replyEnd = -1;
    this.queueCount = 0;
    if (n === plain + 1) {
      this.replyStart = fs[2]!;
      this.replyEnd = fe[2]!;
    } else if (n > plain + 1) {
      const ind = fs[2]!;
      if (fe[2]! - ind !== 1) return this.badArgs('reply indicator', b, start, end);
      let first: number;
      if (b[ind] === 0x2b) {
        // `+ reply q1 q2 ...`
        this.replyStart = fs[3]!;
        this.replyEnd = fe[3]!;
        first = 4;
      } else if (b[ind] === 0x7c) {
        first = 3; // `| q1 q2 ...`
      } else {
        return this.badArgs('reply indicator', b, start, end);
      }
      this.queueFirst = first;
      this.queueCount = n - (headers ? 2 : 1) - first;
      if (this.queueCount < 0) return this.badArgs('queue list', b, start, end);
    }
    const sizeIndex = n - 1;
    this.sizeStart = fs[sizeIndex]!;
    this.sizeEnd = fe[sizeIndex]!;
    const size = parseSize(b, this.sizeStart, this.sizeEnd);
    if (size < 0) return this.badArgs('size', b, start, end);
    if (size > MAX_ROUTE_PAYLOAD) {
      this.fail(RouteParseFailure.tooLarge, `payload of ${size} bytes`);
      return false;
    }
    this.hdr = -1;
    if (headers) {
      this.hdrStart = fs[n - 2]!;
      this.hdrEnd = fe[n - 2]!;
      const hdr = parseSize(b, this.hdrStart, this.hdrEnd);
      if (hdr < 0 || hdr > size) return this.badArgs('header size', b, start, end);
      // A header block of size 0 is a plain message, as from a client.
      this.hdr = hdr === 0 ? -1 : hdr;
    }
    this.size = size;
    this.argBuf = b;
    this.argsStart = start;
    this.argsEnd = end;
    return true;
  }

  protected override shiftArgs(delta: number): void {
    super.shiftArgs(delta);
    this.accountStart += delta;
    this.accountEnd += delta;
    // Queue names are read through the field offsets.
    for (let k = 0; k < this.fieldCount; k++) {
      this.fieldStart[k]! += delta;
      this.fieldEnd[k]! += delta;
    }
  }

  /** RS+ (acc subject [queue weight]) and RS- (acc subject [queue]). */
  private subArgs(b: Buffer, start: number, end: number, sub: boolean): boolean {
    const n = this.splitFields(b, start, end);
    const fs = this.fieldStart;
    const fe = this.fieldEnd;
    const op = sub ? 'RS+' : 'RS-';
    this.queueStart = -1;
    this.queueEnd = -1;
    this.weight = 0;
    if (n === 3 && sub) return this.badArgs(op, b, start, end);
    if (n === 3 || (n === 4 && sub)) {
      this.queueStart = fs[2]!;
      this.queueEnd = fe[2]!;
      if (sub) {
        this.weight = parseSize(b, fs[3]!, fe[3]!);
        if (this.weight < 1) return this.badArgs('RS+ queue weight', b, start, end);
      }
    } else if (n !== 2) {
      return this.badArgs(op, b, start, end);
    }
    this.accountStart = fs[0]!;
    this.accountEnd = fe[0]!;
    this.subjectStart = fs[1]!;
    this.subjectEnd = fe[1]!;
    this.argBuf = b;
    return true;
  }

  private badArgs(what: string, b: Buffer, start: number, end: number): false {
    const text = b.toString('latin1', start, Math.min(end, start + 256));
    this.fail(RouteParseFailure.badArguments, `bad ${what} in '${text}'`);
    return false;
  }

  /** Splits on spaces and tabs into fieldStart/fieldEnd; returns the count. */
  private splitFields(b: Buffer, start: number, end: number): number {
    let count = 0;
    let fieldStart = -1;
    for (let i = start; i < end; i++) {
      const c = b[i]!;
      if (c === SPACE || c === TAB) {
        if (fieldStart >= 0) {
          this.setField(count++, fieldStart, i);
          fieldStart = -1;
        }
      } else if (fieldStart < 0) {
        fieldStart = i;
      }
    }
    if (fieldStart >= 0) this.setField(count++, fieldStart, end);
    this.fieldCount = count;
    return count;
  }

  private setField(index: number, start: number, end: number): void {
    if (index >= this.fieldStart.length) {
      // Many queue groups in one message: grow rather than limit.
      const s = new Int32Array(this.fieldStart.length * 2);
      const e = new Int32Array(this.fieldStart.length * 2);
      s.set(this.fieldStart);
      e.set(this.fieldEnd);
      this.fieldStart = s;
      this.fieldEnd = e;
    }
    this.fieldStart[index] = start;
    this.fieldEnd[index] = end;
  }

  /** Reads the payload after RMSG/HMSG arguments; returns the next index. */
  private beginPayload(buf: Buffer, i: number, len: number): number {
    const next = this.takePayload(buf, i, len);
    if (this.pending === null) this.state = S.END_R;
    return next;
  }

  private appendScratch(buf: Buffer, start: number, end: number): void {
    const n = end - start;
    if (this.scratchLen + n > this.scratch.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.scratch.length * 2, this.scratchLen + n));
      this.scratch.copy(bigger, 0, 0, this.scratchLen);
      this.scratch = bigger;
    }
    buf.copy(this.scratch, this.scratchLen, start, end);
    this.scratchLen += n;
  }

  private fail(kind: RouteParseFailure, detail: string): void {
    this.state = S.DEAD;
    this.pending = null;
    this.handler.onFailure(kind, detail);
  }
}

/** Index of the first byte after spaces and tabs. */
function skipSpace(b: Buffer, i: number, end: number): number {
  while (i < end && (b[i] === SPACE || b[i] === TAB)) i++;
  return i;
}

/** Upper-cases an ASCII letter. */
function up(c: number | undefined): number {
  return c !== undefined && c >= 0x61 && c <= 0x7a ? c - 32 : (c ?? -1);
}

function isSep(c: number | undefined): boolean {
  return c === SPACE || c === TAB;
}

const OP_INFO = { op: Op.INFO, len: 4 };
const OP_CONNECT = { op: Op.CONNECT, len: 7 };
const OP_PING = { op: Op.PING, len: 4 };
const OP_PONG = { op: Op.PONG, len: 4 };
const OP_OK = { op: Op.OK, len: 3 };
const OP_ERR = { op: Op.ERR, len: 4 };
const OP_RSUB = { op: Op.RSUB, len: 4 };
const OP_RUNSUB = { op: Op.RUNSUB, len: 4 };
const OP_RMSG = { op: Op.RMSG, len: 5 };
const OP_HMSG = { op: Op.HMSG, len: 5 };
const OP_UNKNOWN = { op: Op.UNKNOWN, len: 0 };

/**
 * The op at the start of a line, matched case-insensitively as the reference does,
 * and the length of its name (with the space that must follow, for ops with
 * arguments). RMSG is tested first: it is nearly all of a route's traffic.
 */
function opOf(b: Buffer, s: number, end: number): { op: Op; len: number } {
  const c0 = up(b[s]);
  const n = end - s;
  if (c0 === 0x52 /* R */) {
    const c1 = up(b[s + 1]);
    if (c1 === 0x4d && n > 5 && up(b[s + 2]) === 0x53 && up(b[s + 3]) === 0x47 && isSep(b[s + 4]))
      return OP_RMSG;
    if (c1 === 0x53 && n > 4 && isSep(b[s + 3])) {
      if (b[s + 2] === 0x2b) return OP_RSUB;
      if (b[s + 2] === 0x2d) return OP_RUNSUB;
    }
    return OP_UNKNOWN;
  }
  if (c0 === 0x48 /* H */) {
    const c1 = up(b[s + 1]);
    if (c1 === 0x4d && n > 5 && up(b[s + 2]) === 0x53 && up(b[s + 3]) === 0x47 && isSep(b[s + 4]))
      return OP_HMSG;
    if (c1 === 0x50 && up(b[s + 2]) === 0x55 && up(b[s + 3]) === 0x42)
      return { op: Op.CLIENT, len: 4 };
    return OP_UNKNOWN;
  }
  if (c0 === 0x50 /* P */) {
    const c1 = up(b[s + 1]);
    const c2 = up(b[s + 2]);
    const c3 = up(b[s + 3]);
    // As the reference, anything after PING or PONG up to the newline is ignored.
    if (c1 === 0x49 && c2 === 0x4e && c3 === 0x47) return OP_PING;
    if (c1 === 0x4f && c2 === 0x4e && c3 === 0x47) return OP_PONG;
    if (c1 === 0x55 && c2 === 0x42) return { op: Op.CLIENT, len: 3 };
    return OP_UNKNOWN;
  }
  if (c0 === 0x49 /* I */) {
    if (up(b[s + 1]) === 0x4e && up(b[s + 2]) === 0x46 && up(b[s + 3]) === 0x4f && n > 4)
      return OP_INFO;
    return OP_UNKNOWN;
  }
  if (c0 === 0x43 /* C */) {
    if (n > 7 && b.toString('latin1', s, s + 7).toUpperCase() === 'CONNECT') return OP_CONNECT;
    return OP_UNKNOWN;
  }
  if (c0 === 0x53 /* S */) {
    if (up(b[s + 1]) === 0x55 && up(b[s + 2]) === 0x42) return { op: Op.CLIENT, len: 3 };
    return OP_UNKNOWN;
  }
  if (c0 === 0x55 /* U */) {
    if (n >= 5 && b.toString('latin1', s, s + 5).toUpperCase() === 'UNSUB')
      return { op: Op.CLIENT, len: 5 };
    return OP_UNKNOWN;
  }
  if (c0 === 0x4d /* M */) {
    if (up(b[s + 1]) === 0x53 && up(b[s + 2]) === 0x47) return { op: Op.CLIENT, len: 3 };
    return OP_UNKNOWN;
  }
  if (c0 === 0x2b /* + */) {
    if (up(b[s + 1]) === 0x4f && up(b[s + 2]) === 0x4b) return OP_OK;
    return OP_UNKNOWN;
  }
  if (c0 === 0x2d /* - */) {
    if (up(b[s + 1]) === 0x45 && up(b[s + 2]) === 0x52 && up(b[s + 3]) === 0x52) return OP_ERR;
    return OP_UNKNOWN;
  }
  return OP_UNKNOWN;
}
