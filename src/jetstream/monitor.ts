// JetStream's monitoring figures: /jsz (with accounts, streams, consumers, config and acc
// in its query, as the reference's) and the `jetstream` block of /varz.

import type { JsAccount } from './account.js';
import type { JetStream } from './jetstream.js';
import { Consumer } from './consumer.js';
import { rfc3339Nano } from './time.js';
import { queryBool, queryInt } from '../monitor/query.js';

/** uint64 -1, as the reference writes an unlimited reservation: 2^64 as a double prints as 18446744073709552000, which the monitor patches to the exact digits. */
const UNLIMITED = 2 ** 64;

function configJson(js: JetStream): Record<string, unknown> {
  const c: Record<string, unknown> = { max_memory: js.maxMemory, max_storage: js.maxStore };
  if (js.options.storeDir !== '') c.store_dir = js.accountDir('').replace(/\/$/, '');
  if (js.options.domain !== '') c.domain = js.options.domain;
  return c;
}

function totals(js: JetStream): {
  streams: number;
  consumers: number;
  messages: number;
  bytes: number;
} {
  let streams = 0;
  let consumers = 0;
  let messages = 0;
  let bytes = 0;
  for (const a of js.accounts.values()) {
    for (const s of a.streams.values()) {
      streams++;
      consumers += s.consumers.size;
      const st = s.store.state();
      messages += st.msgs;
      bytes += st.bytes;
    }
  }
  return { streams, consumers, messages, bytes };
}

function accountDetail(
  js: JetStream,
  a: JsAccount,
  streams: boolean,
  consumers: boolean,
  config: boolean,
): Record<string, unknown> {
  const o: Record<string, unknown> = {
    name: a.account.name,
    id: a.account.name,
    memory: a.memoryUsed,
    storage: a.storeUsed,
    reserved_memory: UNLIMITED,
    reserved_storage: UNLIMITED,
    accounts: 0,
    ha_assets: 0,
    api: { total: a.apiTotal, errors: a.apiErrors },
  };
  const list = streams ? [...a.streams.values()].sort((x, y) => (x.name < y.name ? -1 : 1)) : [];
  // Go's omitempty: no stream_detail without streams.
  if (list.length > 0) {
    o.stream_detail = list.map((s) => {
      const info = s.infoJson();
      const d: Record<string, unknown> = {
        name: s.name,
        created: rfc3339Nano(s.created),
        cluster: { leader: js.server.id },
      };
      if (config) d.config = info.config;
      d.state = info.state;
      const shown = consumers
        ? [...s.consumers.values()].filter((c): c is Consumer => c instanceof Consumer)
        : [];
      // Go's omitempty: no consumer_detail for a stream without consumers.
      if (shown.length > 0) {
        d.consumer_detail = shown.map((c) => {
          const ci = c.infoJson();
          if (!config) delete ci.config;
          return ci;
        });
      }
      return d;
    });
  }
  return o;
}

/** The reference's default and its treatment of `limit` (0 is 1024). */
const JSZ_LIMIT_DEFAULT = 1024;

/**
 * The accounts /jsz details, as the reference's Jsz picks them: `acc` naming an account
 * with JetStream gives that one alone; else `accounts` (implied by `streams` and
 * `consumers`) gives them all, sorted by name when `offset` is set, from `offset` on,
 * at most `limit`. A negative offset or limit, on which the reference's handler panics,
 * gives none.
 */
function pickAccounts(
  js: JetStream,
  acc: string,
  all: boolean,
  offset: number,
  limit: number,
): JsAccount[] {
  const named = js.accounts.get(acc);
  if (named !== undefined) return [named];
  if (!all || offset < 0 || limit < 0) return [];
  let list = [...js.accounts.values()];
  if (offset !== 0) {
    list.sort((a, b) => (a.account.name < b.account.name ? -1 : 1));
    list = list.slice(offset);
  }
  return list.slice(0, limit === 0 ? JSZ_LIMIT_DEFAULT : limit);
}

export function jsz(js: JetStream, q: URLSearchParams): Record<string, unknown> {
  const t = totals(js);
  const o: Record<string, unknown> = {
    config: configJson(js),
    memory: js.memoryUsed(),
    storage: js.storeUsed(),
    reserved_memory: 0,
    reserved_storage: 0,
    accounts: js.accounts.size,
    ha_assets: 0,
    api: { total: js.apiTotal, errors: js.apiErrors },
    streams: t.streams,
    consumers: t.consumers,
    messages: t.messages,
    bytes: t.bytes,
  };
  // Decoded in the reference's order: the first bad value is the 400's text.
  const accountsFlag = queryBool(q, 'accounts');
  const streamsFlag = queryBool(q, 'streams');
  const consumers = queryBool(q, 'consumers');
  const config = queryBool(q, 'config');
  const offset = queryInt(q, 'offset');
  const limit = queryInt(q, 'limit');
  // leader-only: a single server is always its own leader.
  queryBool(q, 'leader-only');
  const streams = consumers || streamsFlag;
  const picked = pickAccounts(js, q.get('acc') ?? '', streams || accountsFlag, offset, limit);
  // Go's omitempty: no account_details when none was picked.
  if (picked.length > 0)
    o.account_details = picked.map((a) => accountDetail(js, a, streams, consumers, config));
  return o;
}

export function varz(js: JetStream): Record<string, unknown> {
  return {
    config: configJson(js),
    stats: {
      memory: js.memoryUsed(),
      storage: js.storeUsed(),
      reserved_memory: 0,
      reserved_storage: 0,
      accounts: js.accounts.size,
      ha_assets: 0,
      api: { total: js.apiTotal, errors: js.apiErrors },
    },
  };
}
