// $JS.API.CONSUMER.INFO/DELETE.<stream>.<consumer>, CONSUMER.NAMES/LIST.<stream>, and
// CONSUMER.MSG.NEXT.<stream>.<consumer> (a pull request, answered by the consumer).

import { Consumer } from '../consumer.js';
import { deleteConsumer } from '../consumer-manage.js';
import { JsErr } from '../errors.js';
import { JsonFields } from '../json.js';
import { isEmptyRequest } from './response.js';
import { fail, ok, type ApiRequest } from './request.js';

const NAMES_LIMIT = 1024;
const LIST_LIMIT = 256;

function lookup(req: ApiRequest, type: string, streamAt: number): Consumer | null {
  const stream = req.jsa.streams.get(req.tokens[streamAt]!);
  if (stream === undefined) {
    fail(req, type, JsErr.streamNotFound());
    return null;
  }
  const c = stream.consumers.get(req.tokens[streamAt + 1]!);
  if (!(c instanceof Consumer)) {
    fail(req, type, JsErr.consumerNotFound());
    return null;
  }
  return c;
}

export function consumerInfo(req: ApiRequest): void {
  const type = 'consumer_info_response';
  if (!isEmptyRequest(req.body)) return fail(req, type, JsErr.notEmptyRequest());
  const c = lookup(req, type, 4);
  if (c !== null) ok(req, type, c.infoJson());
}

export function consumerDelete(req: ApiRequest): void {
  const type = 'consumer_delete_response';
  if (!isEmptyRequest(req.body)) return fail(req, type, JsErr.notEmptyRequest());
  const c = lookup(req, type, 4);
  if (c === null) return;
  const stream = req.jsa.streams.get(req.tokens[4]!)!;
  deleteConsumer(req.jsa, stream, c).then(
    () => ok(req, type, { success: true }),
    (err: unknown) => fail(req, type, JsErr.consumerCreate(String(err))),
  );
}

function listed(req: ApiRequest, type: string): { all: Consumer[]; offset: number } | null {
  let offset = 0;
  if (!isEmptyRequest(req.body)) {
    const f = JsonFields.parse(req.body);
    if (f !== null) offset = f.int('offset');
    if (f === null || !f.ok) {
      fail(req, type, JsErr.invalidJson());
      return null;
    }
  }
  const stream = req.jsa.streams.get(req.tokens[4]!);
  if (stream === undefined) {
    fail(req, type, JsErr.streamNotFound());
    return null;
  }
  const all = [...stream.consumers.values()].filter((c): c is Consumer => c instanceof Consumer);
  all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (offset > all.length) offset = all.length;
  if (offset < 0) offset = 0;
  return { all, offset };
}

export function consumerNames(req: ApiRequest): void {
  const type = 'consumer_names_response';
  const l = listed(req, type);
  if (l === null) return;
  ok(req, type, {
    total: l.all.length,
    offset: l.offset,
    limit: NAMES_LIMIT,
    consumers: l.all.slice(l.offset, l.offset + NAMES_LIMIT).map((c) => c.name),
  });
}

export function consumerList(req: ApiRequest): void {
  const type = 'consumer_list_response';
  const l = listed(req, type);
  if (l === null) return;
  ok(req, type, {
    total: l.all.length,
    offset: l.offset,
    limit: LIST_LIMIT,
    consumers: l.all.slice(l.offset, l.offset + LIST_LIMIT).map((c) => c.infoJson()),
  });
}

/** MSG.NEXT: no API response; the consumer answers with messages or a status. */
export function msgNext(req: ApiRequest): void {
  if (req.reply === null || req.reply === '') return;
  const stream = req.jsa.streams.get(req.tokens[5]!);
  const c = stream?.consumers.get(req.tokens[6]!);
  // The reference has no subscription for an unknown consumer: nobody answers.
  if (!(c instanceof Consumer)) return;
  c.nextRequest(req.reply, req.body);
}
