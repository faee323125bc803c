// Meshes as operators configure them: every server listing every other (so routes
// are dialled from both ends and duplicates dropped), a server listing itself, a
// cluster without a name meeting a named one, and route permissions.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import type { ExportConfig, ImportConfig, SecurityOptions } from '../../src/auth/options.js';
import { reloadSecurity } from '../../src/auth/reload.js';
import { attachSecurity } from '../../src/auth/security.js';
import type { UserConfig } from '../../src/auth/users.js';
import { attachCluster } from '../../src/cluster/attach.js';
import type { Cluster } from '../../src/cluster/cluster.js';
import { Server } from '../../src/server/server.js';
import { freePort } from '../helpers/process.js';
import {
  CLUSTER,
  closeAll,
  hasRouteInterest,
  sleep,
  startNode,
  waitFor,
  waitMesh,
  waitRouteInterest,
  type Node,
} from './helpers.js';

describe('cluster topologies', () => {
  it('keeps one route per pair when every server lists every other', async () => {
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const urls = ports.map((p) => `nats-route://127.0.0.1:${p}`);
    // Each lists all three, itself included, as a shared config file would.
    const nodes = await Promise.all(ports.map((port) => startNode({ port, routes: urls })));
    try {
      await waitMesh(nodes, 0, 8000);
      await sleep(1500);
      for (const n of nodes) {
        assert.equal(n.cluster.routes.size, 2);
        assert.equal(n.cluster.remotes.size, 2);
      }
      const [a, b] = nodes as [Node, Node, Node];
      const na = await connect({ servers: a.url });
      const nb = await connect({ servers: b.url });
      let got = 0;
      nb.subscribe('dup.check', { callback: () => got++ });
      await nb.flush();
      await waitRouteInterest([a], 'dup.check');
      for (let i = 0; i < 100; i++) na.publish('dup.check');
      await na.flush();
      await waitFor('100 messages', () => got >= 100);
      await sleep(200);
      assert.equal(got, 100, 'no message twice');
      await Promise.all([na.close(), nb.close()]);
    } finally {
      await closeAll(nodes);
    }
  });

  it('takes the name of a named cluster when it has none', async () => {
    const named = await startNode({ name: 'prod' });
    const anon = await startNode({
      name: '',
      routes: [`nats-route://127.0.0.1:${named.cluster.port}`],
    });
    try {
      assert.equal(anon.cluster.dynamic, true);
      await waitMesh([named, anon]);
      assert.equal(anon.cluster.name, 'prod');
      assert.equal(named.cluster.name, 'prod');
    } finally {
      await closeAll([named, anon]);
    }
  });

  it('refuses a route from a server of another named cluster', async () => {
    const a = await startNode({ name: 'east' });
    const b = await startNode({
      name: 'west',
      routes: [`nats-route://127.0.0.1:${a.cluster.port}`],
    });
    try {
      await sleep(500);
      assert.equal(a.cluster.routes.size, 0);
      assert.equal(b.cluster.routes.size, 0);
    } finally {
      await closeAll([a, b]);
    }
  });

  it('applies route import and export permissions', async () => {
    // A imports only pub.>, and exports only pub.> and shared.>.
    const a = await startNode({
      permissions: {
        import: { allow: ['pub.>'] },
        export: { allow: ['pub.>', 'shared.>'] },
      },
    });
    const b = await startNode({ routes: [`nats-route://127.0.0.1:${a.cluster.port}`] });
    try {
      await waitMesh([a, b]);
      const na = await connect({ servers: a.url });
      const nb = await connect({ servers: b.url });
      na.subscribe('pub.x');
      na.subscribe('priv.x');
      nb.subscribe('shared.y');
      nb.subscribe('secret.y');
      await Promise.all([na.flush(), nb.flush()]);
      await waitFor('pub.x at B', () => hasRouteInterest(b, 'pub.x'));
      await waitFor('shared.y at A', () => hasRouteInterest(a, 'shared.y'));
      await sleep(200);
      // A does not ask for what it may not import; it ignores what it may not export.
      assert.equal(hasRouteInterest(b, 'priv.x'), false);
      assert.equal(hasRouteInterest(a, 'secret.y'), false);
      await Promise.all([na.close(), nb.close()]);
    } finally {
      await closeAll([a, b]);
    }
  });
});

/** A node with users, accounts and permissions (the security layer) in cluster wbc. */
async function secureNode(
  security: SecurityOptions,
  routes: string[] = [],
): Promise<{ server: Server; cluster: Cluster; url: string }> {
  const server = new Server({ host: '127.0.0.1', port: 0, quiet: true });
  attachSecurity(server, security);
  const cluster = attachCluster(server, { name: CLUSTER, host: '127.0.0.1', port: 0, routes });
  await server.start();
  await cluster.start();
  return { server, cluster, url: server.url };
}

