// The smaller endpoints: /routez (from src/cluster), /healthz, /accountz, /leafz,
// /gatewayz and /jsz (the index page is the dashboard, dashboard.ts). wirebus has no leaf nodes, gateways or
// JetStream yet, so those answer with the reference's shape for a server that has
// none configured.

import type { Server } from '../server/server.js';
import { nowMs, rfc3339 } from './format.js';
import { json, type MonitorHandler } from './http.js';
import { BadRequest, queryBool, querySubs } from './query.js';
import { sublistStats } from './subsz.js';
import { systemAccount } from './varz.js';
import { routez } from '../cluster/monitor.js';

function head(server: Server): { server_id: string; now: string } {
  return { server_id: server.id, now: rfc3339(nowMs()) };
}

export function routezHandler(server: Server): MonitorHandler {
  return (req) => json(routez(server, querySubs(req.query)), req.query);
}

/**
 * 200 `{"status":"ok"}` once the client listener accepts connections; before that
 * 503 with the reference's error text. Compact JSON, as the reference writes it.
 */
export function healthzHandler(server: Server): MonitorHandler {
  return (req) => {
    queryBool(req.query, 'js-enabled');
    queryBool(req.query, 'js-enabled-only');
    queryBool(req.query, 'js-server-only');
    if (!server.ready) {
      const error = 'failed to be ready for connections after 1ms: server';
      server.logger.warn(`Healthcheck failed: "${error}"`);
      return json({ status: 'error', error }, req.query, { status: 503, compact: true });
    }
    return json({ status: 'ok' }, req.query, { compact: true });
  };
}

export function accountzHandler(server: Server): MonitorHandler {
  return (req) => {
    const acc = req.query.get('acc') ?? '';
    // The system account is listed (and named, omitted when there is none) as the
    // reference does; wirebus runs no system services in it, so it stays empty.
    const system = systemAccount(server);
    const top = system === '' ? head(server) : { ...head(server), system_account: system };
    if (acc === '') {
      const names = [...server.accounts.keys()];
      if (system !== '' && !names.includes(system)) names.push(system);
      return json({ ...top, accounts: names }, req.query);
    }
    const account = server.accounts.get(acc);
    if (account === undefined && (acc !== system || system === '')) {
      throw new BadRequest(`Account ${acc} does not exist`);
    }
    let clients = 0;
    for (const c of server.clients.values()) {
      if (c.kind === 'client' && account !== undefined && c.account === account) clients++;
    }
    const detail = {
      account_name: acc,
      update_time: rfc3339(server.configLoadTime.getTime()),
      expired: false,
      complete: true,
      jetstream_enabled: false,
      leafnode_connections: 0,
      client_connections: clients,
      subscriptions: account === undefined ? 0 : account.sublist.size,
      sublist_stats: sublistStats(server, acc),
    };
    return json({ ...top, account_detail: detail }, req.query);
  };
}

export function leafzHandler(server: Server): MonitorHandler {
  // The reference writes a nil list as null here.
  return (req) => json({ ...head(server), leafnodes: 0, leafs: null }, req.query);
}

export function gatewayzHandler(server: Server): MonitorHandler {
  return (req) => json({ ...head(server), outbound_gateways: {}, inbound_gateways: {} }, req.query);
}

/** The reference writes "unlimited" reservations as uint64 -1, past what a double holds exactly. */
const UINT64_MAX_AS_DOUBLE = /18446744073709552000/g;

/** /jsz: JetStream's figures, or those of a server without it, as the reference answers. */
export function jszHandler(server: Server): MonitorHandler {
  return (req) => {
    const js = server.jetstream;
    if (js !== null) {
      const r = json({ ...head(server), ...js.jsz(req.query) }, req.query);
      return { ...r, body: r.body.replace(UINT64_MAX_AS_DOUBLE, '18446744073709551615') };
    }
    return json(
      {
        ...head(server),
        disabled: true,
        config: { max_memory: 0, max_storage: 0 },
        memory: 0,
        storage: 0,
        reserved_memory: 0,
        reserved_storage: 0,
        accounts: 0,
        ha_assets: 0,
        api: { total: 0, errors: 0 },
        streams: 0,
        consumers: 0,
        messages: 0,
        bytes: 0,
      },
      req.query,
    );
  };
}

/** Link texts of the core endpoints, in the reference's order. */
