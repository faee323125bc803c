// $JS.API.STREAM.MSG.GET.<stream> (`seq`, `last_by_subj`, `next_by_subj`) and
// $JS.API.STREAM.MSG.DELETE.<stream> (`seq`, `no_erase`).

import { JsErr } from '../errors.js';
import { JsonFields } from '../json.js';
import { hasWildcard } from '../../subjects/validate.js';
import { rfc3339Nano } from '../time.js';
import type { StoredMsg, StreamStore } from '../storage/types.js';
import { isEmptyRequest } from './response.js';
import { answer, fail, ok, uncounted, type ApiRequest } from './request.js';

export interface MsgGetRequest {
  seq: number;
  lastFor: string;
  nextFor: string;
}

export function decodeMsgGet(f: JsonFields): MsgGetRequest | null {
  const r = { seq: f.uint('seq'), lastFor: f.str('last_by_subj'), nextFor: f.str('next_by_subj') };
  return f.ok ? r : null;
}

/** The reference's lookup order: by sequence, next by subject from a sequence, or last by subject. */
export function loadRequested(
  store: StreamStore,
  r: MsgGetRequest,
  into?: StoredMsg,
): StoredMsg | undefined {
  if (r.seq > 0 && r.nextFor === '') return store.loadMsg(r.seq, into);
  if (r.nextFor !== '') return store.loadNextMsg(r.nextFor, hasWildcard(r.nextFor), r.seq, into);
  return store.loadLastMsg(r.lastFor, into);
}

export function msgGet(req: ApiRequest): void {
  const type = 'stream_msg_get_response';
  if (isEmptyRequest(req.body)) return fail(req, type, JsErr.badRequest());
  const f = JsonFields.parse(req.body);
  const r = f === null ? null : decodeMsgGet(f);
  if (r === null) return fail(req, type, JsErr.invalidJson());
  if ((r.seq > 0 && r.lastFor !== '') || (r.seq === 0 && r.lastFor === '' && r.nextFor === ''))
    return fail(req, type, JsErr.badRequest());
  if (r.lastFor !== '' && r.nextFor !== '') return fail(req, type, JsErr.badRequest());
  const stream = req.jsa.streams.get(req.tokens[5]!);
  if (stream === undefined) return fail(req, type, JsErr.streamNotFound());
  const m = loadRequested(stream.store, r);
  if (m === undefined) return fail(req, type, JsErr.noMessageFound());
  const message: Record<string, unknown> = { subject: m.subject, seq: m.seq };
  if (m.hdr.length > 0) message.hdrs = m.hdr.toString('base64');
  if (m.data.length > 0) message.data = m.data.toString('base64');
  message.time = rfc3339Nano(m.ts);
  uncounted(req, type, { message });
}

export function msgDelete(req: ApiRequest): void {
  const type = 'stream_msg_delete_response';
  if (isEmptyRequest(req.body)) return fail(req, type, JsErr.badRequest());
  const f = JsonFields.parse(req.body);
  const seq = f === null ? 0 : f.uint('seq');
  const noErase = f === null ? false : f.bool('no_erase');
  if (f === null || !f.ok) return fail(req, type, JsErr.invalidJson());
  const stream = req.jsa.streams.get(req.tokens[5]!);
  if (stream === undefined) return fail(req, type, JsErr.streamNotFound());
  if (stream.cfg.sealed) return fail(req, type, JsErr.streamSealed());
  if (stream.cfg.denyDelete)
    return fail(req, type, JsErr.streamMsgDeleteFailed('message delete not permitted'));
  const removed = noErase ? stream.store.removeMsg(seq) : stream.store.eraseMsg(seq);
  if (!removed) return answer(req, type, JsErr.sequenceNotFound(seq));
  ok(req, type, { success: true });
}
