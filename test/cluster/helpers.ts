// Clusters for tests: embedded wirebus nodes on loopback, the reference server
// (`nats-server`) as a child process, and waits for the mesh and for interest to
// spread. Everything a test starts is stopped by its cleanup, even when it fails.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'nats';
import { startServer, type RunningServer, type StartOptions } from '../../src/index.js';
import type { ClusterOptions } from '../../src/cluster/options.js';
import { freePort } from '../helpers/process.js';

export const CLUSTER = 'wbc';

export type Node = RunningServer & { readonly cluster: NonNullable<RunningServer['cluster']> };

/** Starts an embedded node of cluster `wbc` on loopback with free ports. */
export async function startNode(
  cluster: Partial<ClusterOptions> = {},
  options: StartOptions = {},
): Promise<Node> {
  const s = await startServer({
    host: '127.0.0.1',
    port: 0,
    ...options,
    cluster: { name: CLUSTER, host: '127.0.0.1', port: 0, ...cluster },
  });
  if (s.cluster === null) throw new Error('no cluster layer');
  return s as Node;
}

/** `nats-route://127.0.0.1:<route port>` of a node. */
export function routeUrl(n: { readonly cluster: { readonly port: number } }): string {
  return `nats-route://127.0.0.1:${n.cluster.port}`;
}

/** Polls until the check passes; throws with `what` after ms. */
export async function waitFor(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Polls an async check. */
export async function waitForAsync(
  what: string,
  check: () => Promise<boolean>,
  ms = 5000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until every node has a route to every other one. */
export async function waitMesh(nodes: readonly Node[], others = 0, ms = 8000): Promise<void> {
  const want = nodes.length - 1 + others;
  await waitFor(
    `a full mesh of ${want + 1} servers`,
    () => nodes.every((n) => n.cluster.routes.size === want),
    ms,
  );
}

/** Whether a node holds a route subscription (another server's interest) on subject. */
export function hasRouteInterest(
  n: Node,
  subject: string,
  queue: string | null = null,
  account = '$G',
): boolean {
  const acc = n.server.accounts.get(account);
  if (acc === undefined) return false;
  const r = acc.sublist.match(subject);
  if (queue === null) return r.psubs.some((s) => s.route !== null);
  return r.qsubs.some((g) => g.some((s) => s.route !== null && s.queue === queue));
}

/** How many other servers a node knows to want subject (plain subscriptions). */
export function routeInterestCount(n: Node, subject: string, account = '$G'): number {
  const acc = n.server.accounts.get(account);
  if (acc === undefined) return 0;
  const routes = new Set<unknown>();
  for (const s of acc.sublist.match(subject).psubs) if (s.route !== null) routes.add(s.route);
  return routes.size;
}

/** Waits until each node knows of remote interest on subject. */
export async function waitRouteInterest(
  nodes: readonly Node[],
  subject: string,
  queue: string | null = null,
  account = '$G',
): Promise<void> {
  await waitFor(`interest on ${subject} at every node`, () =>
    nodes.every((n) => hasRouteInterest(n, subject, queue, account)),
  );
}

/** Closes every node, ignoring the ones already closed. */
export async function closeAll(nodes: readonly (RunningServer | null)[]): Promise<void> {
  await Promise.all(nodes.map((n) => (n === null ? Promise.resolve() : n.close())));
}

// ---- the reference server ----------------------------------------------------------

/** Why the reference cannot run here, or null when `nats-server` is installed. */
export function referenceMissing(): string | null {
  const r = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) {
    return 'nats-server (the reference server) is not installed; `apt-get install nats-server` (.ci/run does) to run the mixed-cluster tests';
  }
  return null;
}

export interface ReferenceServer {
  readonly port: number;
  readonly clusterPort: number;
  readonly httpPort: number;
  readonly url: string;
  readonly routeUrl: string;
  log(): string;
  /** Its /routez, /varz ... as JSON. */
  monitor(path: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `nats-server` in cluster `wbc` on loopback; resolves once its route port listens. */
export async function startReference(
  routes: readonly string[] = [],
  extraArgs: readonly string[] = [],
  /** Route credentials it requires (`--cluster nats://user:pass@...`). */
  auth: { user: string; password: string } | null = null,
): Promise<ReferenceServer> {
  const port = await freePort();
  const clusterPort = await freePort();
  const httpPort = await freePort();
  const args = [
    '-a',
    '127.0.0.1',
    '-p',
    String(port),
    '-m',
    String(httpPort),
    '--cluster',
    `nats://${auth === null ? '' : `${auth.user}:${auth.password}@`}127.0.0.1:${clusterPort}`,
    '--cluster_name',
    CLUSTER,
    ...(routes.length > 0 ? ['--routes', routes.join(',')] : []),
    ...extraArgs,
  ];
  const child = spawn('nats-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      running.delete(child);
      resolve();
    });
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const guard = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(guard);
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`nats-server not ready:\n${stderr}`));
      }, 10_000);
      child.stderr.on('data', (text: string) => {
        stderr += text;
        if (stderr.includes('Listening for route connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`nats-server exited:\n${stderr}`));
      });
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    port,
    clusterPort,
    httpPort,
    url: `nats://127.0.0.1:${port}`,
    routeUrl: `nats-route://127.0.0.1:${clusterPort}`,
    log: () => stderr,
    monitor: async (path) => {
      const res = await fetch(`http://127.0.0.1:${httpPort}${path}`);
      return (await res.json()) as Record<string, unknown>;
    },
    stop,
  };
}

/** The route count the reference reports in /varz. */
export async function referenceRoutes(ref: ReferenceServer): Promise<number> {
  const v = await ref.monitor('/varz');
  return typeof v.routes === 'number' ? v.routes : -1;
}

/** Subjects the reference holds for its routes (its /routez?subs=1), per remote server id. */
export async function referenceRouteSubs(ref: ReferenceServer): Promise<Map<string, string[]>> {
  const r = await ref.monitor('/routez?subs=1');
  const out = new Map<string, string[]>();
  const routes = Array.isArray(r.routes) ? (r.routes as Record<string, unknown>[]) : [];
  for (const route of routes) {
    const list = Array.isArray(route.subscriptions_list)
      ? (route.subscriptions_list as string[])
      : [];
    out.set(String(route.remote_id), list);
  }
  return out;
}

/**
 * A message published on `from` reaches a subscriber on `to` across the routes,
 * once `from` has learnt the subscriber's interest.
 */
export async function expectCrossing(
  from: Node,
  to: Node,
  subject: string,
  text: string,
): Promise<void> {
  const pub = await connect({ servers: from.url });
  const sub = await connect({ servers: to.url });
  try {
    const got: string[] = [];
    sub.subscribe(subject, { callback: (_e, m) => got.push(m.string()) });
    await sub.flush();
    await waitRouteInterest([from], subject);
    pub.publish(subject, text);
    await pub.flush();
    await waitFor('the message', () => got.length === 1);
  } finally {
    await Promise.all([pub.close(), sub.close()]);
  }
}
