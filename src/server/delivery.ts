// Writes one message to one subscription: a MSG or HMSG line into the subscriber's
// outbound block, or a call for an in-process subscription. This is the innermost
// loop of the server, so it writes bytes straight from the publisher's buffers
// and allocates nothing for payloads under ZERO_COPY_MIN.

import type { Client } from './client.js';
import type { PublishedMessage } from './message.js';
import { putBytes, putInt, ZERO_COPY_MIN } from './outbound.js';
import { keep } from './shared-read.js';
import { Latin1Memo } from './latin1-memo.js';
import type { Subscription } from './subscription.js';

const M = 0x4d;
const S = 0x53;
const G = 0x47;
const H = 0x48;
const SP = 0x20;
const CR = 0x0d;
const LF = 0x0a;

/** Delivers m to sub; false when the subscription could not take it. */
export function deliver(sub: Subscription, m: PublishedMessage): boolean {
  if (sub.closed) return false;
  const max = sub.max;
  if (max > 0 && sub.delivered >= max) return false;
  if (sub.internal !== null) return deliverInternal(sub, m);
  sub.delivered++;
  const c = sub.client;
  writeMsg(c, sub, m);
  if (max > 0 && sub.delivered >= max) c.removeSubscription(sub);
  return true;
}

function writeMsg(c: Client, sub: Subscription, m: PublishedMessage): void {
  const hdr = m.hdr;
  const withHeaders = hdr >= 0 && c.headers;
  const argBuf = m.argBuf;
  let payStart = m.payloadStart;
  const payEnd = m.payloadEnd;
  let sizeLen: number;
  if (withHeaders) {
    sizeLen = m.hdrEnd - m.hdrStart + 1 + (m.sizeEnd - m.sizeStart);
  } else if (hdr >= 0) {
    // A subscriber without headers support gets the payload alone, as a MSG.
    payStart += hdr;
    sizeLen = 10;
  } else {
    sizeLen = m.sizeEnd - m.sizeStart;
  }
  const payLen = payEnd - payStart;
  const byRef = payLen >= ZERO_COPY_MIN;
  const subjLen = m.subjectEnd - m.subjectStart;
  const sid = sub.sidBytes;
  const replyLen = m.replyStart >= 0 ? m.replyEnd - m.replyStart + 1 : 0;
  const lineLen = 5 + subjLen + 1 + sid.length + 1 + replyLen + sizeLen + 2;
  const out = c.out;
  out.reserve(byRef ? lineLen : lineLen + payLen + 2);
  const b = out.buf;
  let p = out.pos;
  const lineStart = p;
  if (withHeaders) b[p++] = H;
  b[p++] = M;
  b[p++] = S;
  b[p++] = G;
  b[p++] = SP;
  p = putBytes(b, p, argBuf, m.subjectStart, m.subjectEnd);
  b[p++] = SP;
  p = putBytes(b, p, sid, 0, sid.length);
  b[p++] = SP;
  if (replyLen > 0) {
    p = putBytes(b, p, argBuf, m.replyStart, m.replyEnd);
    b[p++] = SP;
  }
  finishMessage(c, lineStart, p, m, withHeaders, payStart, byRef, m.size);
}

/**
 * The tail shared by MSG, HMSG and RMSG lines: the size fields, CRLF, the payload
 * (copied, or by reference when byRef), CRLF; then the delivery is counted and
 * the flush scheduled. The caller reserved room for all of it (the payload only
 * when copied) and wrote the line up to the sizes, from lineStart to p.
 */
