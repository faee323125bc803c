// A config reload of the cluster block, as nats-server 2.9.10 allows it: routes
// added are dialled and routes removed closed for good, the name and the other
// settings apply from then on, route permissions at once; the listen address
// cannot change. The log of a SIGHUP reload is compared with the reference's.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connect } from 'nats';
import { reloadCluster } from '../../src/cluster/reload.js';
import { reloadSecurity } from '../../src/index.js';
import { ReloadError } from '../../src/server/reload.js';
import { freePort, startWirebus } from '../helpers/process.js';
import {
  closeAll,
  hasRouteInterest,
  referenceMissing,
  routeUrl,
  sleep,
  startNode,
  waitFor,
  waitMesh,
} from './helpers.js';

const missing = referenceMissing();

describe('reloading the cluster settings', () => {
  it('dials routes added and closes routes removed, for good', async () => {
    const [a, b, c] = await Promise.all([startNode(), startNode(), startNode()]);
    try {
      reloadCluster(a.server, { routes: [routeUrl(b)] });
      await waitMesh([a, b]);
      reloadCluster(a.server, { routes: [routeUrl(b), routeUrl(c)] });
      await waitMesh([a, b, c]);
      // Dropping b: a closes the route it dialled and does not dial it again; c
      // stays, and so does b's route to c (b learned of c by gossip and dialled it).
      reloadCluster(a.server, { routes: [routeUrl(c)] });
      await waitFor('the route to b gone', () => a.cluster.remotes.get(b.server.id) === undefined);
      await sleep(1500);
      assert.equal(a.cluster.remotes.has(b.server.id), false);
      assert.equal(a.cluster.remotes.has(c.server.id), true);
      assert.deepEqual(a.cluster.options.routes, [routeUrl(c)]);
    } finally {
      await closeAll([a, b, c]);
    }
  });

  it('refuses a new listen address, and takes a new name', async () => {
    const a = await startNode();
    try {
      const port = await freePort();
      assert.throws(
        () => reloadCluster(a.server, { port }),
        (err: Error) =>
          err instanceof ReloadError &&
          err.message ===
            `config reload not supported for cluster port: old=${a.cluster.port}, new=${port}`,
      );
      assert.throws(
        () => reloadCluster(a.server, { host: '0.0.0.0' }),
        (err: Error) =>
          err.message ===
          'config reload not supported for cluster host: old=127.0.0.1, new=0.0.0.0',
      );
      reloadCluster(a.server, { name: 'renamed' });
      assert.equal(a.cluster.name, 'renamed');
      const nc = await connect({ servers: a.url });
      assert.equal(nc.info?.cluster, 'renamed');
      await nc.close();
    } finally {
      await closeAll([a]);
    }
  });

  it('applies new route permissions to the routes there are', async () => {
    const [a, b] = await Promise.all([startNode(), startNode()]);
    try {
      reloadCluster(a.server, { routes: [routeUrl(b)] });
      await waitMesh([a, b]);
      const na = await connect({ servers: a.url });
      const nb = await connect({ servers: b.url });
      na.subscribe('in.x');
      na.subscribe('out.x');
      nb.subscribe('b.x');
      await Promise.all([na.flush(), nb.flush()]);
      await waitFor('interest', () => hasRouteInterest(b, 'in.x') && hasRouteInterest(b, 'out.x'));
      await waitFor('b interest', () => hasRouteInterest(a, 'b.x'));
      // a takes only in.> now, and gives only in.>: b forgets out.x, a forgets b.x.
      reloadCluster(a.server, {
        permissions: { import: { allow: ['in.>'] }, export: { allow: ['in.>'] } },
      });
      await waitFor('out.x withdrawn', () => !hasRouteInterest(b, 'out.x'));
      assert.equal(hasRouteInterest(b, 'in.x'), true);
      assert.equal(hasRouteInterest(a, 'b.x'), false);
      // And back: b hears of out.x again, and b sends b.x again on a's new INFO.
      reloadCluster(a.server, { permissions: null });
      await waitFor('out.x again', () => hasRouteInterest(b, 'out.x'));
      await waitFor('b.x again', () => hasRouteInterest(a, 'b.x'));
      await Promise.all([na.close(), nb.close()]);
    } finally {
      await closeAll([a, b]);
    }
  });
});

