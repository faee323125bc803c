// Messages from this server's clients to the routes. While a message is matched,
// each route it must reach is marked once, with the queue groups it was chosen
// for; then one RMSG (or HMSG) per route is written into the route's outbound block:
//
//   RMSG <account> <subject> [reply] <size>
//   RMSG <account> <subject> + <reply> <queue>... <size>      chosen for queue groups
//   RMSG <account> <subject> | <queue>... <size>              the same without a reply
//   HMSG ... <hdr size> <size>                                with a header block
//
// as the reference's msgHeaderForRouteOrLeaf. Like delivery.ts this writes bytes
// straight from the publisher's buffers and allocates nothing per message.

import type { Account } from '../server/account.js';
import type { PublishedMessage } from '../server/message.js';
import { finishMessage } from '../server/delivery.js';
import { putBytes, ZERO_COPY_MIN } from '../server/outbound.js';
import type { Route } from './route.js';

interface Mark {
  route: Route | null;
  /** Queue groups the route was chosen for. */
  readonly queues: string[];
}

const R = 0x52;
const H = 0x48;
const M = 0x4d;
const S = 0x53;
const G = 0x47;
const SP = 0x20;
const PLUS = 0x2b;
const BAR = 0x7c;

export class Fanout {
  /** Marks of the messages being routed, innermost last; entries are reused. */
  private readonly marks: Mark[] = [];
  private length = 0;
  private lastAccount: Account | null = null;
  private lastAccountName = Buffer.alloc(0);

  open(): number {
    return this.length;
  }

  mark(frame: number, route: Route, queue: string | null): void {
    const marks = this.marks;
    for (let i = frame; i < this.length; i++) {
      const e = marks[i]!;
      if (e.route === route) {
        if (queue !== null) e.queues.push(queue);
        return;
      }
    }
    let e = marks[this.length];
    if (e === undefined) {
      e = { route, queues: [] };
      marks.push(e);
    } else {
      e.route = route;
      // Setting length costs a call even when it does not change.
      if (e.queues.length !== 0) e.queues.length = 0;
    }
    this.length++;
    if (queue !== null) e.queues.push(queue);
  }

  /** Writes the frame's message to each route marked in it; returns how many. */
  send(frame: number, account: Account, m: PublishedMessage): number {
    let name = this.lastAccountName;
    if (account !== this.lastAccount) {
      name = Buffer.from(account.name, 'utf8');
      this.lastAccount = account;
      this.lastAccountName = name;
    }
    let n = 0;
    for (let i = frame; i < this.length; i++) {
      const e = this.marks[i]!;
      const route = e.route!;
      e.route = null;
      if (route.closed) continue;
      writeRouted(route, name, m, e.queues);
      n++;
    }
    this.length = frame;
    return n;
  }
}

function writeRouted(route: Route, account: Buffer, m: PublishedMessage, queues: string[]): void {
  const hdr = m.hdr;
  const withHeaders = hdr >= 0 && route.headers;
  const argBuf = m.argBuf;
  let payStart = m.payloadStart;
  const payEnd = m.payloadEnd;
  let sizeLen: number;
  let size = m.size;
  if (withHeaders) {
    sizeLen = m.hdrEnd - m.hdrStart + 1 + (m.sizeEnd - m.sizeStart);
  } else if (hdr >= 0) {
    // A server without headers support gets the payload alone, as the reference does.
    payStart += hdr;
    size -= hdr;
    sizeLen = 10;
  } else {
    sizeLen = m.sizeEnd - m.sizeStart;
  }
  const payLen = payEnd - payStart;
  const byRef = payLen >= ZERO_COPY_MIN;
  const replyLen = m.replyStart >= 0 ? m.replyEnd - m.replyStart : -1;
  let queuesLen = 0;
  for (let i = 0; i < queues.length; i++) queuesLen += queues[i]!.length + 1;
  const lineLen =
    5 +
    account.length +
    1 +
    (m.subjectEnd - m.subjectStart) +
    1 +
    (queues.length > 0 ? 2 : 0) +
    (replyLen >= 0 ? replyLen + 1 : 0) +
    queuesLen +
    sizeLen +
    2;
  const c = route.client;
  const out = c.out;
  out.reserve(byRef ? lineLen : lineLen + payLen + 2);
  const b = out.buf;
  let p = out.pos;
  const lineStart = p;
  if (withHeaders) {
    b[p++] = H;
  } else {
    b[p++] = R;
  }
  b[p++] = M;
  b[p++] = S;
  b[p++] = G;
  b[p++] = SP;
  p = putBytes(b, p, account, 0, account.length);
  b[p++] = SP;
  p = putBytes(b, p, argBuf, m.subjectStart, m.subjectEnd);
  b[p++] = SP;
  if (queues.length > 0) {
    if (replyLen >= 0) {
      b[p++] = PLUS;
      b[p++] = SP;
      p = putBytes(b, p, argBuf, m.replyStart, m.replyEnd);
    } else {
      b[p++] = BAR;
    }
    b[p++] = SP;
    for (let i = 0; i < queues.length; i++) {
      const q = queues[i]!;
      p += b.write(q, p, 'latin1');
      b[p++] = SP;
    }
  } else if (replyLen >= 0) {
    p = putBytes(b, p, argBuf, m.replyStart, m.replyEnd);
    b[p++] = SP;
  }
  finishMessage(c, lineStart, p, m, withHeaders, payStart, byRef, size);
}
