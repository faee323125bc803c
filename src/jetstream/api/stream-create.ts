// $JS.API.STREAM.CREATE.<stream> and $JS.API.STREAM.UPDATE.<stream>.

import { JsErr } from '../errors.js';
import { JsonFields } from '../json.js';
import { checkStreamConfig, decodeStreamConfig } from '../stream-config.js';
import { addStream, streamCreatedAdvisory, updateStream } from '../stream-manage.js';
import { fail, ok, type ApiRequest } from './request.js';

const CREATE = 'stream_create_response';
const UPDATE = 'stream_update_response';

export function streamCreate(req: ApiRequest): void {
  const f = JsonFields.parse(req.body);
  const cfg = f === null ? null : decodeStreamConfig(f);
  if (cfg === null) return fail(req, CREATE, JsErr.invalidJson());
  const name = req.tokens[4]!;
  if (name !== cfg.name) return fail(req, CREATE, JsErr.streamMismatch());
  if (/[\\/]/.test(name)) return fail(req, CREATE, JsErr.streamPathSeparators());
  if (cfg.sealed)
    return fail(
      req,
      CREATE,
      JsErr.streamInvalidConfig('stream configuration for create can not be sealed'),
    );
  if (cfg.mirrorDirect && !cfg.hasMirror)
    return fail(
      req,
      CREATE,
      JsErr.streamInvalidConfig('stream has no mirror but does have mirror direct'),
    );
  const r = addStream(req.jsa, cfg);
  if ('err_code' in r) return fail(req, CREATE, r);
  const info = r.stream.infoJson();
  if (r.created) streamCreatedAdvisory(req.jsa, r.stream.cfg);
  // The reference says did_create for a stream that was already there too.
  ok(req, CREATE, { ...info, did_create: true });
}

export function streamUpdate(req: ApiRequest): void {
  const f = JsonFields.parse(req.body);
  const cfg = f === null ? null : decodeStreamConfig(f);
  if (cfg === null) return fail(req, UPDATE, JsErr.invalidJson());
  // The reference checks the config before it compares names (jsStreamUpdateRequest).
  const checked = checkStreamConfig(cfg);
  if ('err_code' in checked) return fail(req, UPDATE, checked);
  const name = req.tokens[4]!;
  if (name !== cfg.name) return fail(req, UPDATE, JsErr.streamMismatch());
  const stream = req.jsa.streams.get(name);
  if (stream === undefined) return fail(req, UPDATE, JsErr.streamNotFound());
  const err = updateStream(req.jsa, stream, cfg);
  if (err !== null) return fail(req, UPDATE, err);
  ok(req, UPDATE, stream.infoJson({ withDomain: true }));
}
