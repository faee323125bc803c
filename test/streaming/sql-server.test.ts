// A streaming server on the SQL store: what clients see, and a restart of a lone
// server on the same database recovering everything, as the file store does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { skipWithoutPostgres, testPostgres } from '../helpers/postgres.js';
import {
  StartPosition,
  closeStan,
  getJson,
  publish,
  publishMany,
  subscribe,
  withStan,
  type StanMessage,
} from './stan.js';

const skip = await skipWithoutPostgres();

async function database(): Promise<string> {
  const pg = await testPostgres();
  if (typeof pg === 'string') throw new Error(pg);
  return pg.createDatabase();
}

const sqlOptions = (source: string) =>
  ({ storeType: 'SQL', sqlDriver: 'postgres', sqlSource: source }) as const;

describe('streaming on the SQL store', { skip }, () => {
  it('publishes, delivers, and reports type SQL in storez', async () => {
    const source = await database();
    await withStan(sqlOptions(source), async (env) => {
      const sc = await env.connect('me');
      const opts = sc.subscriptionOptions().setDeliverAllAvailable();
      await publishMany(sc, 'foo', 20);
      const got = await subscribe(sc, 'foo', opts);
      await got.waitFor(20);
      assert.deepEqual(
        got.seqs(),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      const storez = await getJson(env.http + '/streaming/storez');
      assert.equal(storez.type, 'SQL');
      assert.equal(storez.total_msgs, 20);
      await closeStan(sc);
    });
  });

  it('a restarted server recovers channels, messages, clients and durables', async () => {
    const source = await database();
    // First run: 30 messages, a durable that acked the first 10 and went offline.
    await withStan(sqlOptions(source), async (env) => {
      const sc = await env.connect('me');
      await publishMany(sc, 'foo', 30);
      await publish(sc, 'bar', 'one');
      const opts = sc
        .subscriptionOptions()
        .setDurableName('dur')
        .setManualAckMode(true)
        .setMaxInFlight(10)
        .setStartAt(StartPosition.FIRST);
      const acked: number[] = [];
      const dur = await subscribe(sc, 'foo', opts, undefined, (m: StanMessage) => {
        if (m.getSequence() <= 10) {
          m.ack();
          acked.push(m.getSequence());
        }
      });
      await dur.waitFor(20);
      assert.equal(acked.length, 10);
      // Acks are written with the next batch: give it a turn, then close cleanly.
      await new Promise((r) => setTimeout(r, 100));
      await closeStan(sc);
    });
    // Second run on the same database.
    await withStan(sqlOptions(source), async (env) => {
      const channels = await getJson(env.http + '/streaming/channelsz?subs=1');
      assert.equal(channels.total, 2);
      const foo = await getJson(env.http + '/streaming/channelsz?channel=foo&subs=1');
      assert.equal(foo.msgs, 30);
      assert.equal(foo.first_seq, 1);
      assert.equal(foo.last_seq, 30);
      const subs = foo.subscriptions as { durable_name: string; is_offline: boolean }[];
      assert.equal(subs.length, 1);
      assert.equal(subs[0]!.durable_name, 'dur');
      assert.equal(subs[0]!.is_offline, true);
      // The durable resumes: unacked 11..20 again, then 21..30; never 1..10.
      const sc = await env.connect('me');
      const opts = sc
        .subscriptionOptions()
        .setDurableName('dur')
        .setManualAckMode(true)
        .setMaxInFlight(100);
      const dur = await subscribe(sc, 'foo', opts, undefined, (m) => {
        m.ack();
      });
      await dur.waitFor(20);
      const seqs = [...new Set(dur.seqs())].sort((a, b) => a - b);
      assert.deepEqual(
        seqs,
        Array.from({ length: 20 }, (_, i) => i + 11),
      );
      await publish(sc, 'foo', 'after');
      await dur.waitFor(21);
      assert.equal(dur.msgs[dur.msgs.length - 1]!.getSequence(), 31);
      await closeStan(sc);
    });
  });
});
