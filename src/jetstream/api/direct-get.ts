// $JS.API.DIRECT.GET.<stream> (a JSON request) and $JS.API.DIRECT.GET.<stream>.<subject>
// (the last message on a subject): answered with the message itself and its Nats-Stream,
// Nats-Subject, Nats-Sequence and Nats-Time-Stamp headers, or a status line, only on
// streams with allow_direct and only to requests with a reply subject.
//
// A KV get is this request in its subject form, one round trip each, and a fresh server
// runs its first thousands in V8's interpreter: the subject is taken apart without
// tokens, and the answer is written once, header block and data, into a buffer of its
// own (no header string, no Buffer.from, no concatenation).

import type { JsAccount } from '../account.js';
import { JsonFields } from '../json.js';
import { setHeader, statusHeader } from '../headers.js';
import { rfc3339Nano } from '../time.js';
import type { Stream } from '../stream.js';
import { blankStoredMsg, type StoredMsg } from '../storage/types.js';
import { lend } from '../../server/shared-read.js';
import { putInt } from '../../server/outbound.js';
import { decodeMsgGet, loadRequested } from './msg.js';

export const DIRECT_GET = '$JS.API.DIRECT.GET.';

const EMPTY = Buffer.alloc(0);

/**
 * The last subject taken apart, and its stream and key: a KV client asks for the same
 * key again and again, and the core hands the same subject string each time.
 */
let lastSubject = '';
let lastStream = '';
let lastKey: string | null = null;

/**
 * `$JS.API.DIRECT.GET.<stream>[.<subject>]` (the caller checked the prefix); `body` is
 * the request's, empty in the subject form.
 */
export function directGet(
  jsa: JsAccount,
  subject: string,
  reply: string | null,
  body: Buffer,
): void {
  if (reply === null || reply === '') return;
  if (subject !== lastSubject) {
    const dot = subject.indexOf('.', DIRECT_GET.length);
    lastStream = subject.substring(DIRECT_GET.length, dot < 0 ? subject.length : dot);
    lastKey = dot < 0 ? null : subject.substring(dot + 1);
    lastSubject = subject;
  }
  const stream = jsa.streams.get(lastStream);
  if (stream === undefined || !stream.cfg.allowDirect) return;
  if (lastKey !== null) {
    if (body.length !== 0) return status(jsa, reply, '408 Bad Request');
    return answer(jsa, reply, stream, stream.store.loadLastMsg(lastKey, loaded));
  }
  if (body.length === 0) return status(jsa, reply, '408 Empty Request');
  const f = JsonFields.parse(body);
  const r = f === null ? null : decodeMsgGet(f);
  if (r === null) return status(jsa, reply, '408 Malformed Request');
  if (r.seq === 0 && r.lastFor === '' && r.nextFor === '')
    return status(jsa, reply, '408 Empty Request');
  if (r.seq > 0 && r.lastFor !== '') return status(jsa, reply, '408 Bad Request');
  if (r.lastFor !== '' && r.nextFor !== '') return status(jsa, reply, '408 Bad Request');
  answer(jsa, reply, stream, loadRequested(stream.store, r, loaded));
}

function status(jsa: JsAccount, reply: string, text: string): void {
  jsa.reply(reply, statusHeader(text), EMPTY);
}

/** What a load fills in: its views are used before the next load. */
const loaded = blankStoredMsg();

/** Where answers are written; lent (shared-read.ts), so whatever keeps a part of it copies. */
let out = lentBuffer(4096);
/**
 * True while an answer is being routed: one made meanwhile (an in-process subscriber
 * that asks in turn) gets a buffer of its own.
 */
let routing = false;

function lentBuffer(size: number): Buffer {
  const b = Buffer.allocUnsafeSlow(size);
  lend(b.buffer);
  return b;
}

/**
 * The reference's header block (`NATS/1.0\r\nNats-Stream: %s\r\nNats-Subject: %s\r\n
 * Nats-Sequence: %d\r\nNats-Time-Stamp: %v\r\n\r\n`) in two parts kept as bytes: the
 * head for the last stream and subject, the tail for the last time.
 */
let headName = '';
let headSubject = '';
let head = EMPTY;
let tailTime = '';
let tail = EMPTY;

function answer(jsa: JsAccount, reply: string, stream: Stream, m: StoredMsg | undefined): void {
  if (m === undefined) return status(jsa, reply, '404 Message Not Found');
  const ts = rfc3339Nano(m.ts);
  if (m.hdr.length !== 0) {
    // The message's own headers with the four added (KV deletes and purges): rare.
    let hdr = setHeader(m.hdr, 'Nats-Stream', stream.name);
    hdr = setHeader(hdr, 'Nats-Subject', m.subject);
    hdr = setHeader(hdr, 'Nats-Sequence', String(m.seq));
    hdr = setHeader(hdr, 'Nats-Time-Stamp', ts);
    jsa.reply(reply, hdr, m.data);
    return;
  }
  if (stream.name !== headName || m.subject !== headSubject) {
    head = Buffer.from(
      `NATS/1.0\r\nNats-Stream: ${stream.name}\r\nNats-Subject: ${m.subject}\r\nNats-Sequence: `,
      'latin1',
    );
    headName = stream.name;
    headSubject = m.subject;
  }
  if (ts !== tailTime) {
    tail = Buffer.from(`\r\nNats-Time-Stamp: ${ts}\r\n\r\n`, 'latin1');
    tailTime = ts;
  }
  const data = m.data;
  const need = head.length + 20 + tail.length + data.length;
  const nested = routing;
  let b = out;
  if (nested) b = Buffer.allocUnsafe(need);
  else if (b.length < need) out = b = lentBuffer(need * 2);
  b.set(head, 0);
  let p = putInt(b, head.length, m.seq);
  b.set(tail, p);
  p += tail.length;
  const hdrLen = p;
  b.set(data, p);
  p += data.length;
  routing = true;
  try {
    jsa.replyRange(reply, b, 0, hdrLen, p);
  } finally {
    routing = nested;
  }
}
