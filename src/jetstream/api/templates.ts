// $JS.API.STREAM.TEMPLATE.CREATE/NAMES/INFO/DELETE, as nats-server 2.9.10 answers them
// on a single server.

import { JsErr } from '../errors.js';
import { JsonFields } from '../json.js';
import { addTemplate, decodeTemplate, deleteTemplate } from '../templates.js';
import { isEmptyRequest } from './response.js';
import { fail, ok, type ApiRequest } from './request.js';

const CREATE = 'stream_template_create_response';
const NAMES = 'stream_template_names_response';
const INFO = 'stream_template_info_response';
const DELETE = 'stream_template_delete_response';
const NAMES_LIMIT = 1024;

export function templateCreate(req: ApiRequest): void {
  const body = decodeTemplate(req.body);
  if (body === null) return fail(req, CREATE, JsErr.invalidJson());
  if (body.name !== req.tokens[5]) return fail(req, CREATE, JsErr.templateNameNotMatchSubject());
  // The reference dereferences the missing config and panics; wirebus says what is missing.
  if (body.cfg === null)
    return fail(req, CREATE, JsErr.streamTemplateCreate('template config is required'));
  const t = addTemplate(req.jsa, body.name, body.cfg, body.maxStreams);
  if ('err_code' in t) return fail(req, CREATE, t);
  ok(req, CREATE, t.infoJson());
}

export function templateNames(req: ApiRequest): void {
  let offset = 0;
  if (!isEmptyRequest(req.body)) {
    const f = JsonFields.parse(req.body);
    if (f !== null) offset = f.int('offset');
    if (f === null || !f.ok) return fail(req, NAMES, JsErr.invalidJson());
  }
  const names = [...req.jsa.templates.keys()].sort();
  // A negative offset, on which the reference panics, starts at the first.
  const from = Math.min(Math.max(offset, 0), names.length);
  ok(req, NAMES, {
    total: names.length,
    offset: from,
    limit: NAMES_LIMIT,
    streams: names.slice(from, from + NAMES_LIMIT),
  });
}

export function templateInfo(req: ApiRequest): void {
  if (!isEmptyRequest(req.body)) return fail(req, INFO, JsErr.notEmptyRequest());
  const t = req.jsa.templates.get(req.tokens[5]!);
  if (t === undefined) return fail(req, INFO, JsErr.streamTemplateNotFound());
  ok(req, INFO, t.infoJson());
}

export function templateDelete(req: ApiRequest): void {
  if (!isEmptyRequest(req.body)) return fail(req, DELETE, JsErr.notEmptyRequest());
  const t = req.jsa.templates.get(req.tokens[5]!);
  if (t === undefined) return fail(req, DELETE, JsErr.streamTemplateNotFound());
  deleteTemplate(req.jsa, t).then(
    () => ok(req, DELETE, { success: true }),
    (err: unknown) => fail(req, DELETE, JsErr.streamTemplateDelete(String(err))),
  );
}
