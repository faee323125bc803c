// One API request as the handlers see it: the account's JetStream, the subject's tokens,
// the reply subject and the body.

import type { JsAccount } from '../account.js';
import type { ApiError } from '../errors.js';
import { response, type ApiBody } from './response.js';

export interface ApiRequest {
  readonly jsa: JsAccount;
  readonly subject: string;
  /** The subject's tokens: ['$JS', 'API', ...]. */
  readonly tokens: readonly string[];
  readonly reply: string | null;
  readonly hdr: Buffer | null;
  readonly body: Buffer;
}

/** Sends a response of `type` with an error and the extra fields the reference adds to it. */
export function fail(req: ApiRequest, type: string, error: ApiError, extra: ApiBody = {}): void {
  send(req, response(type, error, extra), true, true);
}

export function ok(req: ApiRequest, type: string, fields: ApiBody): void {
  send(req, response(type, null, fields), true, true);
}

/** Sends and counts a response, and tells the API audit advisory's listeners about it. */
function send(req: ApiRequest, body: ApiBody, countError: boolean, count: boolean): void {
  const text = req.jsa.respond(req.reply, body, countError, count);
  req.jsa.audit(req.subject, req.body, text);
}

/**
 * A response the reference sends down its success path although it may carry an error
 * (MSG.DELETE of a missing sequence): counted as a request, not as an error.
 */
export function answer(req: ApiRequest, type: string, error: ApiError, fields: ApiBody = {}): void {
  send(req, response(type, error, fields), false, true);
}

/** A response outside the API's counters, as the reference's MSG.GET answer. */
export function uncounted(req: ApiRequest, type: string, fields: ApiBody): void {
  req.jsa.respond(req.reply, response(type, null, fields), false, false);
}
