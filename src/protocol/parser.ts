// The client protocol parser: a byte state machine over Buffers. It never turns a
// chunk into a string, handles an op split at any byte across reads, and hands
// payloads over as (buffer, start, end) without copying when they lie inside one
// chunk. It knows nothing of sockets or servers: ops go to a ParserHandler.

import { OpParser } from './op-parser.js';

export const ParseFailure = {
  unknownOp: 0,
  maxControlLine: 1,
  maxPayload: 2,
  /** Wrong argument count, bad size, header size above the total. */
  badArguments: 3,
  /** HPUB from a connection that did not announce headers support. */
  headersNotSupported: 4,
} as const;
export type ParseFailure = (typeof ParseFailure)[keyof typeof ParseFailure];

/**
 * Receives parsed ops. Argument bytes are given as (buf, start, end); they stay
 * valid until the handler returns. PUB/HPUB fields are read off the parser.
 */
export interface ParserHandler {
  onConnect(buf: Buffer, start: number, end: number): void;
  onInfo(buf: Buffer, start: number, end: number): void;
  onPing(): void;
  onPong(): void;
  /** SUB fields are in parser.field*, count 2 or 3 checked. */
  onSub(p: Parser): void;
  /** UNSUB fields are in parser.field*, count 1 or 2 checked. */
  onUnsub(p: Parser): void;
  /** A whole PUB or HPUB, payload included. */
  onMsg(p: Parser): void;
  /** `-ERR` from the client. */
  onErr(buf: Buffer, start: number, end: number): void;
  onFailure(kind: ParseFailure): void;
}

const enum S {
  OP_START,
  OP_C,
  OP_CO,
  OP_CON,
  OP_CONN,
  OP_CONNE,
  OP_CONNEC,
  OP_CONNECT,
  CONNECT_ARG,
  OP_I,
  OP_IN,
  OP_INF,
  OP_INFO,
  INFO_ARG,
  OP_P,
  OP_PU,
  OP_PUB,
  OP_PUB_SPC,
  PUB_ARG,
  OP_PI,
  OP_PIN,
  OP_PING,
  OP_PO,
  OP_PON,
  OP_PONG,
  OP_H,
  OP_HP,
  OP_HPU,
  OP_HPUB,
  OP_HPUB_SPC,
  HPUB_ARG,
  OP_HM,
  OP_HMS,
  OP_HMSG,
  OP_HMSG_SPC,
  HMSG_ARG,
  OP_S,
  OP_SU,
  OP_SUB,
  OP_SUB_SPC,
  SUB_ARG,
  OP_U,
  OP_UN,
  OP_UNS,
  OP_UNSU,
  OP_UNSUB,
  OP_UNSUB_SPC,
  UNSUB_ARG,
  OP_PLUS,
  OP_PLUS_O,
  OP_PLUS_OK,
  OP_MINUS,
  OP_MINUS_E,
  OP_MINUS_ER,
  OP_MINUS_ERR,
  OP_MINUS_ERR_SPC,
  MINUS_ERR_ARG,
  MSG_PAYLOAD,
  MSG_END_R,
  MSG_END_N,
  DEAD,
}

const CR = 13;
const LF = 10;
const SPACE = 32;
const TAB = 9;

/** A CONNECT (or INFO, or -ERR) line may carry credentials longer than the op limit. */
const MIN_CONNECT_LINE = 4096;

const MAX_FIELDS = 4;

/** fastPub read a whole PUB/HPUB line whose payload goes on in the next read. */
const PAYLOAD_GOES_ON = -2;

/** The smallest scratch buffer, made at the first control line split across reads. */
const SCRATCH_MIN = 256;
const NO_SCRATCH = Buffer.alloc(0);

export interface ParserLimits {
  /** Longest argument part of PUB, HPUB, SUB and UNSUB. */
  maxControlLine: number;
  maxPayload: number;
}

