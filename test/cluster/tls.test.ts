// TLS on routes (`cluster { tls { ... } }`), as nats-server 2.9.10 does it: the
// handshake comes first, both ways, before CONNECT and INFO; each side presents
// its certificate and checks the other's against the CA; the route INFO says
// tls_required and tls_verify. Certificates are made by openssl when the test runs.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { resolveClusterSettings } from '../../src/cluster/config.js';
import { parseCommandLine } from '../../src/config/flags.js';
import { applyConfig } from '../../src/config/load.js';
import type { RouteTlsOptions } from '../../src/cluster/tls.js';
import { parseConfigText } from '../../src/config/conf.js';
import { attachCluster } from '../../src/cluster/attach.js';
import { varzCluster } from '../../src/cluster/monitor.js';
import type { ClusterOptions } from '../../src/cluster/options.js';
import { reloadCluster } from '../../src/cluster/reload.js';
import { Server } from '../../src/server/server.js';
import { makeCerts } from '../auth/helpers.js';
import { MemoryLogger } from '../ops/helpers.js';
import {
  CLUSTER,
  closeAll,
  referenceMissing,
  referenceRoutes,
  sleep,
  startNode,
  startReference,
  waitFor,
  waitForAsync,
  waitMesh,
  type Node,
  type ReferenceServer,
} from './helpers.js';

const missing = referenceMissing();

interface RouteCerts {
  readonly dir: string;
  /** Signed by the CA both sides trust. */
  readonly good: RouteTlsOptions;
  /** Signed by another CA. */
  readonly rogue: RouteTlsOptions;
}

/** A CA and route certificates for 127.0.0.1 (server and client use, as routes need both). */
function makeRouteCerts(): RouteCerts {
  const c = makeCerts();
  const opts = (certFile: string, keyFile: string): RouteTlsOptions => ({
    certFile,
    keyFile,
    caFile: c.ca,
    verify: true,
    timeout: 2,
  });
  return {
    dir: c.dir,
    good: opts(c.routeCert, c.routeKey),
    rogue: opts(c.rogueRouteCert, c.rogueRouteKey),
  };
}

/** The `cluster { tls {...} }` block of a reference config file. */
function tlsBlock(t: RouteTlsOptions): string {
  return `cluster { tls { cert_file: "${t.certFile}", key_file: "${t.keyFile}", ca_file: "${t.caFile}", timeout: ${t.timeout} } }\n`;
}

/** The first line a route port sends to a TLS client presenting `t`'s certificate. */
async function routeInfo(port: number, t: RouteTlsOptions): Promise<Record<string, unknown>> {
  const s = tlsConnect({
    host: '127.0.0.1',
    port,
    cert: readFileSync(t.certFile),
    key: readFileSync(t.keyFile),
    ca: readFileSync(t.caFile),
  });
  try {
    let text = '';
    s.setEncoding('latin1');
    await new Promise<void>((resolve, reject) => {
      s.on('data', (d: string) => {
        text += d;
        if (text.includes('\r\n')) resolve();
      });
      s.once('error', reject);
    });
    const m = /^INFO (\{.*\}) ?\r\n/.exec(text);
    assert.ok(m !== null, text);
    return JSON.parse(m[1]!) as Record<string, unknown>;
  } finally {
    s.destroy();
  }
}

