// The database going away and coming back under a streaming server on the SQL store:
// publishes are refused with a clear error (never acknowledged without being
// committed), and the server recovers by itself once the database is back. This
// file stops its PostgreSQL, so it runs alone in its own process (and cluster).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { skipWithoutPostgres, testPostgres } from '../helpers/postgres.js';
import { closeStan, eventually, getJson, publish, sleep, subscribe, withStan } from './stan.js';

const pgOrReason = await testPostgres();
const controllable =
  (await skipWithoutPostgres()) ||
  (typeof pgOrReason !== 'string' && !pgOrReason.controllable
    ? 'WIREBUS_TEST_PG is set: the tests cannot stop that server'
    : false);

/** The PubAck: '' when acknowledged, else its error text. */
async function tryPublish(sc: Parameters<typeof publish>[0], data: string): Promise<string> {
  try {
    await publish(sc, 'foo', data);
    return '';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

describe('SQL store: the database goes away and comes back', { skip: controllable }, () => {
  it('refuses publishes while it is gone, then recovers', async () => {
    if (typeof pgOrReason === 'string') throw new Error(pgOrReason);
    const pg = pgOrReason;
    const source = await pg.createDatabase();
    await withStan({ storeType: 'SQL', sqlDriver: 'postgres', sqlSource: source }, async (env) => {
      const sc = await env.connect('me', { ackTimeout: 5000 });
      const acked: string[] = [];
      for (let i = 1; i <= 10; i++) {
        assert.equal(await tryPublish(sc, `before-${i}`), '');
        acked.push(`before-${i}`);
      }
      pg.stop();
      try {
        // The batch that finds the database gone fails; later ones are refused at once.
        const first = await tryPublish(sc, 'lost-1');
        assert.match(first, /store/);
        const second = await tryPublish(sc, 'lost-2');
        assert.match(second, /^store unavailable: /);
        const serverz = await getJson(env.http + '/streaming/serverz');
        assert.equal(serverz.state, 'STANDALONE');
      } finally {
        pg.start();
      }
      // Back: publishing works again within a few retries.
      let error = 'not tried';
      await eventually(
        async () => {
          error = await tryPublish(sc, 'after-1');
          if (error !== '') await sleep(200);
          return error === '';
        },
        'publishes acknowledged again',
        15_000,
      );
      acked.push('after-1');
      for (let i = 2; i <= 5; i++) {
        assert.equal(await tryPublish(sc, `after-${i}`), '');
        acked.push(`after-${i}`);
      }
      // Everything acknowledged is stored (refused messages may or may not be).
      const all = await subscribe(sc, 'foo', sc.subscriptionOptions().setDeliverAllAvailable());
      const foo = await getJson(env.http + '/streaming/channelsz?channel=foo');
      await all.waitFor(Number(foo.msgs));
      const got = new Set(all.msgs.map((m) => String(m.getData())));
      for (const p of acked) assert.ok(got.has(p), `${p} was acknowledged but is missing`);
      await closeStan(sc);
    });
  });
});
