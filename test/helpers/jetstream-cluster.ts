// Three nats-server nodes (Debian's, as .ci/run installs it) with JetStream
// clustering on loopback, or one `bin/wirebus -js` (wirebus's own JetStream): free
// ports, a temporary store directory each. A node can be killed with SIGKILL and
// started again on the same ports and directory.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, StorageType } from 'nats';
import { freePort } from './process.js';

/** The repository root (bin/wirebus): this file runs as dist/test/helpers/. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Why JetStream cluster tests cannot run here, or undefined when they can. */
export function skipWithoutNatsServer(): string | undefined {
  const r = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? undefined : 'nats-server is not installed (.ci/run installs it)';
}

export interface JsNode {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  /** nats-server's monitoring port (/connz...); 0 for the wirebus engine. */
  readonly http: number;
  child: ChildProcess | null;
  log: string;
}

export class JetStreamCluster {
  readonly nodes: JsNode[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'wirebus-jsc-'));
  private routePorts: number[] = [];

  /** The client URLs of every node, comma-separated (what `-ns` takes). */
  get urls(): string {
    return this.nodes.map((n) => n.url).join(',');
  }

  /**
   * `size` nats-server nodes with JetStream clustering (one: a standalone JetStream
   * server); or, with `engine` 'wirebus',
   * one `bin/wirebus -js` (wirebus's own JetStream, a single engine node).
   */
  static async start(
    size = 3,
    engine: 'nats-server' | 'wirebus' = 'nats-server',
  ): Promise<JetStreamCluster> {
    const c = new JetStreamCluster(engine);
    if (engine === 'wirebus') size = 1;
    for (let i = 0; i < size; i++) {
      const port = await freePort();
      c.nodes.push({
        name: `js${i + 1}`,
        port,
        url: `nats://127.0.0.1:${port}`,
        http: engine === 'wirebus' ? 0 : await freePort(),
        child: null,
        log: '',
      });
      c.routePorts.push(await freePort());
    }
    for (let i = 0; i < size; i++) c.run(i);
    try {
      await c.waitForJetStream();
    } catch (err) {
      await c.stop();
      throw err;
    }
    return c;
  }

  private constructor(private readonly engine: 'nats-server' | 'wirebus') {}

  private run(i: number): void {
    const node = this.nodes[i]!;
    if (this.engine === 'wirebus') {
      this.watch(
        node,
        spawn(
          process.execPath,
          [
            'bin/wirebus',
            '-a',
            '127.0.0.1',
            '-p',
            String(node.port),
            '-js',
            '-sd',
            join(this.dir, node.name),
          ],
          { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
        ),
      );
      return;
    }
    const routes = this.routePorts
      .filter((_, j) => j !== i)
      .map((p) => `nats-route://127.0.0.1:${p}`);
    const conf = join(this.dir, `${node.name}.conf`);
    writeFileSync(
      conf,
      [
        `server_name: ${node.name}`,
        `listen: 127.0.0.1:${node.port}`,
        `http: 127.0.0.1:${node.http}`,
        `jetstream { store_dir: "${join(this.dir, node.name)}", max_memory_store: 64MB, max_file_store: 1GB }`,
        // One node: a standalone JetStream server (a cluster of one does not start).
        this.nodes.length === 1
          ? ''
          : `cluster { name: wbjs, listen: 127.0.0.1:${this.routePorts[i]!}, routes: [${routes.join(', ')}] }`,
      ].join('\n'),
    );
    this.watch(node, spawn('nats-server', ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] }));
  }

  private watch(node: JsNode, child: ChildProcess): void {
    running.add(child);
    node.child = child;
    node.log = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (t: string) => {
      node.log += t;
    });
    child.once('exit', () => {
      running.delete(child);
      if (node.child === child) node.child = null;
    });
  }

  /** Resolves once the JetStream API answers (a meta leader is elected). */
  async waitForJetStream(limitMs = 20_000): Promise<void> {
    const end = Date.now() + limitMs;
    for (;;) {
      try {
        const nc = await connect({
          servers: this.nodes.filter((n) => n.child !== null).map((n) => n.url),
        });
        try {
          const jsm = await nc.jetstreamManager({ timeout: 1000 });
          await jsm.getAccountInfo();
          // A meta leader answers before every peer has joined it; until they have, a
          // replicated stream gets "no suitable peers for placement" (seen under load).
          const replicas = this.nodes.filter((n) => n.child !== null).length;
          if (replicas > 1) {
            await jsm.streams.add({
              name: 'WIREBUS_TEST_READY',
              subjects: ['wirebus.test.ready'],
              num_replicas: replicas,
              storage: StorageType.Memory,
            });
            await jsm.streams.delete('WIREBUS_TEST_READY');
          }
          return;
        } finally {
          await nc.close();
        }
      } catch (err) {
        // Not listening yet, or no JetStream meta leader yet.
        if (Date.now() > end) throw new Error(`JetStream cluster not ready: ${String(err)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** kill -9 of node i. */
  async kill(i: number): Promise<void> {
    const child = this.nodes[i]!.child;
    if (child === null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  /** Starts node i again (same ports, same store directory). */
  restart(i: number): void {
    this.run(i);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.nodes.map(async (n) => {
        const child = n.child;
        if (child === null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const guard = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(guard);
      }),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}
