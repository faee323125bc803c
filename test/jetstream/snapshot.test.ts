// Stream snapshots and restores: the wire exchange is the reference's, step by step
// (fixtures/snapshot.json, recorded from nats-server 2.9.10 -js by capture-reference.ts);
// a wirebus snapshot restores into wirebus with every message at its sequence and time,
// and its consumers at their positions, from and to memory and file streams, across a
// restart; bad input gets the reference's errors. Mirrors and sources are refused with
// the reference's "stream configuration invalid" until they are implemented. A snapshot
// taken by nats-server restores into wirebus.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connect, headers, type NatsConnection } from 'nats';
import { startServer } from '../../src/index.js';
import { withServer } from '../helpers/server.js';
import { readFixture, type Answer } from './api-client.js';
import { request, runSnapshotScenario, snapshot, upload } from './snapshot-scenario.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function storeDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'wirebus-js-snapshot-'));
  dirs.push(d);
  return d;
}

const S = '$JS.API.STREAM.';
const C = '$JS.API.CONSUMER.';

async function json(
  nc: NatsConnection,
  subject: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const m = await request(nc, subject, body);
  assert.ok(m !== null, `no answer to ${subject}`);
  return JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown>;
}

/** Snapshots `stream`, deletes it and restores the bytes under `config`; the final answer. */
async function roundTrip(
  nc: NatsConnection,
  stream: string,
  config: (cfg: Record<string, unknown>) => Record<string, unknown>,
  req: Record<string, unknown> = {},
): Promise<{ restored: Answer; bytes: Buffer }> {
  const snap = await snapshot(nc, stream, req);
  assert.equal(snap.bytes.length > 0, true);
  const del = await json(nc, S + 'DELETE.' + stream, null);
  assert.equal(del.success, true);
  const r = await json(nc, S + 'RESTORE.' + stream, {
    config: config(snap.config as Record<string, unknown>),
    state: snap.state,
  });
  const answers = await upload(nc, r.deliver_subject as string, snap.bytes, 64 * 1024);
  return { restored: answers[answers.length - 1]!, bytes: snap.bytes };
}

/** Every stored message by sequence: subject, headers, data and time. */
async function contents(nc: NatsConnection, stream: string, last: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let seq = 1; seq <= last; seq++) {
    const r = await json(nc, S + 'MSG.GET.' + stream, { seq });
    out.push(r.message ?? null);
  }
  return out;
}

/** An RFC 3339 time in nanoseconds since the epoch. */
function ns(t: string): number {
  const dot = t.indexOf('.');
  const frac = t.substring(dot + 1, t.length - 1);
  return Date.parse(t.substring(0, dot) + 'Z') * 1e6 + Number(frac.padEnd(9, '0'));
}

/** wirebus keeps times in a double of nanoseconds (256 ns steps): equal within 1 µs. */
function sameTime(got: unknown, want: unknown, what: string): void {
  assert.ok(
    Math.abs(ns(String(got)) - ns(String(want))) < 1000,
    `${what}: ${String(got)} ${String(want)}`,
  );
}

/** Checks the times of `got` against `want`'s, then takes `want`'s for a deep comparison. */
function sameTimes(got: Record<string, unknown>, want: Record<string, unknown>): void {
  for (const k of ['first_ts', 'last_ts', 'time', 'created']) {
    if (typeof want[k] !== 'string') continue;
    sameTime(got[k], want[k], k);
    got[k] = want[k];
  }
}

/** A consumer's sequence pair without its last activity time. */
function seqs(v: unknown): unknown {
  const { consumer_seq, stream_seq } = v as { consumer_seq: number; stream_seq: number };
  return { consumer_seq, stream_seq };
}

function strip(info: Record<string, unknown>): unknown {
  const { type: _t, ...rest } = info;
  return rest;
}