export class Parser extends OpParser {
  private state: S = S.OP_START;
  private readonly handler: ParserHandler;
  maxControlLine: number;
  maxPayload: number;
  /** Set by the handler once CONNECT announced headers support. */
  headers = false;

  /**
   * Argument bytes of a line split across reads; allocated at the first such line,
   * since most connections never split one (a connection's set-up allocates little).
   */
  private scratch: Buffer = NO_SCRATCH;
  private scratchLen = 0;
  private splitArg = false;

  // SUB and UNSUB fields, as offsets into argBuf; PUB/HPUB fields are MessageFields.
  // Arrays of small integers, which cost less to make than typed arrays.
  readonly fieldStart: number[] = [0, 0, 0, 0];
  readonly fieldEnd: number[] = [0, 0, 0, 0];
  fieldCount = 0;

  private isHmsg = false;

  constructor(handler: ParserHandler, limits: ParserLimits) {
    super();
    this.handler = handler;
    this.maxControlLine = limits.maxControlLine;
    this.maxPayload = limits.maxPayload;
  }

  /** Stops parsing for good: the rest of this chunk and every later one are ignored. */
  stop(): void {
    this.state = S.DEAD;
  }

  get stopped(): boolean {
    return this.state === S.DEAD;
  }

  /** True when no op is half-read, i.e. the stream is at an op boundary. */
  get idle(): boolean {
    return this.state === S.OP_START;
  }

  /** Bytes held across reads (a split control line or payload): bounded by the limits. */
  get bufferedBytes(): number {
    return (this.splitArg ? this.scratchLen : 0) + (this.pending === null ? 0 : this.pendingLen);
  }

  protected inMessage(): boolean {
    const state = this.state;
    return (
      (state === S.MSG_PAYLOAD || state === S.MSG_END_R || state === S.MSG_END_N) && !this.isHmsg
    );
  }