/** Account A (user a/a) with exports and account B (user b/b) with imports. */
function exporterImporter(exports: ExportConfig[], imports: ImportConfig[]): SecurityOptions {
  return {
    accounts: {
      A: { users: [{ user: 'a', password: 'a' }], exports },
      B: { users: [{ user: 'b', password: 'b' }], imports },
    },
  };
}

type SecureNode = Awaited<ReturnType<typeof secureNode>>;

/**
 * Two nodes with `security`, the second routed to the first: runs body once the
 * route is up, then closes the connections body put in `conns` and both nodes.
 */
async function withSecurePair(
  security: SecurityOptions,
  body: (n1: SecureNode, n2: SecureNode, conns: NatsConnection[]) => Promise<void>,
): Promise<void> {
  const n1 = await secureNode(security);
  const n2 = await secureNode(security, [`nats-route://127.0.0.1:${n1.cluster.port}`]);
  const conns: NatsConnection[] = [];
  try {
    await waitFor('the route', () => n1.cluster.routes.size === 1);
    await body(n1, n2, conns);
  } finally {
    await Promise.all(conns.map((c) => c.close()));
    await n2.server.close();
    await n1.server.close();
  }
}

describe('accounts and permissions across routes', () => {
  it('keeps accounts apart and applies permissions as on one server', async () => {
    const users: UserConfig[] = [
      {
        user: 'svc',
        password: 'p',
        account: 'A',
        permissions: {
          publish: { allow: ['svc.>'] },
          subscribe: { allow: ['req.>', 'wild.>'], deny: ['wild.secret'] },
          responses: { max: 1, expires: 60_000 },
        },
      },
      { user: 'cli', password: 'p', account: 'A' },
      { user: 'other', password: 'p', account: 'B' },
    ];
    const security: SecurityOptions = { accounts: { A: {}, B: {} }, users };
    const a = await secureNode(security);
    const b = await secureNode(security, [`nats-route://127.0.0.1:${a.cluster.port}`]);
    const conns: NatsConnection[] = [];
    try {
      await waitFor('the route', () => a.cluster.routes.size === 1 && b.cluster.routes.size === 1);
      const svc = await connect({ servers: b.url, user: 'svc', pass: 'p' });
      const cli = await connect({ servers: a.url, user: 'cli', pass: 'p' });
      const other = await connect({ servers: a.url, user: 'other', pass: 'p' });
      conns.push(svc, cli, other);
      const seen: string[] = [];
      // The service answers on the reply subject it may publish to only as a response.
      svc.subscribe('req.echo', { callback: (_e, m) => m.respond(`echo:${m.string()}`) });
      svc.subscribe('wild.>', { callback: (_e, m) => seen.push(`svc:${m.subject}`) });
      other.subscribe('req.echo', { callback: () => seen.push('other:req.echo') });
      await Promise.all([svc.flush(), other.flush()]);
      const accA = a.server.accounts.get('A')!;
      await waitFor('A interest at a', () =>
        accA.sublist.match('req.echo').psubs.some((s) => s.route !== null),
      );
      const reply = await cli.request('req.echo', 'hi', { timeout: 2000 });
      assert.equal(reply.string(), 'echo:hi');
      // The subscribe deny under a wider wildcard holds for routed messages too.
      cli.publish('wild.open');
      cli.publish('wild.secret');
      await cli.flush();
      await waitFor('wild.open', () => seen.includes('svc:wild.open'));
      await sleep(200);
      assert.deepEqual(seen, ['svc:wild.open']);
    } finally {
      await Promise.all(conns.map((c) => c.close()));
      await b.server.close();
      await a.server.close();
    }
  });
});

