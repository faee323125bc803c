// kill -9 of a streaming server on the FILE store while a client publishes, many times
// over on one directory (file-server-child.ts runs the server; node-nats-streaming is
// the client). After every restart: every acknowledged message is there, in publish
// order, under consecutive sequences with no duplicate, and a durable subscriber
// resumes where it was instead of from the start.
//
// A kill can cut a write in the middle (a torn record at the end of a file). The
// server then refuses to start and names the file and offset; as an operator would,
// the test checks that message and restarts with truncate_bad_eof. Only messages
// that were never acknowledged can be in a torn record.
//
// To look at a failure: KILL_TEST_DIR=<empty dir> keeps the store there, and
// KILL_TEST_HTTP=<port> opens the servers' monitoring port (/streaming/*).
import { after, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cleanupDirs, tempDir } from './file-fixtures.js';
import {
  connect,
  kill,
  sleep,
  subscribe,
  withTimeout,
  type Stan,
  type StanMessage,
} from './stan.js';

after(cleanupDirs);

const CHILD = fileURLToPath(new URL('./file-server-child.js', import.meta.url));
const ROUNDS = 12;
const WINDOW = 256;
const MAX_INFLIGHT = 128;
const CHANNEL = 'kill.test';

interface Child {
  readonly proc: ChildProcess;
  readonly url: string;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** Starts the server; resolves with it, or with the error it refused to start with. */
function startChild(dir: string, fileOptions: object): Promise<Child | string> {
  const proc = spawn(
    process.execPath,
    [CHILD, JSON.stringify({ dir, fileOptions, streaming: { clientCheckTimeout: 100 } })],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  let out = '';
  return withTimeout(
    new Promise<Child | string>((resolve, reject) => {
      proc.stdout.setEncoding('utf8');
      proc.stdout.on('data', (d: string) => {
        out += d;
        const ready = /READY (\d+)/.exec(out);
        if (ready !== null) resolve({ proc, url: `nats://127.0.0.1:${ready[1]}` });
        const error = /ERROR (.*)/.exec(out);
        if (error !== null) resolve(error[1]!);
      });
      proc.once('exit', (code) => {
        reject(new Error(`server exited (${code}) before it was ready: ${out}`));
      });
    }),
    'the server to start',
    15_000,
  );
}

/** Starts after a crash: a torn tail is reported, then cut (as an operator would). */
async function restart(t: TestContext, dir: string, sync: boolean): Promise<Child> {
  const first = await startChild(dir, { sync });
  if (typeof first !== 'string') return first;
  assert.match(
    first,
    /^file store: (unexpected end of file|CRC mismatch).* in \S+msgs\.\d+\.(dat|idx)|^file store: .* in \S+(subs|clients)\.dat at offset \d+/,
  );
  assert.match(first, /at offset \d+; start with --file_truncate_bad_eof/);
  t.diagnostic(`refused after kill -9, restarted with truncate_bad_eof: ${first}`);
  const second = await startChild(dir, { sync, truncateBadEof: true });
  if (typeof second === 'string') throw new Error(`still refused: ${second}`);
  return second;
}

function killHard(child: Child): Promise<void> {
  return new Promise((resolve) => {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      resolve();
      return;
    }
    child.proc.once('exit', () => resolve());
    child.proc.kill('SIGKILL');
  });
}

/** Publishes `<round>-<i>` with WINDOW acks outstanding until `stop`; acked ones in `acked`. */
async function publishUntil(
  sc: Stan,
  round: number,
  acked: string[],
  stop: { now: boolean; closing: boolean },
): Promise<void> {
  let inflight = 0;
  let wake: (() => void) | null = null;
  // The client calls back every pending publish without an error when its connection
  // closes (the server died): only PubAcks received before that count.
  const cleanup = sc.cleanupOnClose.bind(sc);
  sc.cleanupOnClose = (err?: Error): void => {
    stop.closing = true;
    cleanup(err);
  };
  for (let i = 1; !stop.now; i++) {
    const payload = `${round}-${i}`;
    inflight++;
    try {
      sc.publish(CHANNEL, payload, (err) => {
        inflight--;
        if (!stop.closing && (err === undefined || err === null)) acked.push(payload);
        wake?.();
      });
    } catch {
      return; // the connection is gone
    }
    // Read through a call: the kill sets it while this loop waits.
    while (inflight >= WINDOW && !stopped(stop)) {
      await Promise.race([new Promise<void>((r) => (wake = r)), sleep(50)]);
    }
  }
}

it(
  `kill -9 during publishes, ${ROUNDS} times: no acknowledged message lost, durables resume`,
  { timeout: 80_000 },
  async (t) => {
    const dir = process.env.KILL_TEST_DIR ?? (await tempDir());
    const acked: string[] = [];
    const durableSeen = new Map<number, number>();
    let durableDeliveries = 0;
    const onDurable = (m: StanMessage): void => {
      durableDeliveries++;
      durableSeen.set(m.getSequence(), (durableSeen.get(m.getSequence()) ?? 0) + 1);
      m.ack();
    };
    const durableOpts = (sc: Stan) =>
      sc
        .subscriptionOptions()
        .setDurableName('dur')
        .setManualAckMode(true)
        .setMaxInFlight(MAX_INFLIGHT)
        .setDeliverAllAvailable();
    for (let round = 1; round <= ROUNDS; round++) {
      // Odd rounds fsync every flush; even rounds only write (a kill -9 loses neither).
      const child = await restart(t, dir, round % 2 === 1);
      const dur = await connect(child.url, 'test-cluster', 'durable-client');
      await subscribe(dur, CHANNEL, durableOpts(dur), undefined, onDurable);
      const pub = await connect(child.url, 'test-cluster', `publisher-${round}`);
      const stop = { now: false, closing: false };
      const publishing = publishUntil(pub, round, acked, stop);
      await sleep(150 + Math.floor(Math.random() * 450));
      await killHard(child);
      stop.now = true;
      await publishing;
      kill(pub);
      kill(dur);
    }

    const child = await restart(t, dir, true);
    try {
      // Everything stored, read back in order by a new subscriber.
      const reader = await connect(child.url, 'test-cluster', 'reader');
      const all = await subscribe(
        reader,
        CHANNEL,
        reader.subscriptionOptions().setDeliverAllAvailable().setMaxInFlight(100_000),
      );
      const need = acked.length;
      await all.waitFor(need, 20_000);
      let count = -1;
      while (count !== all.msgs.length) {
        count = all.msgs.length;
        await sleep(300);
      }
      const seqs = all.seqs();
      seqs.forEach((seq, i) => {
        assert.equal(seq, i + 1, `sequence ${seq} at position ${i}: a gap or a duplicate`);
      });
      const stored = all.msgs.map((m) => m.getData().toString());
      const position = new Map(stored.map((p, i) => [p, i]));
      let last = -1;
      for (const payload of acked.sort(byPublishOrder)) {
        const at = position.get(payload);
        assert.ok(at !== undefined, `acknowledged message ${payload} is missing`);
        assert.ok(at > last, `acknowledged message ${payload} out of order`);
        last = at;
      }
      assert.ok(acked.length > ROUNDS * 10, `only ${acked.length} messages acknowledged`);

      // The durable resumes: it gets what it had not acked, not the channel again.
      const before = durableDeliveries;
      const dur = await connect(child.url, 'test-cluster', 'durable-client');
      await subscribe(dur, CHANNEL, durableOpts(dur), undefined, onDurable);
      const total = seqs.length;
      await withTimeout(
        (async () => {
          while (durableSeen.size < total) await sleep(50);
        })(),
        `the durable to have all ${total} messages (has ${durableSeen.size})`,
        20_000,
      );
      const again = durableDeliveries - before;
      const missing = seqs.filter((s) => !durableSeen.has(s));
      assert.deepEqual(missing, []);
      // What comes twice is bounded by each kill's in-flight window: the pending set
      // as last written (redelivered) plus what was sent in the turn the kill cut
      // (its "sent" records lost, so sent again): at most 2 × MaxInflight per restart.
      const twice = [...durableSeen.values()].filter((n) => n > 1).length;
      assert.ok(twice <= (ROUNDS + 1) * 2 * MAX_INFLIGHT, `${twice} messages delivered twice`);
      assert.ok(again < total || total < MAX_INFLIGHT, `the durable started over (${again})`);
      t.diagnostic(
        `${acked.length} acknowledged, ${total} stored, durable: ${again} after the last restart, ${twice} delivered twice`,
      );
      kill(reader);
      kill(dur);
    } finally {
      await killHard(child);
    }
  },
);

function stopped(stop: { now: boolean }): boolean {
  return stop.now;
}

function byPublishOrder(a: string, b: string): number {
  const [ra, ia] = a.split('-').map(Number) as [number, number];
  const [rb, ib] = b.split('-').map(Number) as [number, number];
  return ra - rb || ia - ib;
}
