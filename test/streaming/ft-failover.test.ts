// Fault tolerance with real processes: a core NATS server, and two
// `bin/wirebus --ft_group grp -ns <nats>` sharing one store, the SQL database or a
// FILE directory (the same scenario runs on both). The active
// one is killed with kill -9 while a client publishes with acks and a durable
// consumes; the standby must take over within a few seconds, and every acknowledged
// message and the durable's position must be there. Meanwhile isFTActive is polled
// on both servers: they must never both answer 200.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { skipWithoutPostgres, testPostgres } from '../helpers/postgres.js';
import { freePort, startWirebus, type WirebusProcess } from '../helpers/process.js';
import {
  closeStan,
  connect,
  eventually,
  getJson,
  kill,
  sleep,
  subscribe,
  withTimeout,
  type Stan,
} from './stan.js';

const pgClient = pg.Client;

const skip = await skipWithoutPostgres();

const procs: WirebusProcess[] = [];
after(async () => {
  for (const p of procs) await p.stop();
});

interface FtServer {
  readonly proc: WirebusProcess;
  readonly http: string;
}

async function ftServer(natsUrl: string, storeArgs: readonly string[]): Promise<FtServer> {
  const httpPort = await freePort();
  const proc = await startWirebus(
    await freePort(),
    ['-m', String(httpPort), ...storeArgs, '--ft_group', 'grp', '-ns', natsUrl],
    'Starting in standby mode',
  );
  procs.push(proc);
  return { proc, http: `http://127.0.0.1:${httpPort}` };
}

/** 200 or 204; 0 when the server does not answer (dead). */
async function ftStatus(s: FtServer): Promise<number> {
  try {
    const res = await fetch(s.http + '/streaming/isFTActive', {
      signal: AbortSignal.timeout(1000),
    });
    return res.status;
  } catch {
    return 0;
  }
}

/** Publishes `payload` until a PubAck without error comes back (at-least-once). */
async function publishAcked(sc: Stan, payload: string): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      sc.publish('orders', payload, (err) => {
        resolve(err === undefined || err === null);
      });
    });
    if (ok) return;
    await sleep(100);
  }
}

