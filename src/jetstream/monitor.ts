// JetStream's monitoring figures: /jsz (with accounts, streams, consumers, config and acc
// in its query, as the reference's) and the `jetstream` block of /varz.

import type { JsAccount } from './account.js';
import type { JetStream } from './jetstream.js';
import { Consumer } from './consumer.js';
import { rfc3339Nano } from './time.js';

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
  if (streams) {
    const list = [...a.streams.values()].sort((x, y) => (x.name < y.name ? -1 : 1));
    o.stream_detail = list.map((s) => {
      const info = s.infoJson();
      const d: Record<string, unknown> = {
        name: s.name,
        created: rfc3339Nano(s.created),
        cluster: { leader: js.server.id },
      };
      if (config) d.config = info.config;
      d.state = info.state;
      if (consumers) {
        d.consumer_detail = [...s.consumers.values()]
          .filter((c): c is Consumer => c instanceof Consumer)
          .map((c) => {
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

function flag(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v !== null && v !== 'false' && v !== '0';
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
  const consumers = flag(q, 'consumers');
  const streams = consumers || flag(q, 'streams');
  const accounts = streams || flag(q, 'accounts') || q.has('acc');
  if (accounts) {
    const only = q.get('acc') ?? '';
    o.account_details = [...js.accounts.values()]
      .filter((a) => only === '' || a.account.name === only)
      .map((a) => accountDetail(js, a, streams, consumers, flag(q, 'config')));
  }
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