  protected parseRead(buf: Buffer): void {
    const len = buf.length;
    let i = 0;
    while (i < len) {
      const b = buf[i]!;
      switch (this.state) {
        case S.OP_START:
          // Most traffic is PUB: try to take a whole PUB in one pass first.
          // Every index is checked against len first: a read past the end of a typed
          // array gives undefined, and the first one deoptimizes this function (a
          // read that ends inside "PUB " happens in every fresh server's first load).
          if (
            b === 0x50 &&
            i + 3 < len &&
            buf[i + 1] === 0x55 &&
            buf[i + 2] === 0x42 &&
            (buf[i + 3] === SPACE || buf[i + 3] === TAB)
          ) {
            const next = this.fastPub(buf, i + 4, len, false);
            if (next >= 0) {
              if (this.stopped) return;
              i = next;
              continue;
            }
            if (next === PAYLOAD_GOES_ON) {
              i = this.beginPayload(buf, this.payloadStart, len);
              continue;
            }
          }
          // HPUB the same way: JetStream clients publish with a header block (nats v2's
          // js.publish and KV put send one, empty, on every publish).
          if (
            b === 0x48 &&
            i + 4 < len &&
            buf[i + 1] === 0x50 &&
            buf[i + 2] === 0x55 &&
            buf[i + 3] === 0x42 &&
            (buf[i + 4] === SPACE || buf[i + 4] === TAB) &&
            this.headers
          ) {
            const next = this.fastPub(buf, i + 5, len, true);
            if (next >= 0) {
              if (this.stopped) return;
              i = next;
              continue;
            }
            if (next === PAYLOAD_GOES_ON) {
              i = this.beginPayload(buf, this.payloadStart, len);
              continue;
            }
          }
          switch (b) {
            case 0x50: // P
            case 0x70:
              this.state = S.OP_P;
              break;
            case 0x53: // S
            case 0x73:
              this.state = S.OP_S;
              break;
            case 0x55: // U
            case 0x75:
              this.state = S.OP_U;
              break;
            case 0x48: // H
            case 0x68:
              this.state = S.OP_H;
              break;
            case 0x43: // C
            case 0x63:
              this.state = S.OP_C;
              break;
            case 0x49: // I
            case 0x69:
              this.state = S.OP_I;
              break;
            case 0x2b: // +
              this.state = S.OP_PLUS;
              break;
            case 0x2d: // -
              this.state = S.OP_MINUS;
              break;
            default:
              return this.fail(ParseFailure.unknownOp);
          }
          break;

        case S.OP_P:
          if (b === 0x55 || b === 0x75) this.state = S.OP_PU;
          else if (b === 0x49 || b === 0x69) this.state = S.OP_PI;
          else if (b === 0x4f || b === 0x6f) this.state = S.OP_PO;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_PU:
          if (b === 0x42 || b === 0x62) this.state = S.OP_PUB;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_PUB:
          if (b === SPACE || b === TAB) this.state = S.OP_PUB_SPC;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_PUB_SPC:
        case S.OP_HPUB_SPC:
        case S.OP_SUB_SPC:
        case S.OP_UNSUB_SPC:
        case S.OP_HMSG_SPC:
        case S.OP_MINUS_ERR_SPC:
          if (b !== SPACE && b !== TAB) {
            this.state = argStateAfter(this.state);
            this.scratchLen = 0;
            this.splitArg = false;
            continue; // re-read this byte as the first argument byte
          }
          break;

        case S.PUB_ARG:
        case S.HPUB_ARG:
        case S.SUB_ARG:
        case S.UNSUB_ARG:
        case S.HMSG_ARG:
        case S.CONNECT_ARG:
        case S.INFO_ARG:
        case S.MINUS_ERR_ARG: {
          const state = this.state;
          const limit =
            state === S.CONNECT_ARG || state === S.INFO_ARG || state === S.MINUS_ERR_ARG
              ? Math.max(this.maxControlLine, MIN_CONNECT_LINE)
              : this.maxControlLine;
          const nl = buf.indexOf(LF, i);
          if (nl < 0) {
            // The line goes on in the next read: keep what we have, within the limit.
            // As the reference, a CR that may be the line's end does not count.
            const held = this.scratchLen + (len - i) - (buf[len - 1] === CR ? 1 : 0);
            if (held > limit) {
              return this.fail(ParseFailure.maxControlLine);
            }
            this.appendScratch(buf, i, len);
            this.splitArg = true;
            return;
          }
          let argBuf = buf;
          let start = i;
          let end = nl;
          if (this.splitArg) {
            this.appendScratch(buf, i, nl);
            argBuf = this.scratch;
            start = 0;
            end = this.scratchLen;
            this.splitArg = false;
          }
          if (end > start && argBuf[end - 1] === CR) end--;
          if (end - start > limit) return this.fail(ParseFailure.maxControlLine);
          i = nl + 1;
          this.state = S.OP_START;
          switch (state) {
            case S.PUB_ARG:
              if (!this.msgArgs(argBuf, start, end, false)) return;
              i = this.beginPayload(buf, i, len);
              continue;
            case S.HPUB_ARG:
              if (!this.msgArgs(argBuf, start, end, true)) return;
              i = this.beginPayload(buf, i, len);
              continue;
            case S.HMSG_ARG:
              // The reference parses HMSG from a client and swallows it: the payload
              // size stays 0, so only the CRLF that follows is consumed.
              this.isHmsg = true;
              this.size = 0;
              this.state = S.MSG_END_R;
              continue;
            case S.SUB_ARG:
              this.split(argBuf, start, end, true);
              if (this.fieldCount !== 2 && this.fieldCount !== 3) {
                return this.fail(ParseFailure.badArguments);
              }
              this.handler.onSub(this);
              break;
            case S.UNSUB_ARG:
              this.split(argBuf, start, end, true);
              if (this.fieldCount !== 1 && this.fieldCount !== 2) {
                return this.fail(ParseFailure.badArguments);
              }
              this.handler.onUnsub(this);
              break;
            case S.CONNECT_ARG:
              this.handler.onConnect(argBuf, start, end);
              if (this.isSuspended() && !this.stopped) {
                this.holdRest(buf, i);
                return;
              }
              break;
            case S.INFO_ARG:
              this.handler.onInfo(argBuf, start, end);
              break;
            case S.MINUS_ERR_ARG:
              this.handler.onErr(argBuf, start, end);
              break;
            default:
              break;
          }
          if (this.stopped) return;
          continue;
        }

        case S.MSG_PAYLOAD:
          i = this.gatherPayload(buf, i, len);
          if (this.pending === null) this.state = S.MSG_END_R;
          continue;
        case S.MSG_END_R:
          if (b !== CR) return this.fail(ParseFailure.unknownOp);
          this.state = S.MSG_END_N;
          break;
        case S.MSG_END_N:
          if (b !== LF) return this.fail(ParseFailure.unknownOp);
          this.state = S.OP_START;
          if (this.isHmsg) {
            this.isHmsg = false;
          } else {
            this.handler.onMsg(this);
            if (this.stopped) return;
          }
          break;

        case S.OP_PI:
          if (b === 0x4e || b === 0x6e) this.state = S.OP_PIN;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_PIN:
          if (b === 0x47 || b === 0x67) this.state = S.OP_PING;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_PO:
          if (b === 0x4e || b === 0x6e) this.state = S.OP_PON;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_PON:
          if (b === 0x47 || b === 0x67) this.state = S.OP_PONG;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_PING:
        case S.OP_PONG:
        case S.OP_PLUS_OK: {
          // The reference ignores everything up to the newline after these ops.
          const nl = buf.indexOf(LF, i);
          if (nl < 0) return;
          i = nl + 1;
          const state = this.state;
          this.state = S.OP_START;
          if (state === S.OP_PING) this.handler.onPing();
          else if (state === S.OP_PONG) this.handler.onPong();
          if (this.stopped) return;
          continue;
        }

        case S.OP_S:
          if (b === 0x55 || b === 0x75) this.state = S.OP_SU;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_SU:
          if (b === 0x42 || b === 0x62) this.state = S.OP_SUB;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_SUB:
          if (b === SPACE || b === TAB) this.state = S.OP_SUB_SPC;
          else return this.fail(ParseFailure.unknownOp);
          break;

        case S.OP_U:
          if (b === 0x4e || b === 0x6e) this.state = S.OP_UN;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_UN:
          if (b === 0x53 || b === 0x73) this.state = S.OP_UNS;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_UNS:
          if (b === 0x55 || b === 0x75) this.state = S.OP_UNSU;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_UNSU:
          if (b === 0x42 || b === 0x62) this.state = S.OP_UNSUB;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_UNSUB:
          if (b === SPACE || b === TAB) this.state = S.OP_UNSUB_SPC;
          else return this.fail(ParseFailure.unknownOp);
          break;

        case S.OP_H:
          if (b === 0x50 || b === 0x70) this.state = S.OP_HP;
          else if (b === 0x4d || b === 0x6d) this.state = S.OP_HM;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_HP:
          if (b === 0x55 || b === 0x75) this.state = S.OP_HPU;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_HPU:
          if (b === 0x42 || b === 0x62) this.state = S.OP_HPUB;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_HPUB:
          if (b === SPACE || b === TAB) this.state = S.OP_HPUB_SPC;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_HM:
          if (b === 0x53 || b === 0x73) this.state = S.OP_HMS;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_HMS:
          if (b === 0x47 || b === 0x67) this.state = S.OP_HMSG;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_HMSG:
          if (b === SPACE || b === TAB) this.state = S.OP_HMSG_SPC;
          else return this.fail(ParseFailure.unknownOp);
          break;

        case S.OP_C:
          if (b === 0x4f || b === 0x6f) this.state = S.OP_CO;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_CO:
          if (b === 0x4e || b === 0x6e) this.state = S.OP_CON;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_CON:
          if (b === 0x4e || b === 0x6e) this.state = S.OP_CONN;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_CONN:
          if (b === 0x45 || b === 0x65) this.state = S.OP_CONNE;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_CONNE:
          if (b === 0x43 || b === 0x63) this.state = S.OP_CONNEC;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_CONNEC:
          if (b === 0x54 || b === 0x74) this.state = S.OP_CONNECT;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_CONNECT:
          // CONNECT needs no space before its JSON.
          if (b !== SPACE && b !== TAB) {
            this.state = S.CONNECT_ARG;
            this.scratchLen = 0;
            this.splitArg = false;
            continue;
          }
          break;

        case S.OP_I:
          if (b === 0x4e || b === 0x6e) this.state = S.OP_IN;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_IN:
          if (b === 0x46 || b === 0x66) this.state = S.OP_INF;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_INF:
          if (b === 0x4f || b === 0x6f) this.state = S.OP_INFO;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_INFO:
          if (b !== SPACE && b !== TAB) {
            this.state = S.INFO_ARG;
            this.scratchLen = 0;
            this.splitArg = false;
            continue;
          }
          break;

        case S.OP_PLUS:
          if (b === 0x4f || b === 0x6f) this.state = S.OP_PLUS_O;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_PLUS_O:
          if (b === 0x4b || b === 0x6b) this.state = S.OP_PLUS_OK;
          else return this.fail(ParseFailure.unknownOp);
          break;

        case S.OP_MINUS:
          if (b === 0x45 || b === 0x65) this.state = S.OP_MINUS_E;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_MINUS_E:
          if (b === 0x52 || b === 0x72) this.state = S.OP_MINUS_ER;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_MINUS_ER:
          if (b === 0x52 || b === 0x72) this.state = S.OP_MINUS_ERR;
          else return this.fail(ParseFailure.unknownOp);
          break;
        case S.OP_MINUS_ERR:
          if (b === SPACE || b === TAB) this.state = S.OP_MINUS_ERR_SPC;
          else return this.fail(ParseFailure.unknownOp);
          break;

        case S.DEAD:
          return;
      }
      i++;
    }
  }