async function failover(storeArgs: readonly string[]): Promise<void> {
  const core = await startWirebus(await freePort());
  procs.push(core);

  const a = await ftServer(core.url, storeArgs);
  await eventually(async () => (await ftStatus(a)) === 200, 'A active', 10_000);
  const b = await ftServer(core.url, storeArgs);
  await sleep(2000);
  assert.equal(await ftStatus(b), 204, 'B is a standby while A lives');
  const bz = await getJson(b.http + '/streaming/serverz');
  assert.equal(bz.state, 'FT_STANDBY');
  assert.equal((await getJson(a.http + '/streaming/serverz')).state, 'FT_ACTIVE');

  // Never two actives: poll both all along.
  let bothActive = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const [sa, sb] = await Promise.all([ftStatus(a), ftStatus(b)]);
      if (sa === 200 && sb === 200) bothActive++;
      await sleep(25);
    }
  })();

  const opts = { ackTimeout: 1000, stanPingInterval: 1000, stanMaxPingOut: 100 };
  const pub = await connect(core.url, 'test-cluster', 'pub', opts);
  const consumer = await connect(core.url, 'test-cluster', 'consumer', opts);
  const received = new Map<string, number>();
  const dur = await subscribe(
    consumer,
    'orders',
    consumer
      .subscriptionOptions()
      .setDurableName('dur')
      .setManualAckMode(true)
      .setMaxInFlight(20)
      .setAckWait(1000)
      .setDeliverAllAvailable(),
    undefined,
    (m) => {
      const payload = String(m.getData());
      received.set(payload, (received.get(payload) ?? 0) + 1);
      m.ack();
    },
  );

  // 200 messages the durable has consumed and acked well before the kill, then 400
  // more, 10 in flight, with the active server killed after 300 acks.
  const acked = new Set<string>();
  let next = 0;
  let killedAt = 0;
  const worker = (upTo: number) => async (): Promise<void> => {
    while (next < upTo) {
      const payload = `order-${++next}`;
      await publishAcked(pub, payload);
      acked.add(payload);
      if (acked.size === 300 && killedAt === 0) {
        killedAt = Date.now();
        a.proc.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker(200)));
  await eventually(() => received.size >= 200, 'the first 200 consumed');
  await sleep(1000);
  let stall: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(Array.from({ length: 10 }, worker(600))),
    new Promise((_, reject) => {
      stall = setTimeout(() => {
        reject(new Error(`publishing stalled at ${acked.size} acks`));
      }, 40_000);
    }),
  ]);
  clearTimeout(stall);
  assert.ok(killedAt > 0);
  await eventually(async () => (await ftStatus(b)) === 200, 'B active', 10_000);
  const failover = Date.now() - killedAt;
  process.stderr.write(`failover: standby active ${failover} ms after kill -9\n`);
  assert.ok(failover < 10_000, `failover took ${failover} ms`);
  assert.equal((await getJson(b.http + '/streaming/serverz')).state, 'FT_ACTIVE');

  // The durable gets every acknowledged message; its position survived: what was
  // in flight at the kill comes again (at-least-once), never the first 200.
  await eventually(
    () => [...acked].every((p) => received.has(p)),
    'the durable received every acknowledged message',
    15_000,
  );
  let duplicates = 0;
  for (const n of received.values()) duplicates += n - 1;
  assert.ok(duplicates < 200, `${duplicates} redeliveries: the durable lost its position`);
  for (let i = 1; i <= 200; i++) {
    assert.equal(received.get(`order-${i}`), 1, `order-${i} was delivered again`);
  }

  // Every acknowledged message is stored on the new active server.
  const reader = await connect(core.url, 'test-cluster', 'reader', opts);
  const all = await subscribe(
    reader,
    'orders',
    reader.subscriptionOptions().setDeliverAllAvailable(),
  );
  const channel = await getJson(b.http + '/streaming/channelsz?channel=orders');
  const total = Number(channel.msgs);
  assert.ok(total >= 600, `${total} messages stored`);
  await all.waitFor(total, 10_000);
  const stored = new Set(all.msgs.map((m) => String(m.getData())));
  for (const p of acked) assert.ok(stored.has(p), `${p} was acknowledged but is missing`);

  polling = false;
  await poller;
  assert.equal(bothActive, 0, 'both servers answered isFTActive 200 at once');
  dur.sub.removeAllListeners('message');
  await closeStan(reader);
  kill(pub);
  kill(consumer);
}

describe('fault tolerance: kill -9 of the active server', () => {
  it('SQL store: the standby takes over, nothing acknowledged is lost', { skip }, async () => {
    const pg = await testPostgres();
    if (typeof pg === 'string') throw new Error(pg);
    const source = await pg.createDatabase();
    await failover(['-st', 'SQL', '--sql_driver', 'postgres', '--sql_source', source]);
  });

  it('an active server whose lock is taken stops serving and exits', { skip }, async () => {
    const pg = await testPostgres();
    if (typeof pg === 'string') throw new Error(pg);
    const source = await pg.createDatabase();
    const core = await startWirebus(await freePort());
    procs.push(core);
    const a = await ftServer(core.url, [
      '-st',
      'SQL',
      '--sql_driver',
      'postgres',
      '--sql_source',
      source,
    ]);
    await eventually(async () => (await ftStatus(a)) === 200, 'A active', 10_000);
    const exited = new Promise<number | null>((resolve) => a.proc.child.once('exit', resolve));
    const admin = new pgClient({ connectionString: source });
    await admin.connect();
    try {
      await admin.query("UPDATE StoreLock SET id = 'thief', tick = 1");
    } finally {
      await admin.end();
    }
    assert.equal(await withTimeout(exited, 'the exit', 5000), 1);
    assert.match(a.proc.log(), /lost store lock.*aborting/);
  });

  it('FILE store: the standby takes over, nothing acknowledged is lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wirebus-ft-'));
    try {
      await failover(['-st', 'FILE', '--dir', dir]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