describe('route TLS', () => {
  let certs: RouteCerts;
  before(() => {
    certs = makeRouteCerts();
  });
  after(() => rmSync(certs.dir, { recursive: true, force: true }));

  it('reads cluster { tls { ... } }', () => {
    const conf = parseConfigText(
      'cluster { port: 1, tls { cert_file: c.pem, key_file: k.pem, ca_file: ca.pem, verify: true, timeout: 3 } }',
      'test.conf',
    );
    const o = resolveClusterSettings(parseCommandLine([]), applyConfig(conf, 'test.conf')).options;
    assert.deepEqual(o.tls, {
      certFile: 'c.pem',
      keyFile: 'k.pem',
      caFile: 'ca.pem',
      verify: true,
      timeout: 3,
    });
  });

  it('joins wirebus nodes over TLS, and keeps out a certificate of another CA', async () => {
    const logA = new MemoryLogger({ debug: true });
    const a = await loggedNode({ tls: certs.good }, logA);
    const b = await startNode({
      tls: certs.good,
      routes: [`nats-route://127.0.0.1:${a.cluster.port}`],
    });
    const logRogue = new MemoryLogger({ debug: true });
    const rogue = await loggedNode(
      { tls: certs.rogue, routes: [`nats-route://127.0.0.1:${a.cluster.port}`] },
      logRogue,
    );
    const conns: NatsConnection[] = [];
    try {
      await waitMesh([a, b]);
      const info = await routeInfo(a.cluster.port, certs.good);
      assert.equal(info.tls_required, true);
      assert.equal(info.tls_verify, true);
      const [ca, cb] = await Promise.all([
        connect({ servers: a.url }),
        connect({ servers: b.url }),
      ]);
      conns.push(ca, cb);
      const got: string[] = [];
      cb.subscribe('secure.>', { callback: (_e, m) => got.push(m.string()) });
      await cb.flush();
      await waitFor('the interest', () =>
        a.server.globalAccount.sublist.match('secure.x').psubs.some((s) => s.route !== null),
      );
      ca.publish('secure.x', 'sealed');
      await waitFor('the message', () => got.length === 1);
      assert.deepEqual(got, ['sealed']);
      // The rogue node is refused: its certificate is not from the CA. The accepting
      // side checks it (with TLS 1.3, after the dialling side is done).
      const refusal = 'TLS route handshake error: tls: failed to verify client certificate';
      await waitFor('a refused handshake', () => logA.grep(refusal).length > 0).catch(
        (err: unknown) => {
          throw new Error(`${String(err)}\n${logA.lines.join('\n')}`);
        },
      );
      assert.equal(rogue.cluster.routes.size, 0);
      assert.equal(a.cluster.routes.size, 1);
      // A connection without a certificate at all.
      const bare = tlsConnect({
        host: '127.0.0.1',
        port: a.cluster.port,
        ca: readFileSync(certs.good.caFile),
      });
      bare.on('error', () => undefined);
      await waitFor(
        'a route without a certificate refused',
        () =>
          logA.grep("TLS route handshake error: tls: client didn't provide a certificate").length >
          0,
      );
      bare.destroy();
      // The handshake's lines, as the reference logs them.
      assert.ok(
        logA.grep('- Starting TLS route server handshake').length >= 1,
        logA.lines.join('\n'),
      );
      assert.ok(logA.grep('- TLS handshake complete').length >= 1);
      assert.ok(logA.grep('- TLS version 1.').length >= 1);
      assert.ok(logRogue.grep('- Starting TLS route client handshake').length >= 1);
    } finally {
      await Promise.all(conns.map((c) => c.close()));
      await closeAll([a, b, rogue]);
    }
  });

  it('keeps out a node without TLS, and a connection that never starts its handshake', async () => {
    const log = new MemoryLogger();
    const a = await loggedNode({ tls: { ...certs.good, timeout: 0.5 } }, log);
    const plain = await startNode({ routes: [`nats-route://127.0.0.1:${a.cluster.port}`] });
    const idle = tcpConnect({ host: '127.0.0.1', port: a.cluster.port });
    idle.on('error', () => undefined);
    try {
      await waitFor(
        'the plain route refused',
        () =>
          log.grep(
            'TLS route handshake error: tls: first record does not look like a TLS handshake',
          ).length > 0,
      );
      await waitFor(
        'the idle connection timed out',
        () => log.grep('- TLS handshake timeout').length > 0,
      );
      await waitFor('the idle connection closed', () => idle.destroyed || idle.readableEnded);
      assert.equal(a.cluster.routes.size, 0);
      assert.equal(plain.cluster.routes.size, 0);
    } finally {
      idle.destroy();
      await closeAll([a, plain]);
    }
  });

  it('takes TLS settings on a reload, for the routes made from then on', async () => {
    const a = await startNode({ tls: certs.good });
    const b = await startNode({ routes: [`nats-route://127.0.0.1:${a.cluster.port}`] });
    try {
      await sleep(300);
      assert.equal(b.cluster.routes.size, 0);
      // b keeps dialling its configured route; the next attempt speaks TLS.
      reloadCluster(b.server, { tls: certs.good });
      await waitMesh([a, b], 0, 8000);
    } finally {
      await closeAll([a, b]);
    }
  });

  describe('with nats-server', { skip: missing ?? false }, () => {
    it('routes over TLS both ways: each kind dials the other', async () => {
      const conf = join(certs.dir, 'ref.conf');
      writeFileSync(conf, tlsBlock(certs.good));
      const w1 = await startNode({ tls: certs.good });
      let ref: ReferenceServer | null = null;
      let w2: Node | null = null;
      const conns: NatsConnection[] = [];
      try {
        // The reference dials w1; w2 dials the reference and meets w1 by gossip.
        ref = await startReference([`nats-route://127.0.0.1:${w1.cluster.port}`], ['-c', conf]);
        await waitFor('the reference at wirebus', () => w1.cluster.routes.size === 1, 8000);
        w2 = await startNode({
          tls: certs.good,
          routes: [`nats-route://127.0.0.1:${ref.clusterPort}`],
        });
        await waitMesh([w1, w2], 1, 8000);
        await waitForAsync(
          'the reference in the mesh',
          async () => (await referenceRoutes(ref!)) === 2,
        );
        // The reference's route INFO says the same as ours.
        const refInfo = await routeInfo(ref.clusterPort, certs.good);
        const ourInfo = await routeInfo(w1.cluster.port, certs.good);
        assert.equal(refInfo.tls_required, true);
        assert.equal(refInfo.tls_verify, true);
        assert.equal(ourInfo.tls_required, refInfo.tls_required);
        assert.equal(ourInfo.tls_verify, refInfo.tls_verify);
        // /varz cluster: TLS fields and the route auth timeout TLS lengthens.
        const refVarz = (await ref.monitor('/varz')).cluster as Record<string, unknown>;
        const ourVarz = varzCluster(w1.server);
        for (const key of ['tls_required', 'tls_verify', 'tls_timeout', 'auth_timeout']) {
          assert.equal(ourVarz[key], refVarz[key], key);
        }
        assert.equal(ourVarz.auth_timeout, 3);
        const routez = await ref.monitor('/routez');
        const routes = (routez.routes ?? []) as Record<string, unknown>[];
        assert.equal(routes.length, 2);
        const [c1, c2, c3] = await Promise.all([
          connect({ servers: w1.url }),
          connect({ servers: w2.url }),
          connect({ servers: ref.url }),
        ]);
        conns.push(c1, c2, c3);
        const got: string[] = [];
        for (const [name, c] of [
          ['w1', c1],
          ['w2', c2],
          ['ref', c3],
        ] as const) {
          c.subscribe('tls.*', { callback: (_e, m) => got.push(`${name}<${m.string()}`) });
        }
        await Promise.all(conns.map((c) => c.flush()));
        await waitFor('interest everywhere', () =>
          [w1, w2!].every(
            (w) =>
              new Set(
                w.server.globalAccount.sublist
                  .match('tls.x')
                  .psubs.filter((s) => s.route !== null)
                  .map((s) => s.route),
              ).size === 2,
          ),
        );
        await sleep(300);
        c1.publish('tls.x', 'w1');
        c3.publish('tls.x', 'ref');
        await Promise.all(conns.map((c) => c.flush()));
        await waitFor('six deliveries', () => got.length >= 6);
        await sleep(200);
        assert.deepEqual(got.sort(), ['ref<ref', 'ref<w1', 'w1<ref', 'w1<w1', 'w2<ref', 'w2<w1']);
      } finally {
        await Promise.all(conns.map((c) => c.close()));
        await closeAll([w1, w2]);
        await ref?.stop();
      }
    });

    it('refuses, as the reference does, a certificate of another CA', async () => {
      const conf = join(certs.dir, 'ref-good.conf');
      writeFileSync(conf, tlsBlock(certs.good));
      const ref = await startReference([], ['-c', conf]);
      const log = new MemoryLogger();
      const rogue = await loggedNode(
        { tls: certs.rogue, routes: [`nats-route://127.0.0.1:${ref.clusterPort}`] },
        log,
      );
      try {
        await waitFor('the refusal', () => ref.log().includes('TLS route handshake error'), 8000);
        await waitFor(
          'the rogue node cut off',
          () => log.grep('Router connection closed').length > 0,
          8000,
        );
        assert.equal(await referenceRoutes(ref), 0);
        assert.equal(rogue.cluster.routes.size, 0);
      } finally {
        await closeAll([rogue]);
        await ref.stop();
      }
    });
  });
});

/** A node of cluster wbc whose log lines are kept. */
async function loggedNode(options: Partial<ClusterOptions>, logger: MemoryLogger): Promise<Node> {
  const server = new Server({ host: '127.0.0.1', port: 0 }, logger);
  const cluster = attachCluster(server, { name: CLUSTER, host: '127.0.0.1', port: 0, ...options });
  await server.start();
  await cluster.start();
  return {
    port: server.port,
    url: server.url,
    server,
    monitor: null,
    httpPort: 0,
    streaming: null,
    cluster,
    websocket: null,
    close: () => server.close(),
  };
}