  /**
   * A PUB (HPUB `withHeaders`) whose whole line lies in this chunk, read in one pass;
   * its payload and CRLF are handed over at once when they are here too. Returns the
   * index after what it read; PAYLOAD_GOES_ON when the line is read and its payload (or
   * CRLF) goes on in the next read, for the caller to take from `payloadStart` as the
   * state machine takes it (beginPayload); or -1 to leave anything unusual (a split
   * line, an error) to the state machine, which then reads the same bytes again.
   */
  private fastPub(buf: Buffer, start: number, len: number, withHeaders: boolean): number {
    // subject [reply] [hdr] size
    const most = withHeaders ? 4 : 3;
    let i = start;
    while (i < len && (buf[i] === SPACE || buf[i] === TAB)) i++;
    const argStart = i;
    const fs = this.fieldStart;
    const fe = this.fieldEnd;
    let count = 0;
    let fieldStart = -1;
    let argEnd = -1;
    for (; i < len; i++) {
      const c = buf[i]!;
      if (c === SPACE || c === TAB) {
        if (fieldStart >= 0) {
          if (count === most) return -1;
          fs[count] = fieldStart;
          fe[count] = i;
          count++;
          fieldStart = -1;
        }
      } else if (c === LF) {
        argEnd = i;
        break;
      } else if (c === CR) {
        if (i + 1 === len || buf[i + 1] !== LF) return -1; // in bounds (see parseRead)
        argEnd = i;
        i++;
        break;
      } else if (fieldStart < 0) {
        fieldStart = i;
      }
    }
    if (argEnd < 0) return -1;
    if (fieldStart >= 0) {
      if (count === most) return -1;
      fs[count] = fieldStart;
      fe[count] = argEnd;
      count++;
    }
    if (argEnd - argStart > this.maxControlLine) return -1;
    if (count < most - 1) return -1;
    // PUB with and without a reply go through the same loads and stores: a connection
    // that switches (a JetStream client's acks after its acked publishes) would
    // otherwise meet code that V8 optimised for the one form, and make it drop the
    // optimised publish path (and everything inlined into it) to compile it again.
    const withReply = count === most;
    const second = fs[1]!;
    const secondEnd = fe[1]!;
    this.replyStart = withReply ? second : -1;
    this.replyEnd = withReply ? secondEnd : -1;
    const sizeStart = fs[count - 1]!;
    const sizeEnd = fe[count - 1]!;
    const size = parseSize(buf, sizeStart, sizeEnd);
    if (size < 0 || size > this.maxPayload) return -1;
    // HPUB's header size comes before the total; the same loads and stores for PUB.
    const hdrStart = withHeaders ? fs[count - 2]! : 0;
    const hdrEnd = withHeaders ? fe[count - 2]! : 0;
    const hdr = withHeaders ? parseSize(buf, hdrStart, hdrEnd) : -1;
    if (withHeaders && (hdr < 0 || hdr > size)) return -1;
    const payStart = i + 1;
    const payEnd = payStart + size;
    // The payload (or its CRLF) goes on in the next read: every read of 64 KiB ends in
    // the middle of a message when they are large. The line is read; the payload is taken
    // as the state machine takes it after msgArgs, without splitting the line again.
    const partial = payEnd + 2 > len;
    if (!partial && (buf[payEnd] !== CR || buf[payEnd + 1] !== LF)) return -1;
    this.argBuf = buf;
    this.fieldCount = count;
    this.subjectStart = fs[0]!;
    this.subjectEnd = fe[0]!;
    this.sizeStart = sizeStart;
    this.sizeEnd = sizeEnd;
    this.hdrStart = hdrStart;
    this.hdrEnd = hdrEnd;
    // A header block of size 0 is delivered as a plain MSG, as the reference does.
    this.hdr = hdr > 0 ? hdr : -1;
    this.size = size;
    // Stored for both forms, and the partial payload taken by parseRead: a statement
    // only the partial form ran would have had no type feedback when V8 optimised this
    // function, within a fresh server's first 64 KiB read (before any message had gone
    // on into the next one), and its first run would drop the optimised code. parseRead
    // is optimised later (its loop is long), after the first read's last message fed
    // that call site.
    this.argsStart = argStart;
    this.argsEnd = argEnd;
    this.payloadStart = payStart;
    if (partial) return PAYLOAD_GOES_ON;
    this.payload = buf;
    this.payloadEnd = payEnd;
    this.handler.onMsg(this);
    return payEnd + 2;
  }

