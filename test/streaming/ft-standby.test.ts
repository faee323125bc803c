// A fault-tolerance standby, in process: while another server holds the store lock it
// serves no streaming client and reads nothing, and monitoring says so; once the lock
// is free it becomes the active server and serves.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SqlStore } from '../../src/streaming/store/sql/index.js';
import { skipWithoutPostgres, testPostgres } from '../helpers/postgres.js';
import { closeStan, eventually, getJson, publish, sleep, withStan } from './stan.js';

const skip = await skipWithoutPostgres();

async function isFTActive(http: string): Promise<number> {
  return (await fetch(http + '/streaming/isFTActive')).status;
}

describe('fault-tolerance standby', { skip }, () => {
  it('serves nothing while another server holds the lock, then takes over', async () => {
    const pg = await testPostgres();
    if (typeof pg === 'string') throw new Error(pg);
    const source = await pg.createDatabase();
    // The "other server": holds the lock (and keeps it alive) until closed.
    const holder = new SqlStore({ source, lockOwner: 'other-server' });
    assert.equal(await holder.tryExclusiveLock(), true);
    try {
      await withStan(
        { storeType: 'SQL', sqlDriver: 'postgres', sqlSource: source, ftGroup: 'grp' },
        async (env) => {
          assert.equal(env.streaming.state, 'FT_STANDBY');
          await sleep(2000);
          assert.equal(env.streaming.state, 'FT_STANDBY');
          assert.equal(await isFTActive(env.http), 204);
          const serverz = await getJson(env.http + '/streaming/serverz');
          assert.equal(serverz.state, 'FT_STANDBY');
          assert.equal(serverz.cluster_id, '');
          // No answer to a connect request: the standby does not listen yet.
          await assert.rejects(env.connect('early', { connectTimeout: 500 }));

          await holder.close();
          await eventually(() => env.streaming.state === 'FT_ACTIVE', 'active', 5000);
          assert.equal(await isFTActive(env.http), 200);
          const serverzActive = await getJson(env.http + '/streaming/serverz');
          assert.equal(serverzActive.cluster_id, 'test-cluster');
          const sc = await env.connect('late');
          await publish(sc, 'foo', 'hello');
          await closeStan(sc);
        },
      );
    } finally {
      // Closing twice is harmless.
      await holder.close();
    }
  });
});