describe('JetStream stream snapshots and restores', () => {
  it('speak the reference protocol, step by step, for a file stream with a consumer', async () => {
    const expected = readFixture('snapshot.json') as Answer[];
    await withServer({ jetstream: { storeDir: storeDir() } }, async (s) => {
      const answers = await runSnapshotScenario(s.port);
      assert.equal(answers.length, expected.length);
      for (let i = 0; i < answers.length; i++)
        assert.deepEqual(answers[i], expected[i], `step ${i}: ${expected[i]!.name}`);
    });
  });

  it('restore every message, gap and consumer position of a memory stream, into file or memory', async () => {
    await withServer({ jetstream: { storeDir: storeDir() } }, async (s) => {
      const nc = await connect({ servers: `127.0.0.1:${s.port}` });
      try {
        await json(nc, S + 'CREATE.M', {
          name: 'M',
          subjects: ['m.*'],
          storage: 'memory',
          max_msgs_per_subject: 10,
        });
        const body = Buffer.alloc(4000, 'x');
        const h = headers();
        h.set('K', 'v');
        for (let i = 0; i < 600; i++)
          nc.publish(`m.${i % 40}`, body, i % 7 === 0 ? { headers: h } : {});
        await nc.flush();
        await json(nc, S + 'MSG.DELETE.M', { seq: 590 });
        await json(nc, C + 'DURABLE.CREATE.M.pull', {
          stream_name: 'M',
          config: { durable_name: 'pull', ack_policy: 'explicit', filter_subject: 'm.3' },
        });
        const got = await request(nc, C + 'MSG.NEXT.M.pull', { batch: 1, no_wait: true });
        assert.ok(got?.reply !== undefined);
        await json(nc, C + 'DURABLE.CREATE.M.push', {
          stream_name: 'M',
          config: { durable_name: 'push', deliver_subject: 'nowhere', ack_policy: 'none' },
        });
        const before = await json(nc, S + 'INFO.M', null);
        const state = before.state as { last_seq: number; messages: number };
        assert.equal(state.messages, 40 * 10 - 1);
        const pullBefore = await json(nc, C + 'INFO.M.pull', null);
        const msgsBefore = await contents(nc, 'M', state.last_seq);

        // Into a file stream: the config of the restore request is the new identity.
        const toFile = await roundTrip(nc, 'M', (c) => ({ ...c, storage: 'file' }));
        const restored = toFile.restored.body as Record<string, unknown>;
        assert.equal(restored.error, undefined, JSON.stringify(restored.error));
        const inFile = await json(nc, S + 'INFO.M', null);
        assert.equal((inFile.config as { storage: string }).storage, 'file');
        sameTime(inFile.created, before.created, 'created');
        // The same state, but for the bytes: each storage counts a message as the reference's does.
        assert.deepEqual(
          { ...(inFile.state as object), bytes: 0 },
          { ...(before.state as object), bytes: 0 },
        );
        assert.deepEqual(await contents(nc, 'M', state.last_seq), msgsBefore);
        const pullAfter = await json(nc, C + 'INFO.M.pull', null);
        assert.deepEqual(seqs(pullAfter.delivered), seqs(pullBefore.delivered));
        // (The ack floor's stream sequence is not compared: a resumed consumer puts it just
        // below the stream's first message, as after a restart.)
        assert.equal(
          (pullAfter.ack_floor as { consumer_seq: number }).consumer_seq,
          (pullBefore.ack_floor as { consumer_seq: number }).consumer_seq,
        );
        assert.equal(pullAfter.num_ack_pending, 1);
        assert.equal(pullAfter.num_pending, pullBefore.num_pending);
        sameTime(pullAfter.created, pullBefore.created, 'consumer created');
        assert.equal((await json(nc, C + 'INFO.M.push', null)).name, 'push');

        // Back into memory, without its consumers.
        const toMemory = await roundTrip(nc, 'M', (c) => ({ ...c, storage: 'memory' }), {
          no_consumers: true,
        });
        assert.equal((toMemory.restored.body as { error?: unknown }).error, undefined);
        const inMemory = await json(nc, S + 'INFO.M', null);
        assert.deepEqual(inMemory.state, { ...(before.state as object), consumer_count: 0 });
        assert.deepEqual(await contents(nc, 'M', state.last_seq), msgsBefore);
        const names = await json(nc, C + 'NAMES.M', null);
        assert.deepEqual(names.consumers, []);
        // New messages continue after the restored last sequence.
        const ack = await json(nc, 'm.1', 'next');
        assert.equal(ack.seq, state.last_seq + 1);
      } finally {
        await nc.close();
      }
    });
  });

  it('keep a restored file stream and its consumer across a restart', async () => {
    const dir = storeDir();
    let server = await startServer({ host: '127.0.0.1', port: 0, jetstream: { storeDir: dir } });
    let nc = await connect({ servers: server.url });
    await json(nc, S + 'CREATE.R', { name: 'R', subjects: ['r'], storage: 'file' });
    for (let i = 0; i < 10; i++) await request(nc, 'r', `r${i}`);
    await json(nc, C + 'DURABLE.CREATE.R.d', {
      stream_name: 'R',
      config: { durable_name: 'd', ack_policy: 'explicit' },
    });
    for (let i = 0; i < 3; i++) {
      const m = await request(nc, C + 'MSG.NEXT.R.d', { batch: 1, no_wait: true });
      if (i < 2) nc.publish(m!.reply!, new TextEncoder().encode('+ACK'));
    }
    await nc.flush();
    const { restored } = await roundTrip(nc, 'R', (c) => c);
    assert.equal((restored.body as { error?: unknown }).error, undefined);
    const before = await json(nc, S + 'INFO.R', null);
    const consumerBefore = await json(nc, C + 'INFO.R.d', null);
    await nc.close();
    await server.close();

    server = await startServer({ host: '127.0.0.1', port: 0, jetstream: { storeDir: dir } });
    nc = await connect({ servers: server.url });
    try {
      const info = await json(nc, S + 'INFO.R', null);
      assert.deepEqual(info.state, before.state);
      sameTime(info.created, before.created, 'created');
      const consumer = await json(nc, C + 'INFO.R.d', null);
      assert.deepEqual(seqs(consumer.delivered), seqs(consumerBefore.delivered));
      assert.deepEqual(seqs(consumer.ack_floor), seqs(consumerBefore.ack_floor));
      assert.equal(consumer.num_ack_pending, 1);
      const next = await request(nc, C + 'MSG.NEXT.R.d', { batch: 1, no_wait: true });
      assert.equal(new TextDecoder().decode(next!.data), 'r3');
    } finally {
      await nc.close();
      await server.close();
    }
  });

  it('abandon a restore whose chunk has no reply subject', async () => {
    await withServer({ jetstream: true }, async (s) => {
      const nc = await connect({ servers: `127.0.0.1:${s.port}` });
      try {
        const r = await json(nc, S + 'RESTORE.X', { config: { subjects: ['x'] } });
        nc.publish(r.deliver_subject as string, new TextEncoder().encode('chunk'));
        await nc.flush();
        const end = await request(nc, r.deliver_subject as string, null);
        assert.equal(end?.headers?.code, 503, 'the abandoned restore no longer listens');
        const info = await json(nc, S + 'INFO.X', null);
        assert.equal((info.error as { err_code: number }).err_code, 10059);
      } finally {
        await nc.close();
      }
    });
  });

  it('restore a snapshot taken by nats-server: messages, gaps and the consumer', async () => {
    // fixtures/reference-snapshot.json: nats-server 2.9.10's snapshot of a file stream
    // (purged below 4, 10 erased, 11 deleted, headers) with a consumer mid-way, and
    // what that server answered about them (capture-reference-snapshot.ts).
    const ref = readFixture('reference-snapshot.json') as {
      config: Record<string, unknown>;
      state: Record<string, unknown>;
      snapshot: string;
      stream_info: { state: Record<string, unknown> };
      consumer_info: Record<string, unknown>;
      messages: Array<{ message?: Record<string, unknown>; error?: unknown }>;
    };
    await withServer({ jetstream: { storeDir: storeDir() } }, async (s) => {
      const nc = await connect({ servers: `127.0.0.1:${s.port}` });
      try {
        const r = await json(nc, S + 'RESTORE.REF', { config: ref.config, state: ref.state });
        const bytes = Buffer.from(ref.snapshot, 'base64');
        const answers = await upload(nc, r.deliver_subject as string, bytes, 300);
        const end = answers[answers.length - 1]!.body as { error?: unknown };
        assert.equal(end.error, undefined, JSON.stringify(end.error));
        const info = await json(nc, S + 'INFO.REF', null);
        const state = info.state as Record<string, unknown>;
        sameTimes(state, ref.stream_info.state);
        assert.deepEqual(state, ref.stream_info.state);
        for (let seq = 1; seq <= ref.messages.length; seq++) {
          const got = await json(nc, S + 'MSG.GET.REF', { seq });
          const want = ref.messages[seq - 1]!;
          if (want.message === undefined) assert.deepEqual(got.error, want.error, `seq ${seq}`);
          else {
            const m = got.message as Record<string, unknown>;
            sameTimes(m, want.message);
            assert.deepEqual(m, want.message, `seq ${seq}`);
          }
        }
        const ci = await json(nc, C + 'INFO.REF.c', null);
        for (const k of ['delivered', 'ack_floor'])
          assert.deepEqual(seqs(ci[k]), seqs(ref.consumer_info[k]), k);
        for (const k of ['num_ack_pending', 'num_redelivered', 'num_pending'])
          assert.equal(ci[k], ref.consumer_info[k], k);
      } finally {
        await nc.close();
      }
    });
  });
});

