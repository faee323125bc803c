// Malformed API input: random JSON of every shape, wrong types, absurd numbers, bad
// names, a body near max_payload, odd Expected-* headers. Every request that the
// reference answers gets a JSON answer with its response type; nothing crashes, and the
// stream made before holds its messages.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { connect, headers, type NatsConnection } from 'nats';
import { withServer } from '../helpers/server.js';

const SUBJECTS = [
  '$JS.API.INFO',
  '$JS.API.STREAM.CREATE.F',
  '$JS.API.STREAM.UPDATE.F',
  '$JS.API.STREAM.INFO.F',
  '$JS.API.STREAM.NAMES',
  '$JS.API.STREAM.LIST',
  '$JS.API.STREAM.PURGE.G',
  '$JS.API.STREAM.MSG.GET.F',
  '$JS.API.STREAM.MSG.DELETE.G',
  '$JS.API.CONSUMER.CREATE.F',
  '$JS.API.CONSUMER.CREATE.F.c.f.x',
  '$JS.API.CONSUMER.DURABLE.CREATE.F.c',
  '$JS.API.CONSUMER.INFO.F.c',
  '$JS.API.CONSUMER.NAMES.F',
  '$JS.API.CONSUMER.LIST.F',
];

const enc = new TextEncoder();

async function ask(nc: NatsConnection, subject: string, body: Uint8Array): Promise<unknown> {
  const m = await nc.request(subject, body, { timeout: 2000 });
  return JSON.parse(new TextDecoder().decode(m.data)) as unknown;
}

/** Objects whose keys are the API's field names and whose values are anything. */
const fieldsArb = fc.dictionary(
  fc.constantFrom(
    'name',
    'subjects',
    'max_msgs',
    'max_age',
    'max_msg_size',
    'retention',
    'storage',
    'num_replicas',
    'duplicate_window',
    'seq',
    'keep',
    'filter',
    'last_by_subj',
    'next_by_subj',
    'offset',
    'subject',
    'stream_name',
    'config',
    'deleted_details',
    'subjects_filter',
    'no_erase',
  ),
  fc.oneof(
    fc.jsonValue(),
    fc.constantFrom(-1, 0, 1.5, 2 ** 63, -(2 ** 63), 1e300, 'F', 'a.>', '*', '', null),
  ),
);

test('random and hostile API bodies get JSON answers and leave the data intact', async () => {
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({
        name: 'G',
        subjects: ['g.>'],
        storage: 'memory' as never,
        deny_purge: true,
        deny_delete: true,
      });
      const js = nc.jetstream();
      for (let i = 0; i < 3; i++) await js.publish(`g.${i}`);
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...SUBJECTS),
          fc.oneof(
            fieldsArb.map((o) => JSON.stringify(o)),
            fc.jsonValue().map((v) => JSON.stringify(v)),
            fc.string(),
          ),
          async (subject, body) => {
            const answer = (await ask(nc, subject, enc.encode(body))) as Record<string, unknown>;
            assert.equal(typeof answer.type, 'string', `${subject} ${body}`);
          },
        ),
        { numRuns: 300 },
      );
      // Near max_payload, deeply nested, and names the API refuses.
      const big = JSON.stringify({ name: 'F', description: 'x'.repeat(900_000) });
      const r1 = (await ask(nc, '$JS.API.STREAM.CREATE.F', enc.encode(big))) as {
        error: { description: string };
      };
      assert.equal(r1.error.description, 'stream description is too long, maximum allowed is 4096');
      const deep = '['.repeat(5000) + ']'.repeat(5000);
      assert.equal(
        (
          (await ask(nc, '$JS.API.STREAM.CREATE.F', enc.encode(deep))) as {
            error: { err_code: number };
          }
        ).error.err_code,
        10025,
      );
      for (const bad of ['a.b', 'a*', 'a>', 'a b']) {
        const r = (await ask(
          nc,
          '$JS.API.STREAM.CREATE.X',
          enc.encode(JSON.stringify({ name: bad })),
        )) as { error: { err_code: number } };
        assert.ok([10056, 10052].includes(r.error.err_code), bad);
      }
      // Odd Expected-* header values on a publish.
      for (const [k, v] of [
        ['Nats-Expected-Last-Sequence', '-1'],
        ['Nats-Expected-Last-Sequence', '99999999999999999999999'],
        ['Nats-Expected-Last-Subject-Sequence', 'x'],
        ['Nats-Rollup', 'bogus'],
        ['Nats-Msg-Id', ''],
      ] as const) {
        const h = headers();
        h.set(k, v);
        await nc
          .request('g.9', enc.encode('x'), { headers: h, timeout: 2000 })
          .catch(() => undefined);
      }
      const info = await jsm.streams.info('G');
      assert.ok(info.state.messages >= 3);
      assert.equal(info.state.first_seq, 1);
      assert.equal((await jsm.getAccountInfo()).streams >= 1, true);
    } finally {
      await nc.close();
    }
  });
});

