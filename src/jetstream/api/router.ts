// Hands each `$JS.API.>` request of an account to its handler by the subject's tokens.
// Subjects the reference does not serve get no answer, as from the reference; requests
// only a cluster serves get its "clustering support required" answer.

import type { JsAccount } from '../account.js';
import { JsErr } from '../errors.js';
import { accountInfo } from './account-info.js';
import { accountPurge } from './account-purge.js';
import { consumerCreate } from './consumer-create.js';
import {
  consumerDelete,
  consumerInfo,
  consumerList,
  consumerNames,
  msgNext,
} from './consumer-info.js';
import { DIRECT_GET, directGet } from './direct-get.js';
import { msgDelete, msgGet } from './msg.js';
import { streamRestore, streamSnapshot } from './snapshot.js';
import { fail, type ApiRequest } from './request.js';
import { streamCreate, streamUpdate } from './stream-create.js';
import { streamDelete, streamPurge } from './stream-delete.js';
import { streamInfo } from './stream-info.js';
import { streamList, streamNames } from './stream-names.js';
import { templateCreate, templateDelete, templateInfo, templateNames } from './templates.js';

type Handler = (req: ApiRequest) => void;

/**
 * Handlers by `<verb tokens>/<token count>`, with the response type an account without
 * JetStream answers in ('' for requests answered by status lines or not at all).
 */
const ROUTES = new Map<string, [Handler, string]>([
  ['INFO/3', [accountInfo, 'account_info_response']],
  ['STREAM.CREATE/5', [streamCreate, 'stream_create_response']],
  ['STREAM.UPDATE/5', [streamUpdate, 'stream_update_response']],
  ['STREAM.DELETE/5', [streamDelete, 'stream_delete_response']],
  ['STREAM.INFO/5', [streamInfo, 'stream_info_response']],
  ['STREAM.PURGE/5', [streamPurge, 'stream_purge_response']],
  ['STREAM.NAMES/4', [streamNames, 'stream_names_response']],
  ['STREAM.LIST/4', [streamList, 'stream_list_response']],
  ['STREAM.MSG.GET/6', [msgGet, 'stream_msg_get_response']],
  ['STREAM.MSG.DELETE/6', [msgDelete, 'stream_msg_delete_response']],
  ['STREAM.TEMPLATE.CREATE/6', [templateCreate, 'stream_template_create_response']],
  ['STREAM.TEMPLATE.NAMES/5', [templateNames, 'stream_template_names_response']],
  ['STREAM.TEMPLATE.INFO/6', [templateInfo, 'stream_template_info_response']],
  ['STREAM.TEMPLATE.DELETE/6', [templateDelete, 'stream_template_delete_response']],
  ['STREAM.SNAPSHOT/5', [streamSnapshot, 'stream_snapshot_response']],
  ['STREAM.RESTORE/5', [streamRestore, 'stream_restore_response']],
  ['STREAM.LEADER.STEPDOWN/6', clustered('stream_leader_stepdown_response')],
  ['STREAM.PEER.REMOVE/6', clustered('stream_remove_peer_response')],
  ['CONSUMER.LEADER.STEPDOWN/7', clustered('consumer_leader_stepdown_response')],
  ['CONSUMER.CREATE/5', [consumerCreate, 'consumer_create_response']],
  ['CONSUMER.DURABLE.CREATE/7', [consumerCreate, 'consumer_create_response']],
  ['CONSUMER.DELETE/6', [consumerDelete, 'consumer_delete_response']],
  ['CONSUMER.INFO/6', [consumerInfo, 'consumer_info_response']],
  ['CONSUMER.NAMES/5', [consumerNames, 'consumer_names_response']],
  ['CONSUMER.LIST/5', [consumerList, 'consumer_list_response']],
  ['CONSUMER.MSG.NEXT/7', [msgNext, '']],
  ['ACCOUNT.PURGE/5', [accountPurge, 'account_purge_response']],
]);

export function dispatchApi(
  jsa: JsAccount,
  subject: string,
  reply: string | null,
  hdr: Buffer | null,
  body: Buffer,
): void {
  // KV gets, the busiest request: no tokens and no request object for them.
  if (subject.startsWith(DIRECT_GET)) {
    if (jsa.enabled) directGet(jsa, subject, reply, body);
    return;
  }
  const tokens = subject.split('.');
  const req: ApiRequest = { jsa, subject, tokens, reply, hdr, body };
  const n = tokens.length;
  const t2 = tokens[2];
  let route: [Handler, string] | undefined;
  if (t2 === 'CONSUMER' && tokens[3] === 'CREATE' && n > 5)
    route = [consumerCreate, 'consumer_create_response'];
  for (let k = n; k >= 3 && route === undefined; k--) {
    route = ROUTES.get(tokens.slice(2, k).join('.') + '/' + String(n));
  }
  if (route === undefined) return;
  if (jsa.enabled) return route[0](req);
  // An account without JetStream: the reference's "not enabled for account".
  if (route[1] !== '') fail(req, route[1], JsErr.notEnabledForAccount());
}

function clustered(type: string): [Handler, string] {
  return [(req) => fail(req, type, JsErr.clusterRequired()), type];
}
