// /routez and the cluster part of /varz, with the reference's fields, on a node of a
// three-node cluster.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { CLUSTER, closeAll, routeUrl, startNode, waitFor, waitMesh, type Node } from './helpers.js';

async function get(n: Node, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${n.httpPort}${path}`);
  assert.equal(res.status, 200);
  return (await res.json()) as Record<string, unknown>;
}

describe('cluster monitoring', () => {
  let a: Node;
  let b: Node;
  let c: Node;
  let nb: NatsConnection;

  before(async () => {
    a = await startNode({}, { httpPort: -1 });
    b = await startNode({ routes: [routeUrl(a)] });
    c = await startNode({ routes: [routeUrl(a)] });
    await waitMesh([a, b, c]);
    nb = await connect({ servers: b.url });
    nb.subscribe('mon.plain');
    nb.subscribe('mon.q', { queue: 'grp' });
    await nb.flush();
    await waitFor('B interest at A', () =>
      [...a.cluster.routes.values()].some((r) => r.subs.size === 2),
    );
  });

  after(async () => {
    await nb.close();
    await closeAll([a, b, c]);
  });

  it('lists the routes in /routez with the reference fields', async () => {
    const z = await get(a, '/routez');
    assert.deepEqual(Object.keys(z), ['server_id', 'now', 'num_routes', 'routes']);
    assert.equal(z.server_id, a.server.id);
    assert.equal(z.num_routes, 2);
    const routes = z.routes as Record<string, unknown>[];
    const toB = routes.find((r) => r.remote_id === b.server.id)!;
    assert.deepEqual(Object.keys(toB), [
      'rid',
      'remote_id',
      'did_solicit',
      'is_configured',
      'ip',
      'port',
      'start',
      'last_activity',
      ...(toB.rtt === undefined ? [] : ['rtt']),
      'uptime',
      'idle',
      'pending_size',
      'in_msgs',
      'out_msgs',
      'in_bytes',
      'out_bytes',
      'subscriptions',
    ]);
    // A accepted B's route; B dialled it.
    assert.equal(toB.did_solicit, false);
    assert.equal(toB.is_configured, false);
    assert.equal(toB.ip, '127.0.0.1');
    assert.equal(toB.subscriptions, 2);
  });

  it('lists route subscriptions with subs=1 and subs=detail', async () => {
    const z = await get(a, '/routez?subs=1');
    const toB = (z.routes as Record<string, unknown>[]).find((r) => r.remote_id === b.server.id)!;
    assert.deepEqual((toB.subscriptions_list as string[]).sort(), ['mon.plain', 'mon.q']);
    const d = await get(a, '/routez?subs=detail');
    const detail = (d.routes as Record<string, unknown>[]).find((r) => r.remote_id === b.server.id)!
      .subscriptions_list_detail as Record<string, unknown>[];
    const q = detail.find((s) => s.subject === 'mon.q')!;
    assert.deepEqual(q, {
      subject: 'mon.q',
      qgroup: 'grp',
      sid: '$G mon.q grp',
      msgs: 0,
      cid: q.cid,
    });
    const plain = detail.find((s) => s.subject === 'mon.plain')!;
    assert.equal(plain.sid, '$G mon.plain');
  });

  it('rejects a bad subs value as the reference does', async () => {
    const res = await fetch(`http://127.0.0.1:${a.httpPort}/routez?subs=maybe`);
    assert.equal(res.status, 400);
  });

  it('shows the cluster and the route counts in /varz', async () => {
    const v = await get(a, '/varz');
    assert.deepEqual(v.cluster, {
      name: CLUSTER,
      addr: '127.0.0.1',
      cluster_port: a.cluster.port,
      auth_timeout: 2,
      tls_timeout: 2,
    });
    assert.equal(v.routes, 2);
    assert.equal(v.remotes, 2);
  });
});
