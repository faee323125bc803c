// Streaming end-to-end benchmark: bin/wirebus --streaming in a child process, once
// per store type in STORES (default MEMORY,FILE,FILE_NOSYNC,SQL: FILE fsyncs before
// each PubAck, FILE_NOSYNC is --file_sync=false; a store that cannot run here is
// reported and skipped; the best run of each is compared with MEMORY's at the end), and a lean streaming client here (nats v2 + the protobuf
// codecs, so the figures are the server's rather than node-nats-streaming's):
//   pub      async publishes of 128-byte messages with at most WINDOW awaiting
//            their PubAck, timed from the first publish to the last PubAck;
//   pubsub   the same with a subscriber (deliver all, MaxInflight WINDOW, an Ack
//            per message), timed to the last delivery.
// Bounded: N messages (default 100000) or DURATION_S seconds (default 10) per run.
//
//   npm run build && node dist/bench/streaming-pubsub.js
//   N=200000 node dist/bench/streaming-pubsub.js
//   STORES=MEMORY,SQL node dist/bench/streaming-pubsub.js
// SQL runs on a private PostgreSQL started for the run, fsync on (as in production);
// SQL_SOURCE=<connection string> uses an existing database instead.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type NatsConnection } from 'nats';
import {
  Ack,
  ConnectRequest,
  ConnectResponse,
  MsgProto,
  PubAck,
  PubMsg,
  SubscriptionRequest,
  StartPosition,
  SubscriptionResponse,
  seqToLong,
} from '../src/streaming/protocol/index.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { formatRate } from './timing.js';
import { freePort } from './free-port.js';

const N = Number(process.env.N ?? '100000');
/** Best msgs/s of each store, per scenario, for the comparison at the end. */
const best = new Map<string, { pub: number; pubsub: number }>();

function record(store: string, scenario: 'pub' | 'pubsub', rate: number): void {
  const b = best.get(store) ?? { pub: 0, pubsub: 0 };
  b[scenario] = Math.max(b[scenario], rate);
  best.set(store, b);
}
const DURATION_MS = Number(process.env.DURATION_S ?? '10') * 1000;
const SIZE = 128;
const WINDOW = 16384;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Session {
  nc: NatsConnection;
  clientID: string;
  connID: Uint8Array;
  pubPrefix: string;
  subRequests: string;
}

async function stanConnect(url: string, clientID: string): Promise<Session> {
  const nc = await connect({ servers: url });
  const hb = `_INBOX.hb.${clientID}`;
  nc.subscribe(hb, { callback: (_e, m) => m.respond() });
  const connID = Buffer.from(`conn-${clientID}`);
  const res = await nc.request(
    '_STAN.discover.test-cluster',
    ConnectRequest.encode({
      clientID,
      heartbeatInbox: hb,
      protocol: 1,
      connID,
      pingInterval: 5,
      pingMaxOut: 88,
    }).finish(),
    { timeout: 5000 },
  );
  const cr = ConnectResponse.decode(res.data);
  if (cr.error !== '') throw new Error(cr.error);
  return { nc, clientID, connID, pubPrefix: cr.pubPrefix, subRequests: cr.subRequests };
}

/** Publishes N messages with a window of unacked ones; resolves with the elapsed ms. */
async function publishAll(
  s: Session,
  channel: string,
  n: number,
): Promise<{ ms: number; acked: number }> {
  const ackSubject = `_STAN.acks.${s.clientID}`;
  const data = Buffer.alloc(SIZE, 0x61);
  let sent = 0;
  let acked = 0;
  let inFlight = 0;
  const start = performance.now();
  const deadline = start + DURATION_MS;
  let wake: (() => void) | null = null;
  s.nc.subscribe(ackSubject, {
    callback: (_e, m) => {
      if (PubAck.decode(m.data).error !== '') throw new Error('PubAck error');
      acked++;
      inFlight--;
      if (wake !== null && (inFlight < WINDOW / 2 || acked === sent)) {
        const w = wake;
        wake = null;
        w();
      }
    },
  });
  const subject = `${s.pubPrefix}.${channel}`;
  while (sent < n && performance.now() < deadline) {
    while (inFlight < WINDOW && sent < n) {
      const guid = `g${sent}`;
      s.nc.publish(
        subject,
        PubMsg.encode({
          clientID: s.clientID,
          guid,
          subject: channel,
          data,
          connID: s.connID,
        }).finish(),
        { reply: ackSubject },
      );
      sent++;
      inFlight++;
    }
    await new Promise<void>((resolve) => (wake = resolve));
  }
  while (acked < sent) await new Promise<void>((resolve) => (wake = resolve));
  return { ms: performance.now() - start, acked };
}