describe('JetStream mirrors and sources', () => {
  it("are refused with the reference's stream configuration error", async () => {
    // nats-server's checkStreamCfg answer to a config it cannot use: JSStreamInvalidConfigF
    // with "stream configuration invalid" (errors.json: code 500, err_code 10052).
    const invalid = { code: 500, err_code: 10052, description: 'stream configuration invalid' };
    await withServer({ jetstream: true }, async (s) => {
      const nc = await connect({ servers: `127.0.0.1:${s.port}` });
      try {
        await json(nc, S + 'CREATE.O', { name: 'O', subjects: ['o.>'], storage: 'memory' });
        const mirror = await json(nc, S + 'CREATE.MI', { name: 'MI', mirror: { name: 'O' } });
        assert.deepEqual(strip(mirror), { error: invalid });
        const sources = await json(nc, S + 'CREATE.SO', {
          name: 'SO',
          sources: [{ name: 'O', filter_subject: 'o.a' }],
        });
        assert.deepEqual(strip(sources), { error: invalid });
        const update = await json(nc, S + 'UPDATE.O', {
          name: 'O',
          subjects: ['o.>'],
          storage: 'memory',
          sources: [{ name: 'X' }],
        });
        assert.deepEqual(strip(update), { error: invalid });
        // The reference's own mirror checks still come first.
        const both = await json(nc, S + 'CREATE.MI', {
          name: 'MI',
          mirror: { name: 'O' },
          sources: [{ name: 'X' }],
        });
        assert.equal((both.error as { err_code: number }).err_code, 10031);
        const names = await json(nc, S + 'NAMES', null);
        assert.deepEqual(names.streams, ['O']);
      } finally {
        await nc.close();
      }
    });
  });
});
