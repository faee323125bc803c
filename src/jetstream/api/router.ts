// Hands each `$JS.API.>` request of an account to its handler by the subject's tokens.
// Subjects the reference does not serve get no answer, as from the reference; requests
// only a cluster serves get its "clustering support required" answer.

import type { JsAccount } from '../account.js';
import { JsErr } from '../errors.js';
import { accountInfo } from './account-info.js';
import { consumerCreate } from './consumer-create.js';
import {
  consumerDelete,
  consumerInfo,
  consumerList,
  consumerNames,
  msgNext,
} from './consumer-info.js';
import { directGet } from './direct-get.js';
import { msgDelete, msgGet } from './msg.js';
import { fail, ok, type ApiRequest } from './request.js';
import { streamCreate, streamUpdate } from './stream-create.js';
import { streamDelete, streamPurge } from './stream-delete.js';
import { streamInfo } from './stream-info.js';
import { streamList, streamNames } from './stream-names.js';

type Handler = (req: ApiRequest) => void;

/** Handlers by `<verb tokens>/<token count>`. */
const ROUTES = new Map<string, Handler>([
  ['INFO/3', accountInfo],
  ['STREAM.CREATE/5', streamCreate],
  ['STREAM.UPDATE/5', streamUpdate],
  ['STREAM.DELETE/5', streamDelete],
  ['STREAM.INFO/5', streamInfo],
  ['STREAM.PURGE/5', streamPurge],
  ['STREAM.NAMES/4', streamNames],
  ['STREAM.LIST/4', streamList],
  ['STREAM.MSG.GET/6', msgGet],
  ['STREAM.MSG.DELETE/6', msgDelete],
  ['STREAM.TEMPLATE.NAMES/5', templateNames],
  ['STREAM.SNAPSHOT/5', snapshotUnsupported],
  ['STREAM.RESTORE/5', restoreUnsupported],
  ['STREAM.LEADER.STEPDOWN/6', clustered('stream_leader_stepdown_response')],
  ['STREAM.PEER.REMOVE/6', clustered('stream_remove_peer_response')],
  ['CONSUMER.LEADER.STEPDOWN/7', clustered('consumer_leader_stepdown_response')],
  ['CONSUMER.CREATE/5', consumerCreate],
  ['CONSUMER.DURABLE.CREATE/7', consumerCreate],
  ['CONSUMER.DELETE/6', consumerDelete],
  ['CONSUMER.INFO/6', consumerInfo],
  ['CONSUMER.NAMES/5', consumerNames],
  ['CONSUMER.LIST/5', consumerList],
  ['CONSUMER.MSG.NEXT/7', msgNext],
  ['ACCOUNT.PURGE/5', accountPurge],
]);

export function dispatchApi(
  jsa: JsAccount,
  subject: string,
  reply: string | null,
  hdr: Buffer | null,
  body: Buffer,
): void {
  const tokens = subject.split('.');
  const req: ApiRequest = { jsa, subject, tokens, reply, hdr, body };
  const n = tokens.length;
  const t2 = tokens[2];
  if (t2 === 'DIRECT' && tokens[3] === 'GET' && n >= 5) return directGet(req);
  if (t2 === 'CONSUMER' && tokens[3] === 'CREATE' && n > 5) return consumerCreate(req);
  for (let k = n; k >= 3; k--) {
    const h = ROUTES.get(tokens.slice(2, k).join('.') + '/' + String(n));
    if (h !== undefined) return h(req);
  }
}

function clustered(type: string): Handler {
  return (req) => fail(req, type, JsErr.clusterRequired());
}

function templateNames(req: ApiRequest): void {
  ok(req, 'stream_template_names_response', { total: 0, offset: 0, limit: 1024, streams: [] });
}

function snapshotUnsupported(req: ApiRequest): void {
  fail(req, 'stream_snapshot_response', JsErr.badRequest());
}

function restoreUnsupported(req: ApiRequest): void {
  fail(req, 'stream_restore_response', JsErr.badRequest(), { deliver_subject: '' });
}

function accountPurge(req: ApiRequest): void {
  ok(req, 'account_purge_response', { initiated: true });
}
