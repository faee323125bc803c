// $JS.API.ACCOUNT.PURGE.<account>: a single reference server (not clustered) deletes every
// stream of the named account, then its directory under the store, and answers
// `initiated: true`. Like the reference (its handler sits in the system account, which
// every JetStream account imports `$JS.API.>` from), any account may name any other, and
// an account without JetStream or without streams is "purged" all the same.

import { rmSync } from 'node:fs';
import { JsErr } from '../errors.js';
import { deleteStream } from '../stream-manage.js';
import { fail, ok, type ApiRequest } from './request.js';

const TYPE = 'account_purge_response';

export function accountPurge(req: ApiRequest): void {
  const name = req.tokens[4]!;
  const js = req.jsa.js;
  const target = js.accounts.get(name);
  const streams = target === undefined ? [] : [...target.streams.values()];
  req.jsa.notice(
    `Purge request for account ${name} (streams: ${streams.length}, hasAccount: ${target !== undefined})`,
  );
  void (async () => {
    for (const stream of streams) {
      try {
        await deleteStream(target!, stream);
      } catch (err) {
        fail(req, TYPE, JsErr.streamDelete(String(err)));
        return;
      }
    }
    const dir = js.accountDir(name);
    try {
      if (dir !== '') rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      fail(req, TYPE, JsErr.streamGeneral(String(err)));
      return;
    }
    ok(req, TYPE, { initiated: true });
  })();
}
