// $JS.API.STREAM.INFO.<stream>: config, created, state, with `deleted_details` and
// `subjects_filter` (paged by `offset`, 100,000 subjects at a time).

import { JsErr } from '../errors.js';
import { JsonFields } from '../json.js';
import { isEmptyRequest } from './response.js';
import { fail, ok, type ApiRequest } from './request.js';

const INFO = 'stream_info_response';
const MAX_SUBJECT_DETAILS = 100_000;
const NO_PAGE = { total: 0, offset: 0, limit: 0 };

export function streamInfo(req: ApiRequest): void {
  // A client creating a stream may ask for the create response's type.
  const type = INFO;
  let details = false;
  let filter = '';
  let offset = 0;
  if (!isEmptyRequest(req.body)) {
    const f = JsonFields.parse(req.body);
    if (f !== null) {
      details = f.bool('deleted_details');
      filter = f.str('subjects_filter');
      offset = f.int('offset');
    }
    if (f === null || !f.ok) return fail(req, type, JsErr.invalidJson(), NO_PAGE);
  }
  const stream = req.jsa.streams.get(req.tokens[4]!);
  if (stream === undefined) return fail(req, type, JsErr.streamNotFound(), NO_PAGE);
  const info = stream.infoJson({ deletedDetails: details, withDomain: true });
  const page = { ...NO_PAGE };
  if (filter !== '') {
    const all = stream.store.subjectsState(filter);
    if (all.size > 0) {
      const names = [...all.keys()].sort();
      if (offset > names.length) offset = names.length;
      if (offset < 0) offset = 0;
      const slice = names.slice(offset, offset + MAX_SUBJECT_DETAILS);
      const state = info.state as Record<string, unknown>;
      const subjects: Record<string, number> = {};
      for (const s of slice) subjects[s] = all.get(s)!.msgs;
      // The subjects go after num_subjects, as the reference's StreamState.
      const ordered: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(state)) {
        ordered[k] = v;
        if (k === 'num_subjects' && slice.length > 0) ordered.subjects = subjects;
      }
      info.state = ordered;
      page.total = all.size;
      page.offset = offset;
      page.limit = MAX_SUBJECT_DETAILS;
    }
  }
  ok(req, type, { ...page, ...info });
}
