// Channel names with `/` on the SQL store, as nats-streaming-server 0.25.3 treats
// them (util.IsChannelNameValid refuses `/`; the SQL store keeps names as text, so
// nothing else in it cares). Found by running the reference on the same databases:
// - publishing to `a/b` or `x.y/z` is refused with "stan: invalid publish request",
//   subscribing with "stan: invalid subject", and no Channels row is written;
// - a Channels row whose name has `/` (written before the rule, or by hand) is
//   recovered: listed by /streaming/channelsz with its messages, counted, kept in the
//   database, and still refused to publishers and subscribers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DRIVERS, queryDb, skipWithoutDriver, sqlDatabase } from './sql-databases.js';
import { getJson, publish, subscribeError, withStan, type StanEnv } from './stan.js';

interface ChannelInfo {
  readonly name: string;
  readonly msgs: number;
  readonly first_seq: number;
  readonly last_seq: number;
}

async function refusedWithSlash(env: StanEnv, name: string): Promise<void> {
  const sc = await env.connect(`probe-${name.length}`);
  await assert.rejects(publish(sc, name, 'hi'), /^Error: stan: invalid publish request$/);
  assert.equal(
    await subscribeError(sc, name, sc.subscriptionOptions().setDeliverAllAvailable()),
    'stan: invalid subject',
  );
}

for (const driver of DRIVERS) {
  const skip = await skipWithoutDriver(driver);
  describe(`channel names with "/" on SQL (${driver})`, { skip }, () => {
    it('are refused to clients, and nothing is written', async () => {
      const db = await sqlDatabase(driver);
      await withStan({ storeType: 'SQL', sqlDriver: driver, sqlSource: db.source }, async (env) => {
        await refusedWithSlash(env, 'a/b');
        await refusedWithSlash(env, 'x.y/z');
      });
      assert.deepEqual(await queryDb(driver, db.source, 'SELECT name FROM Channels'), []);
    });

    it('a channel stored with "/" in its name is served as the reference serves it', async () => {
      const db = await sqlDatabase(driver);
      const options = { storeType: 'SQL', sqlDriver: driver, sqlSource: db.source } as const;
      await withStan(options, async (env) => {
        const sc = await env.connect('seed');
        for (const m of ['m0', 'm1', 'm2']) await publish(sc, 'old.one', m);
        await publish(sc, 'old.two', 'x');
      });
      await queryDb(
        driver,
        db.source,
        "UPDATE Channels SET name = 'old/one' WHERE name = 'old.one'",
      );
      await withStan(options, async (env) => {
        const z = await getJson(`${env.http}/streaming/channelsz?subs=1`);
        const channels = (z.channels as ChannelInfo[]).map((c) => ({
          name: c.name,
          msgs: c.msgs,
          first_seq: c.first_seq,
          last_seq: c.last_seq,
        }));
        assert.deepEqual(channels, [
          { name: 'old.two', msgs: 1, first_seq: 1, last_seq: 1 },
          { name: 'old/one', msgs: 3, first_seq: 1, last_seq: 3 },
        ]);
        assert.equal((await getJson(`${env.http}/streaming/storez`)).total_msgs, 4);
        await refusedWithSlash(env, 'old/one');
      });
      const rows = await queryDb(
        driver,
        db.source,
        "SELECT seq FROM Messages WHERE id = (SELECT id FROM Channels WHERE name = 'old/one') ORDER BY seq",
      );
      assert.deepEqual(
        rows.map((r) => Number(r.seq)),
        [1, 2, 3],
      );
    });
  });
}
