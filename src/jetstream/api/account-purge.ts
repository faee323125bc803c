// $JS.API.ACCOUNT.PURGE.<account>: on a single server (the only mode wirebus runs
// JetStream in) the reference deletes every stream of the named account, then its
// directory under the store, and answers `initiated: true`, also for an account it
// does not know. Like nats-server 2.9.10 it takes the request from any account with
// JetStream: its system account imports `$JS.API.>` from all of them.

import { rm } from 'node:fs/promises';
import { JsErr } from '../errors.js';
import { deleteStream } from '../stream-manage.js';
import { fail, ok, type ApiRequest } from './request.js';

const TYPE = 'account_purge_response';

export function accountPurge(req: ApiRequest): void {
  const name = req.tokens[4]!;
  const js = req.jsa.js;
  const target = js.accounts.get(name);
  const streams = target === undefined || !target.enabled ? [] : [...target.streams.values()];
  const known = js.server.accounts.has(name);
  req.jsa.notice(
    `Purge request for account ${name} (streams: ${streams.length}, hasAccount: ${known})`,
  );
  void (async () => {
    for (const s of streams) await deleteStream(target!, s);
    // Without a store directory (memory-only, embedded) there is nothing on disk.
    const dir = js.accountDir(name);
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  })().then(
    () => ok(req, TYPE, { initiated: true }),
    (err: unknown) => fail(req, TYPE, JsErr.streamDelete(String(err))),
  );
}
