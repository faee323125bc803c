// The envelope of every API response: `{"type": ..., "error"?: {...}, ...fields}` in the
// reference's field order, and the request body checks its handlers share.

import type { ApiError } from '../errors.js';

export const API_PREFIX = 'io.nats.jetstream.api.v1.';

export type ApiBody = Record<string, unknown>;

const PAGE = { total: 0, offset: 0, limit: 0 };

/**
 * What the reference's response structs still write beside an error (fields without
 * omitempty): paging, empty lists, counts.
 */
const ERROR_FIELDS: Readonly<Record<string, ApiBody>> = {
  stream_info_response: PAGE,
  stream_names_response: { ...PAGE, streams: null },
  stream_template_names_response: { ...PAGE, streams: null },
  stream_list_response: { ...PAGE, streams: [] },
  consumer_names_response: { ...PAGE, consumers: [] },
  consumer_list_response: { ...PAGE, consumers: [] },
  stream_purge_response: { purged: 0 },
  stream_restore_response: { deliver_subject: '' },
};

/** A response: its type, then the error when there is one, then `fields`. */
export function response(type: string, error: ApiError | null, fields: ApiBody = {}): ApiBody {
  const o: ApiBody = { type: API_PREFIX + type };
  if (error !== null) {
    o.error = error;
    if (Object.keys(fields).length === 0) return Object.assign(o, ERROR_FIELDS[type]);
  }
  return Object.assign(o, fields);
}

/** The reference's isEmptyRequest: no bytes, `{}`, or a JSON object without keys. */
export function isEmptyRequest(body: Buffer): boolean {
  if (body.length === 0) return true;
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
}