describe('imports and exports across routes', () => {
  it('carries stream and service imports between wirebus nodes', async () => {
    const security = exporterImporter(
      [
        { kind: 'stream', subject: 'feed.>' },
        { kind: 'service', subject: 'svc.>' },
      ],
      [
        { kind: 'stream', account: 'A', subject: 'feed.>', prefix: 'fromA' },
        { kind: 'service', account: 'A', subject: 'svc.time', to: 'time' },
      ],
    );
    await withSecurePair(security, async (n1, n2, conns) => {
      const a1 = await connect({ servers: n1.url, user: 'a', pass: 'a' });
      const b2 = await connect({ servers: n2.url, user: 'b', pass: 'b' });
      conns.push(a1, b2);
      const got: string[] = [];
      b2.subscribe('fromA.feed.>', { callback: (_e, m) => got.push(m.subject) });
      a1.subscribe('svc.time', { callback: (_e, m) => m.respond('noon') });
      await Promise.all([a1.flush(), b2.flush()]);
      await waitFor('the interest', () =>
        n2.server.accounts
          .get('A')!
          .sublist.match('svc.time')
          .psubs.some((s) => s.route !== null),
      );
      await waitFor('the stream interest', () =>
        n1.server.accounts
          .get('B')!
          .sublist.match('fromA.feed.x')
          .psubs.some((s) => s.route !== null),
      );
      // The response is published on n1, in A, to a reply only n2 can map back.
      const reply = await b2.request('time', '', { timeout: 2000 });
      assert.equal(reply.string(), 'noon');
      a1.publish('feed.x', 'tick');
      await a1.flush();
      await waitFor('the stream message', () => got.length === 1);
      await sleep(200);
      assert.deepEqual(got, ['fromA.feed.x']);
    });
  });
  it('delivers a stream once per subscription and queue group, from either node', async () => {
    const security = exporterImporter(
      [
        { kind: 'stream', subject: 'feed.>' },
        { kind: 'stream', subject: 'news.>' },
      ],
      [
        { kind: 'stream', account: 'A', subject: 'feed.>', prefix: 'fromA' },
        { kind: 'stream', account: 'A', subject: 'news.*', to: 'headlines.*' },
      ],
    );
    await withSecurePair(security, async (n1, n2, conns) => {
      const nodes = [n1, n2];
      const as = await Promise.all(
        nodes.map((n) => connect({ servers: n.url, user: 'a', pass: 'a' })),
      );
      const bs = await Promise.all(
        nodes.map((n) => connect({ servers: n.url, user: 'b', pass: 'b' })),
      );
      conns.push(...as, ...bs);
      const got: string[] = [];
      bs.forEach((b, i) => {
        b.subscribe('fromA.>', {
          callback: (_e, m) => got.push(`${i} ${m.subject} ${m.string()}`),
        });
        b.subscribe('headlines.*', {
          callback: (_e, m) => got.push(`${i} ${m.subject} ${m.string()}`),
        });
        b.subscribe('fromA.feed.*', {
          queue: 'q',
          callback: (_e, m) => got.push(`q ${m.subject} ${m.string()}`),
        });
      });
      await Promise.all(bs.map((b) => b.flush()));
      for (const n of nodes) {
        await waitFor('the shadows of the other node', () =>
          ['feed.x', 'news.y'].every((s) =>
            n.server.accounts
              .get('A')!
              .sublist.match(s)
              .psubs.some((sub) => sub.route !== null),
          ),
        );
      }
      for (const [i, a] of as.entries()) {
        a.publish('feed.x', `p${i}`);
        a.publish('news.y', `p${i}`);
        await a.flush();
      }
      const expected: string[] = [];
      for (const p of ['p0', 'p1']) {
        for (const i of [0, 1]) expected.push(`${i} fromA.feed.x ${p}`, `${i} headlines.y ${p}`);
        expected.push(`q fromA.feed.x ${p}`);
      }
      await waitFor('every delivery', () => got.length >= expected.length);
      await sleep(200);
      assert.deepEqual(got.sort(), expected.sort());
    });
  });
  it('keeps stream import interest steady through a security reload', async () => {
    const security = exporterImporter(
      [{ kind: 'stream', subject: 'feed.>' }],
      [{ kind: 'stream', account: 'A', subject: 'feed.>', prefix: 'fromA' }],
    );
    await withSecurePair(security, async (n1, n2, conns) => {
      const a1 = await connect({ servers: n1.url, user: 'a', pass: 'a' });
      const b2 = await connect({ servers: n2.url, user: 'b', pass: 'b' });
      conns.push(a1, b2);
      const got: string[] = [];
      b2.subscribe('fromA.feed.*', { callback: (_e, m) => got.push(m.subject) });
      await b2.flush();
      const shadowAtN1 = (): unknown =>
        n1.server.accounts
          .get('A')!
          .sublist.match('feed.x')
          .psubs.find((sub) => sub.route !== null);
      await waitFor('the shadow interest', () => shadowAtN1() !== undefined);
      const before = shadowAtN1();
      // The same imports again: the shadow is replaced, the interest never withdrawn.
      reloadSecurity(n2.server, security);
      await sleep(200);
      assert.equal(shadowAtN1(), before);
      // A changed prefix: the same exported subject, a new local one.
      reloadSecurity(n2.server, {
        accounts: {
          ...security.accounts,
          B: {
            users: [{ user: 'b', password: 'b' }],
            imports: [{ kind: 'stream', account: 'A', subject: 'feed.>', prefix: 'other' }],
          },
        },
      });
      await sleep(200);
      a1.publish('feed.x', 'x');
      await a1.flush();
      await sleep(300);
      // fromA.feed.* covers nothing of other.feed.>: no shadow, no interest, nothing.
      assert.deepEqual(got, []);
      assert.equal(shadowAtN1(), undefined);
    });
  });
});