describe('accounts replaced by a reload', () => {
  it("routes an account's messages into the account now under its name", async () => {
    const x = { users: [{ user: 'x', password: 'x' }] };
    const y = { users: [{ user: 'y', password: 'y' }] };
    const a = await startNode({}, { security: { accounts: { X: x } } });
    const b = await startNode({ routes: [routeUrl(a)] }, { security: { accounts: { X: x } } });
    const conns: Awaited<ReturnType<typeof connect>>[] = [];
    try {
      await waitMesh([a, b]);
      const pub = await connect({ servers: a.url, user: 'x', pass: 'x' });
      conns.push(pub);
      const got: string[] = [];
      const first = await connect({ servers: b.url, user: 'x', pass: 'x' });
      conns.push(first);
      first.subscribe('acc.r', { callback: (_e, m) => got.push(`first ${m.string()}`) });
      await first.flush();
      await waitFor('X interest at a', () => hasRouteInterest(a, 'acc.r', null, 'X'));
      pub.publish('acc.r', '1');
      await waitFor('the first message', () => got.length === 1);
      // X goes from b, and comes back: a new account under the old name.
      reloadSecurity(b.server, { accounts: { Y: y } });
      reloadSecurity(b.server, { accounts: { X: x } });
      const second = await connect({ servers: b.url, user: 'x', pass: 'x' });
      conns.push(second);
      second.subscribe('acc.r', { callback: (_e, m) => got.push(`second ${m.string()}`) });
      await second.flush();
      await waitFor('X interest at a again', () => hasRouteInterest(a, 'acc.r', null, 'X'));
      pub.publish('acc.r', '2');
      await waitFor('the second message', () => got.length === 2);
      assert.deepEqual(got, ['first 1', 'second 2']);
    } finally {
      for (const c of conns) await c.close().catch(() => undefined);
      await closeAll([a, b]);
    }
  });
});

describe('a SIGHUP reload of the cluster block', { skip: missing ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'wbcr-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The cluster lines of a log, ports and connection numbers as placeholders. */
  function clusterLines(log: string, ports: Record<string, number>): string[] {
    let out = log
      .split('\n')
      .map((l) => /^\[\d+\] \S+ \S+ \[(?:INF|WRN|ERR)\] (.*)$/.exec(l)?.[1])
      .filter((l): l is string => l !== undefined)
      .filter((l) =>
        /Cluster name updated|Reloaded: cluster|Removed route|Failed to reload|Route Removed|Reloaded server/.test(
          l,
        ),
      );
    for (const [name, port] of Object.entries(ports)) {
      out = out.map((l) => l.split(String(port)).join(name));
    }
    return out.map((l) => l.replace(/rid:\d+/, 'rid:N'));
  }

  it('logs what the reference logs, and removes the route', async () => {
    const target = await startNode({ name: 'before' });
    const results: string[][] = [];
    try {
      for (const kind of ['reference', 'wirebus'] as const) {
        const [port, cport, other] = await Promise.all([freePort(), freePort(), freePort()]);
        const conf = join(dir, `${kind}.conf`);
        const write = (name: string, listen: number, routes: string[]): void => {
          writeFileSync(
            conf,
            `cluster { name: ${name}, listen: "127.0.0.1:${listen}", routes: [${routes.join(', ')}] }\n`,
          );
        };
        write('before', cport, [routeUrl(target)]);
        const p =
          kind === 'wirebus'
            ? await startWirebus(port, ['-c', conf])
            : await startProcess('nats-server', [
                '-a',
                '127.0.0.1',
                '-p',
                String(port),
                '-c',
                conf,
              ]);
        try {
          await waitFor('the route', () => p.log().includes('Route connection created'), 8000);
          write('after', cport, []);
          p.child.kill('SIGHUP');
          await waitFor(
            'the reload',
            () => p.log().includes('Reloaded server configuration'),
            5000,
          );
          write('after', other, []);
          p.child.kill('SIGHUP');
          await waitFor('the refusal', () => p.log().includes('Failed to reload'), 5000);
          await sleep(300);
          results.push(
            clusterLines(p.log(), { P: port, C: cport, O: other, T: target.cluster.port }),
          );
        } finally {
          await p.stop();
        }
      }
      const [expected, actual] = results as [string[], string[]];
      assert.deepEqual(actual, expected);
      assert.ok(expected.includes('Cluster name updated to after'), expected.join('\n'));
      assert.ok(expected.includes(`Removed route nats-route://127.0.0.1:T`), expected.join('\n'));
      await waitFor('the target alone again', () => target.cluster.routes.size === 0);
    } finally {
      await closeAll([target]);
    }
  });
});

interface Proc {
  readonly child: ReturnType<typeof spawn>;
  log(): string;
  stop(): Promise<void>;
}

/** Runs a server process until it logs that it is ready. */
async function startProcess(cmd: string, args: string[]): Promise<Proc> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (t: string) => (log += t));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitFor(`${cmd} ready`, () => log.includes('Server is ready'), 8000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return { child, log: () => log, stop };
}