async function run(store: string, storeArgs: string[]): Promise<void> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['bin/wirebus', '-a', '127.0.0.1', '-p', String(port), '--streaming', ...storeArgs],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  child.stderr.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`server not ready:\n${log}`)), 10_000);
    child.once('exit', () => {
      clearTimeout(t);
      reject(new Error(`server exited:\n${log}`));
    });
    child.stderr.on('data', (d: string) => {
      log += d;
      if (log.includes('Streaming Server is ready')) {
        clearTimeout(t);
        resolve();
      }
    });
  });
  const url = `nats://127.0.0.1:${port}`;
  try {
    for (let round = 1; round <= 2; round++) {
      const pub = await stanConnect(url, `bench-pub-${round}`);
      const r = await publishAll(pub, `bench.pub.${round}`, N);
      record(store, 'pub', (r.acked * 1000) / r.ms);
      console.log(
        `stan pub     ${store.padEnd(6)} run ${round}: ${formatRate((r.acked * 1000) / r.ms)} msgs/s (${r.acked} msgs, ${SIZE} B, ${(r.ms / 1000).toFixed(2)} s)`,
      );
      await pub.nc.close();

      const sub = await stanConnect(url, `bench-sub-${round}`);
      const pub2 = await stanConnect(url, `bench-pub2-${round}`);
      const channel = `bench.pubsub.${round}`;
      const inbox = `_INBOX.bench.${round}`;
      let received = 0;
      let last = 0;
      let ackInbox = '';
      let done: () => void = () => undefined;
      const allIn = new Promise<void>((resolve) => (done = resolve));
      sub.nc.subscribe(inbox, {
        callback: (_e, m) => {
          const msg = MsgProto.decode(m.data);
          received++;
          last = performance.now();
          sub.nc.publish(
            ackInbox,
            Ack.encode({ subject: channel, sequence: msg.sequence }).finish(),
          );
          if (received === N) done();
        },
      });
      const sr = await sub.nc.request(
        sub.subRequests,
        SubscriptionRequest.encode({
          clientID: sub.clientID,
          subject: channel,
          inbox,
          maxInFlight: WINDOW,
          ackWaitInSecs: 30,
          startPosition: StartPosition.First,
          startSequence: seqToLong(0),
        }).finish(),
        { timeout: 5000 },
      );
      ackInbox = SubscriptionResponse.decode(sr.data).ackInbox;
      const start = performance.now();
      const p = await publishAll(pub2, channel, N);
      if (received < p.acked)
        await Promise.race([allIn, new Promise((r2) => setTimeout(r2, 10_000))]);
      const ms = Math.max(last, start + p.ms) - start;
      record(store, 'pubsub', (received * 1000) / ms);
      console.log(
        `stan pubsub  ${store.padEnd(6)} run ${round}: ${formatRate((received * 1000) / ms)} msgs/s (${received}/${p.acked} delivered and acked, ${(ms / 1000).toFixed(2)} s)`,
      );
      await sub.nc.close();
      await pub2.nc.close();
    }
  } finally {
    child.kill('SIGTERM');
  }
}

/** The server flags for a store type, and what to clean up after its runs. */
async function storeArgs(store: string): Promise<{ args: string[]; done: () => void }> {
  switch (store) {
    case 'MEMORY':
      return { args: [], done: () => undefined };
    case 'FILE':
    case 'FILE_NOSYNC': {
      const dir = mkdtempSync(join(tmpdir(), 'wirebus-bench-'));
      const sync = store === 'FILE' ? [] : ['--file_sync=false'];
      return {
        args: ['-st', 'FILE', '--dir', dir, ...sync],
        done: () => rmSync(dir, { recursive: true, force: true }),
      };
    }
    case 'SQL': {
      let source = process.env.SQL_SOURCE ?? '';
      if (source === '') {
        const pg = await startPostgres({ fsync: true });
        if (typeof pg === 'string') throw new Error(pg);
        source = await pg.createDatabase();
      }
      const args = ['-st', 'SQL', '--sql_driver', 'postgres', '--sql_source', source];
      return { args, done: () => undefined };
    }
    default:
      throw new Error(`unknown store type ${store}`);
  }
}

for (const store of (process.env.STORES ?? 'MEMORY,FILE,FILE_NOSYNC,SQL').split(',')) {
  let setup: { args: string[]; done: () => void } | undefined;
  try {
    setup = await storeArgs(store);
    await run(store, setup.args);
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n').slice(-3);
    console.log(`stan ${store}: skipped (${why.join(' ').trim()})`);
  } finally {
    setup?.done();
  }
}
const memory = best.get('MEMORY');
if (memory !== undefined) {
  for (const [store, b] of best) {
    if (store === 'MEMORY') continue;
    console.log(
      `stan ${store} / MEMORY (best runs): pub ${(b.pub / memory.pub).toFixed(2)}, pubsub ${(b.pubsub / memory.pubsub).toFixed(2)}`,
    );
  }
}
process.exit(0);