  /** Reads the payload that follows PUB/HPUB arguments; returns the next index. */
  private beginPayload(buf: Buffer, i: number, len: number): number {
    const next = this.takePayload(buf, i, len);
    this.state = this.pending === null ? S.MSG_END_R : S.MSG_PAYLOAD;
    return next;
  }

  /**
   * PUB (`subject [reply] size`) or HPUB (`subject [reply] hdr size`) arguments: the
   * last field is the total size, HPUB's header size comes before it, and a field
   * between those and the subject is the reply subject.
   */
  private msgArgs(buf: Buffer, start: number, end: number, withHeaders: boolean): boolean {
    if (withHeaders && !this.headers) {
      this.fail(ParseFailure.headersNotSupported);
      return false;
    }
    this.split(buf, start, end, false);
    this.argsStart = start;
    this.argsEnd = end;
    const fs = this.fieldStart;
    const fe = this.fieldEnd;
    const n = this.fieldCount;
    const sizeFields = withHeaders ? 2 : 1;
    if (n !== sizeFields + 1 && n !== sizeFields + 2) {
      this.fail(ParseFailure.badArguments);
      return false;
    }
    this.subjectStart = fs[0]!;
    this.subjectEnd = fe[0]!;
    if (n === sizeFields + 2) {
      this.replyStart = fs[1]!;
      this.replyEnd = fe[1]!;
    } else {
      this.replyStart = -1;
      this.replyEnd = -1;
    }
    this.sizeStart = fs[n - 1]!;
    this.sizeEnd = fe[n - 1]!;
    const size = parseSize(buf, this.sizeStart, this.sizeEnd);
    let hdr = -1;
    if (withHeaders) {
      this.hdrStart = fs[n - 2]!;
      this.hdrEnd = fe[n - 2]!;
      hdr = parseSize(buf, this.hdrStart, this.hdrEnd);
      if (hdr < 0 || hdr > size) {
        this.fail(ParseFailure.badArguments);
        return false;
      }
    }
    if (size < 0) {
      this.fail(ParseFailure.badArguments);
      return false;
    }
    if (size > this.maxPayload) {
      this.fail(ParseFailure.maxPayload);
      return false;
    }
    // A header block of size 0 is delivered as a plain MSG, as the reference does.
    this.hdr = hdr > 0 ? hdr : -1;
    this.size = size;
    return true;
  }

