// $JS.API.DIRECT.GET.<stream> (a JSON request) and $JS.API.DIRECT.GET.<stream>.<subject>
// (the last message on a subject): answered with the message itself and its Nats-Stream,
// Nats-Subject, Nats-Sequence and Nats-Time-Stamp headers, or a status line, only on
// streams with allow_direct and only to requests with a reply subject.

import { JsonFields } from '../json.js';
import { setHeader, statusHeader } from '../headers.js';
import { rfc3339Nano } from '../time.js';
import type { Stream } from '../stream.js';
import { decodeMsgGet, loadRequested, type MsgGetRequest } from './msg.js';
import type { ApiRequest } from './request.js';

const EMPTY = Buffer.alloc(0);

function status(req: ApiRequest, text: string): void {
  req.jsa.publish(req.reply!, null, statusHeader(text), EMPTY);
}

export function directGet(req: ApiRequest): void {
  if (req.reply === null || req.reply === '') return;
  const stream = req.jsa.streams.get(req.tokens[4]!);
  if (stream === undefined || !stream.cfg.allowDirect) return;
  if (req.tokens.length > 5) {
    if (req.body.length !== 0) return status(req, '408 Bad Request');
    const key = req.tokens.slice(5).join('.');
    return answer(req, stream, { seq: 0, lastFor: key, nextFor: '' });
  }
  if (req.body.length === 0) return status(req, '408 Empty Request');
  const f = JsonFields.parse(req.body);
  const r = f === null ? null : decodeMsgGet(f);
  if (r === null) return status(req, '408 Malformed Request');
  if (r.seq === 0 && r.lastFor === '' && r.nextFor === '') return status(req, '408 Empty Request');
  if (r.seq > 0 && r.lastFor !== '') return status(req, '408 Bad Request');
  if (r.lastFor !== '' && r.nextFor !== '') return status(req, '408 Bad Request');
  answer(req, stream, r);
}

function answer(req: ApiRequest, stream: Stream, r: MsgGetRequest): void {
  const m = loadRequested(stream.store, r);
  if (m === undefined) return status(req, '404 Message Not Found');
  const ts = rfc3339Nano(m.ts);
  let hdr: Buffer;
  if (m.hdr.length === 0) {
    hdr = Buffer.from(
      `NATS/1.0\r\nNats-Stream: ${stream.name}\r\nNats-Subject: ${m.subject}\r\nNats-Sequence: ${m.seq}\r\nNats-Time-Stamp: ${ts}\r\n\r\n`,
      'latin1',
    );
  } else {
    hdr = setHeader(m.hdr, 'Nats-Stream', stream.name);
    hdr = setHeader(hdr, 'Nats-Subject', m.subject);
    hdr = setHeader(hdr, 'Nats-Sequence', String(m.seq));
    hdr = setHeader(hdr, 'Nats-Time-Stamp', ts);
  }
  req.jsa.publish(req.reply!, null, hdr, m.data);
}
