// Records the reference's full monitoring answers under the two configurations of
// keysets.ts as fixtures/keysets-default.json and keysets-secure.json. Not a test:
// run it by hand after a build, with nats-server 2.9.10 on PATH:
//
//   npx tsc -p tsconfig.json && node dist/test/monitor/capture-keysets.js
//   npx prettier --write test/monitor/fixtures

import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeCerts, tempDir } from '../auth/helpers.js';
import {
  KEYSET_ENDPOINTS,
  keysetClients,
  keysetConfig,
  type KeysetKind,
  keysetPorts,
} from './keysets.js';

const fixtures = resolve(import.meta.dirname, '..', '..', '..', 'test', 'monitor', 'fixtures');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function startRef(conf: string, http: number): Promise<ChildProcess> {
  const child = spawn('nats-server', ['-c', conf], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${http}/healthz`)).status === 200) return child;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  child.kill();
  throw new Error('nats-server did not start');
}

async function capture(kind: KeysetKind): Promise<void> {
  const certs = kind === 'secure' ? makeCerts() : null;
  const dir = tempDir();
  const [p1, p2] = await keysetPorts();
  const children: ChildProcess[] = [];
  try {
    const conf1 = join(dir, 'one.conf');
    writeFileSync(conf1, keysetConfig(kind, p1, certs));
    children.push(await startRef(conf1, p1.http));
    if (kind === 'secure') {
      const conf2 = join(dir, 'two.conf');
      writeFileSync(conf2, keysetConfig(kind, p2, certs));
      children.push(await startRef(conf2, p2.http));
      await sleep(1500);
    }
    const clients = await keysetClients(kind, p1.client, certs);
    await sleep(300);
    const out: Record<string, unknown> = {};
    for (const path of KEYSET_ENDPOINTS[kind]) {
      const res = await fetch(`http://127.0.0.1:${p1.http}${path}`);
      if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
      out[path] = await res.json();
    }
    for (const nc of clients) await nc.close();
    const file = join(fixtures, `keysets-${kind}.json`);
    writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
    console.log(`wrote ${file}`);
  } finally {
    for (const c of children) c.kill();
  }
}

await capture('default');
await capture('secure');