export function finishMessage(
  c: Client,
  lineStart: number,
  p: number,
  m: PublishedMessage,
  withHeaders: boolean,
  payStart: number,
  byRef: boolean,
  size: number,
): void {
  const out = c.out;
  const b = out.buf;
  const argBuf = m.argBuf;
  const payEnd = m.payloadEnd;
  if (withHeaders) {
    p = putBytes(b, p, argBuf, m.hdrStart, m.hdrEnd);
    b[p++] = SP;
    p = putBytes(b, p, argBuf, m.sizeStart, m.sizeEnd);
  } else if (m.hdr >= 0) {
    // Headers cut off for a peer without headers support: the payload's own size.
    p = putInt(b, p, payEnd - payStart);
  } else {
    p = putBytes(b, p, argBuf, m.sizeStart, m.sizeEnd);
  }
  // One boolean test per delivery when trace is off (-V).
  if (c.server.logger.traceEnabled) traceOut(c, b, lineStart, p);
  b[p++] = CR;
  b[p++] = LF;
  if (byRef) {
    out.pos = p;
    out.appendRef(keep(m.payload, payStart, payEnd));
    out.reserve(2);
    p = out.pos;
    out.buf[p++] = CR;
    out.buf[p++] = LF;
  } else {
    p = putBytes(b, p, m.payload, payStart, payEnd);
    b[p++] = CR;
    b[p++] = LF;
  }
  out.pos = p;
  c.outMsgs++;
  c.outBytes += size;
  const server = c.server;
  server.outMsgs++;
  server.outBytes += size;
  c.queued();
}

/** deliver() for an in-process subscription or a stream import's shadow. */
function deliverInternal(sub: Subscription, m: PublishedMessage): boolean {
  if (sub.shadow !== null) return sub.shadow.deliver(m);
  const max = sub.max;
  sub.delivered++;
  const c = sub.client;
  c.outMsgs++;
  c.outBytes += m.size;
  c.server.outMsgs++;
  c.server.outBytes += m.size;
  const argBuf = m.argBuf;
  // A literal subscription's subject is the message's: no string to make.
  const subject =
    sub.literal !== null
      ? sub.literal
      : (sub.subjectMemo ??= new Latin1Memo()).get(argBuf, m.subjectStart, m.subjectEnd);
  const reply =
    m.replyStart >= 0
      ? (sub.replyMemo ??= new Latin1Memo()).get(argBuf, m.replyStart, m.replyEnd)
      : null;
  const ranged = sub.ranged;
  if (ranged !== null) {
    const start = m.hdr >= 0 ? m.payloadStart + m.hdr : m.payloadStart;
    try {
      ranged(subject, reply, m.payload, start, m.payloadEnd);
    } catch (err) {
      internalFailed(sub, err);
    }
  } else {
    callInternal(sub, subject, reply, m);
  }
  if (max > 0 && sub.delivered >= max) c.removeSubscription(sub);
  return true;
}

/** An InternalHandler's call: a view of the payload, or a copy it may keep. */
function callInternal(
  sub: Subscription,
  subject: string,
  reply: string | null,
  m: PublishedMessage,
): void {
  // In-process subscribers may keep what they get, unless they say they do not.
  const whole = sub.borrows
    ? m.payload.subarray(m.payloadStart, m.payloadEnd)
    : keep(m.payload, m.payloadStart, m.payloadEnd);
  let headers: Buffer | null = null;
  let data = whole;
  if (m.hdr >= 0) {
    headers = whole.subarray(0, m.hdr);
    data = whole.subarray(m.hdr);
  }
  try {
    sub.internal!(subject, reply, headers, data);
  } catch (err) {
    internalFailed(sub, err);
  }
}

// An in-process subscriber's failure is its own: the publisher and the other
// subscribers of this message carry on.
export function internalFailed(sub: Subscription, err: unknown): void {
  const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
  sub.client.server.logger.error(`in-process subscription on "${sub.subject}" failed: ${text}`);
}

/** `->> [MSG subject sid reply size]` (or RMSG), the line as written, as the reference traces it. */
function traceOut(c: Client, b: Buffer, start: number, end: number): void {
  c.server.logger.trace(`${c.label()} - ->> [${b.toString('latin1', start, end)}]`);
}
