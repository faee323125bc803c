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
import { coreServer, failover, ftStatus, stopAll, wirebusMember } from './ft-scenario.js';
import { eventually, withTimeout } from './stan.js';

const pgClient = pg.Client;

const skip = await skipWithoutPostgres();

after(stopAll);

describe('fault tolerance: kill -9 of the active server', () => {
  it('SQL store: the standby takes over, nothing acknowledged is lost', { skip }, async () => {
    const pg = await testPostgres();
    if (typeof pg === 'string') throw new Error(pg);
    const source = await pg.createDatabase();
    const member = wirebusMember([
      '-st',
      'SQL',
      '--sql_driver',
      'postgres',
      '--sql_source',
      source,
    ]);
    await failover(member, member);
  });

  it('an active server whose lock is taken stops serving and exits', { skip }, async () => {
    const pg = await testPostgres();
    if (typeof pg === 'string') throw new Error(pg);
    const source = await pg.createDatabase();
    const core = await coreServer();
    const a = await wirebusMember([
      '-st',
      'SQL',
      '--sql_driver',
      'postgres',
      '--sql_source',
      source,
    ])(core.url);
    await eventually(async () => (await ftStatus(a)) === 200, 'A active', 10_000);
    const exited = new Promise<number | null>((resolve) => a.child.once('exit', resolve));
    const admin = new pgClient({ connectionString: source });
    await admin.connect();
    try {
      await admin.query("UPDATE StoreLock SET id = 'thief', tick = 1");
    } finally {
      await admin.end();
    }
    assert.equal(await withTimeout(exited, 'the exit', 5000), 1);
    assert.match(a.log(), /lost store lock.*aborting/);
  });

  it('FILE store: the standby takes over, nothing acknowledged is lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wirebus-ft-'));
    try {
      const member = wirebusMember(['-st', 'FILE', '--dir', dir]);
      await failover(member, member);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
