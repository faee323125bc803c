// $JS.API.STREAM.DELETE.<stream> and $JS.API.STREAM.PURGE.<stream>.

import { JsErr } from '../errors.js';
import { JsonFields } from '../json.js';
import { deleteStream } from '../stream-manage.js';
import { isEmptyRequest } from './response.js';
import { fail, ok, type ApiRequest } from './request.js';

export function streamDelete(req: ApiRequest): void {
  const type = 'stream_delete_response';
  if (!isEmptyRequest(req.body)) return fail(req, type, JsErr.notEmptyRequest());
  const stream = req.jsa.streams.get(req.tokens[4]!);
  if (stream === undefined) return fail(req, type, JsErr.streamNotFound());
  const jsa = req.jsa;
  deleteStream(jsa, stream).then(
    () => ok(req, type, { success: true }),
    (err: unknown) => fail(req, type, JsErr.streamDelete(String(err))),
  );
}

/** A failed purge still says how many went, as the reference's response struct. */
const NONE = { purged: 0 };

export function streamPurge(req: ApiRequest): void {
  const type = 'stream_purge_response';
  let subject = '';
  let seq = 0;
  let keep = 0;
  if (!isEmptyRequest(req.body)) {
    const f = JsonFields.parse(req.body);
    if (f !== null) {
      subject = f.str('filter');
      seq = f.uint('seq');
      keep = f.uint('keep');
    }
    if (f === null || !f.ok) return fail(req, type, JsErr.invalidJson(), NONE);
    if (seq > 0 && keep > 0) return fail(req, type, JsErr.badRequest(), NONE);
  }
  const stream = req.jsa.streams.get(req.tokens[4]!);
  if (stream === undefined) return fail(req, type, JsErr.streamNotFound(), NONE);
  if (stream.cfg.sealed) return fail(req, type, JsErr.streamSealed(), NONE);
  if (stream.cfg.denyPurge)
    return fail(req, type, JsErr.streamPurgeFailed('stream purge not permitted'), NONE);
  const purged = stream.purgeEx(subject, seq, keep);
  ok(req, type, { success: true, purged });
}
