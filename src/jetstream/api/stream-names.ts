// $JS.API.STREAM.NAMES and $JS.API.STREAM.LIST: sorted by name, paged by `offset`,
// filtered by `subject` (streams whose subjects overlap it).

import { JsErr } from '../errors.js';
import { JsonFields } from '../json.js';
import type { Stream } from '../stream.js';
import { subjectsIntersect } from '../../subjects/relations.js';
import { isEmptyRequest } from './response.js';
import { fail, ok, type ApiRequest } from './request.js';

const NAMES_LIMIT = 1024;
const LIST_LIMIT = 256;

function selected(req: ApiRequest, type: string): { streams: Stream[]; offset: number } | null {
  let offset = 0;
  let filter = '';
  if (!isEmptyRequest(req.body)) {
    const f = JsonFields.parse(req.body);
    if (f !== null) {
      offset = f.int('offset');
      filter = f.str('subject');
    }
    if (f === null || !f.ok) {
      fail(req, type, JsErr.invalidJson());
      return null;
    }
  }
  let streams = [...req.jsa.streams.values()];
  if (filter !== '')
    streams = streams.filter((s) => s.cfg.subjects.some((x) => subjectsIntersect(filter, x)));
  streams.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (offset > streams.length) offset = streams.length;
  if (offset < 0) offset = 0;
  return { streams, offset };
}

export function streamNames(req: ApiRequest): void {
  const type = 'stream_names_response';
  const sel = selected(req, type);
  if (sel === null) return;
  const names = sel.streams.slice(sel.offset, sel.offset + NAMES_LIMIT).map((s) => s.name);
  ok(req, type, {
    total: sel.streams.length,
    offset: sel.offset,
    limit: NAMES_LIMIT,
    streams: names.length === 0 ? null : names,
  });
}

export function streamList(req: ApiRequest): void {
  const type = 'stream_list_response';
  const sel = selected(req, type);
  if (sel === null) return;
  const infos = sel.streams
    .slice(sel.offset, sel.offset + LIST_LIMIT)
    .map((s) => s.infoJson({ withDomain: true }));
  ok(req, type, {
    total: sel.streams.length,
    offset: sel.offset,
    limit: LIST_LIMIT,
    streams: infos,
  });
}