  /**
   * Splits arguments on runs of spaces and tabs (SUB and UNSUB also split on CR and
   * LF, as the reference's splitArg does). At most MAX_FIELDS are kept; a count
   * above that is reported as MAX_FIELDS + 1.
   */
  private split(buf: Buffer, start: number, end: number, lineBreaks: boolean): void {
    this.argBuf = buf;
    let count = 0;
    let fieldStart = -1;
    for (let i = start; i < end; i++) {
      const b = buf[i]!;
      const sep = b === SPACE || b === TAB || (lineBreaks && (b === CR || b === LF));
      if (sep) {
        if (fieldStart >= 0) {
          if (count < MAX_FIELDS) {
            this.fieldStart[count] = fieldStart;
            this.fieldEnd[count] = i;
          }
          count++;
          fieldStart = -1;
        }
      } else if (fieldStart < 0) {
        fieldStart = i;
      }
    }
    if (fieldStart >= 0) {
      if (count < MAX_FIELDS) {
        this.fieldStart[count] = fieldStart;
        this.fieldEnd[count] = end;
      }
      count++;
    }
    this.fieldCount = count > MAX_FIELDS ? MAX_FIELDS + 1 : count;
  }

  private appendScratch(buf: Buffer, start: number, end: number): void {
    const n = end - start;
    if (this.scratchLen + n > this.scratch.length) {
      const bigger = Buffer.allocUnsafe(
        Math.max(this.scratch.length * 2, this.scratchLen + n, SCRATCH_MIN),
      );
      this.scratch.copy(bigger, 0, 0, this.scratchLen);
      this.scratch = bigger;
    }
    buf.copy(this.scratch, this.scratchLen, start, end);
    this.scratchLen += n;
  }

  private fail(kind: ParseFailure): void {
    this.state = S.DEAD;
    this.pending = null;
    this.handler.onFailure(kind);
  }
}

function argStateAfter(spaceState: S): S {
  switch (spaceState) {
    case S.OP_PUB_SPC:
      return S.PUB_ARG;
    case S.OP_HPUB_SPC:
      return S.HPUB_ARG;
    case S.OP_SUB_SPC:
      return S.SUB_ARG;
    case S.OP_UNSUB_SPC:
      return S.UNSUB_ARG;
    case S.OP_HMSG_SPC:
      return S.HMSG_ARG;
    default:
      return S.MINUS_ERR_ARG;
  }
}

/**
 * The reference's parseSize: ASCII digits only, 1 to 9 of them; -1 otherwise.
 * Leading zeros are fine.
 */
export function parseSize(buf: Buffer, start: number, end: number): number {
  const n = end - start;
  if (n === 0 || n > 9) return -1;
  let v = 0;
  for (let i = start; i < end; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}