test("consumer policies as the reference's enums read them: null and other case refused, deliver 'undefined' is all", async () => {
  // Recorded from nats-server 2.9.10 -js: Go hands null to an enum's UnmarshalJSON, which
  // knows only its exact lower-case words (and DeliverPolicy "undefined").
  const invalid = {
    type: 'io.nats.jetstream.api.v1.consumer_create_response',
    error: { code: 400, err_code: 10025, description: 'invalid JSON' },
  };
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      await ask(nc, '$JS.API.STREAM.CREATE.E', enc.encode('{"name":"E","subjects":["e.>"]}'));
      const create = (name: string, cfg: object): Promise<unknown> =>
        ask(
          nc,
          `$JS.API.CONSUMER.DURABLE.CREATE.E.${name}`,
          enc.encode(JSON.stringify({ stream_name: 'E', config: { durable_name: name, ...cfg } })),
        );
      assert.deepEqual(await create('c1', { ack_policy: null }), invalid);
      assert.deepEqual(await create('c2', { deliver_policy: null }), invalid);
      assert.deepEqual(await create('c3', { replay_policy: null }), invalid);
      assert.deepEqual(await create('c5', { ack_policy: 'Explicit' }), invalid);
      const made = (await create('c4', { deliver_policy: 'undefined' })) as {
        config: Record<string, unknown>;
      };
      assert.deepEqual(made.config, {
        durable_name: 'c4',
        deliver_policy: 'all',
        ack_policy: 'none',
        max_deliver: -1,
        replay_policy: 'instant',
        max_waiting: 512,
        num_replicas: 0,
      });
    } finally {
      await nc.close();
    }
  });
});

test("a pull request nested past Go's depth limit gets its decoder's error, as the reference", async () => {
  // Recorded from nats-server 2.9.10 -js: its json.Unmarshal stops at 10,000 open objects
  // and arrays (the body's own object counts); a body 20,000 deep must not overflow
  // wirebus's stack either.
  const nested = (depth: number): Uint8Array =>
    enc.encode('{"batch":' + '['.repeat(depth) + ']'.repeat(depth) + '}');
  const tooDeep = "400 Bad Request - invalid character '[' exceeded max depth";
  const notAnInt =
    '400 Bad Request - json: cannot unmarshal array into Go struct field JSApiConsumerGetNextRequest.batch of type int';
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      await ask(nc, '$JS.API.STREAM.CREATE.D', enc.encode('{"name":"D","subjects":["d"]}'));
      await ask(
        nc,
        '$JS.API.CONSUMER.DURABLE.CREATE.D.p',
        enc.encode('{"stream_name":"D","config":{"durable_name":"p","ack_policy":"explicit"}}'),
      );
      for (const [depth, status] of [
        [20000, tooDeep],
        [10000, tooDeep],
        [9999, notAnInt],
      ] as const) {
        const m = await nc.request('$JS.API.CONSUMER.MSG.NEXT.D.p', nested(depth), {
          timeout: 2000,
        });
        assert.equal(`${m.headers?.code} ${m.headers?.description}`, status, `depth ${depth}`);
      }
    } finally {
      await nc.close();
    }
  });
});
