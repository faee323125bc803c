// Every key of the reference's /varz, /connz, /subsz, /routez, /accountz, /jsz and
// /healthz, under the defaults and under accounts + a cluster of two + TLS
// (fixtures/keysets-*.json, recorded by capture-keysets.ts from nats-server 2.9.10
// with the same config text and clients): wirebus, run as `bin/wirebus -c`, must
// answer with the same keys, nesting and value types.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeCerts, tempDir } from '../auth/helpers.js';
import { startWirebus, type WirebusProcess } from '../helpers/process.js';
import { fixture, getJson, shapeDiff, type JsonObject } from './helpers.js';
import {
  KEYSET_ENDPOINTS,
  keysetClients,
  keysetConfig,
  type KeysetKind,
  keysetPorts,
  type KeysetPorts,
} from './keysets.js';

/**
 * Keys wirebus deliberately lacks, each for a reason:
 * - the service imports the reference gives every account for its system services
 *   ($SYS.REQ.ACCOUNT.*): wirebus answers no system requests.
 */
const ABSENT: readonly string[] = ['account_detail.imports'];

async function answers(kind: KeysetKind): Promise<Record<string, JsonObject>> {
  const certs = kind === 'secure' ? makeCerts() : null;
  const dir = tempDir();
  const [p1, p2] = await keysetPorts();
  const servers: WirebusProcess[] = [];
  try {
    const start = async (p: KeysetPorts, name: string): Promise<void> => {
      const conf = join(dir, `${name}.conf`);
      writeFileSync(conf, keysetConfig(kind, p, certs));
      servers.push(await startWirebus(p.client, ['-c', conf]));
    };
    await start(p1, 'one');
    if (kind === 'secure') {
      await start(p2, 'two');
      for (let i = 0; i < 100; i++) {
        // Both measure a route's round trip with their first PING, within 1.2 s.
        const routes = (await getJson(p1.http, '/routez')).routes as JsonObject[] | null;
        if (routes !== null && routes.length === 1 && 'rtt' in routes[0]!) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const clients = await keysetClients(kind, p1.client, certs);
    try {
      const out: Record<string, JsonObject> = {};
      for (const path of KEYSET_ENDPOINTS[kind]) out[path] = await getJson(p1.http, path);
      return out;
    } finally {
      for (const nc of clients) await nc.close();
    }
  } finally {
    for (const s of servers) await s.stop();
  }
}

describe("every key of the reference's monitoring answers", () => {
  for (const kind of ['default', 'secure'] as const) {
    it(`${kind} configuration`, async () => {
      const recorded = fixture(`keysets-${kind}`) as Record<string, JsonObject>;
      const ours = await answers(kind);
      const problems: string[] = [];
      for (const path of KEYSET_ENDPOINTS[kind]) {
        for (const p of shapeDiff(recorded[path], ours[path], ABSENT))
          problems.push(`${path} ${p}`);
      }
      assert.deepEqual(problems, []);
      // The system account, named as the reference names it.
      assert.equal(ours['/varz']!.system_account, '$SYS');
      assert.equal(ours['/accountz']!.system_account, '$SYS');
    });
  }
});
