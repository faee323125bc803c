// kill -9 of a process writing a JetStream file stream (file-kill-child.ts), many times
// over on one directory, alternating `sync_interval: always` and the interval mode.
// After every crash the store reopens by itself (a torn tail is cut), and in the end:
// every message whose onDurable had called back is there, in the order written, under
// consecutive sequences, exactly once; the durable consumer's state is consistent.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FileStorage } from '../../../src/jetstream/storage/file.js';
import { cleanupDirs, tempDir } from '../../streaming/file-fixtures.js';
import { streamConfig } from './conformance.js';

after(cleanupDirs);

const CHILD = fileURLToPath(new URL('./file-kill-child.js', import.meta.url));
const ORDER_CHILD = fileURLToPath(new URL('./file-order-child.js', import.meta.url));
const ROUNDS = 10;

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** Runs the writer until a random moment, kills it hard; returns the last acked index. */
function round(dir: string, n: number, maxMsgs = -1): Promise<{ acked: number; stderr: string }> {
  const sync = n % 2 === 1 ? 'always' : 120_000;
  const proc = spawn(process.execPath, [CHILD, JSON.stringify({ dir, round: n, sync, maxMsgs })], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  let out = '';
  let stderr = '';
  let acked = 0;
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`round ${n}: the writer acknowledged nothing: ${stderr}`));
      // With `always` the first acknowledgement waits for fdatasync, which took over 15 s
      // once while other processes wrote hundreds of megabytes (ext4 commits them first).
    }, 40_000);
    proc.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const lines = out.split('\n');
      out = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^ACK (\d+) (\d+)$/.exec(line);
        if (m === null) continue;
        // Killed at a random moment once it is acknowledging (on a loaded machine the
        // time from start to the first acknowledgement varies too much to count from it).
        if (acked === 0)
          setTimeout(() => proc.kill('SIGKILL'), 50 + Math.floor(Math.random() * 400));
        acked = Math.max(acked, Number(m[2]));
      }
    });
    proc.once('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') reject(new Error(`round ${n}: exited ${code}: ${stderr}`));
      else resolve({ acked, stderr });
    });
  });
}

it(
  `kill -9 while storing, ${ROUNDS} times: every acknowledged message there, in order, once`,
  { timeout: 90_000 },
  async (t) => {
    const dir = await tempDir();
    const acked: number[] = [];
    for (let n = 1; n <= ROUNDS; n++) {
      const r = await round(dir, n);
      acked[n] = r.acked;
      if (r.stderr !== '') t.diagnostic(`round ${n} recovery: ${r.stderr.trim()}`);
    }
    const warnings: string[] = [];
    const storage = new FileStorage({ storeDir: dir, warn: (w) => warnings.push(w) });
    try {
      const store = storage
        .account('$G')
        .openStream(streamConfig('KILL', 'file'), Buffer.from('{}'));
      const st = store.state();
      assert.equal(st.msgs, st.lastSeq, 'a gap in the sequences');
      assert.equal(st.firstSeq, 1);
      // Messages in sequence order: per round, indexes 1, 2, 3... with nothing missing.
      const seen = new Map<number, number>();
      let lastRound = 0;
      for (let seq = 1; seq <= st.lastSeq; seq++) {
        const m = store.loadMsg(seq);
        assert.ok(m !== undefined, `sequence ${seq} missing`);
        const text = m.data.toString('latin1', 0, m.data.indexOf('|'));
        const [rn, idx] = text.split('-').map(Number) as [number, number];
        assert.ok(rn >= lastRound, `round ${rn} after round ${lastRound} at ${seq}`);
        lastRound = rn;
        const prev = seen.get(rn) ?? 0;
        assert.equal(
          idx,
          prev + 1,
          `round ${rn}: index ${idx} after ${prev} (a loss or a duplicate) at ${seq}`,
        );
        seen.set(rn, idx);
        assert.equal(m.subject, `kill.${idx % 7}`);
      }
      let total = 0;
      for (let n = 1; n <= ROUNDS; n++) {
        const have = seen.get(n) ?? 0;
        assert.ok(have >= acked[n]!, `round ${n}: ${acked[n]} acknowledged, only ${have} stored`);
        total += acked[n]!;
      }
      assert.ok(total > ROUNDS * 50, `only ${total} messages acknowledged`);
      const c = store.consumerStore('dur', { ackPolicy: 'explicit' }).state();
      assert.ok(c.delivered.stream > 0 && c.delivered.stream <= st.lastSeq);
      assert.ok(c.ackFloor.stream <= c.delivered.stream);
      for (const seq of c.pending.keys())
        assert.ok(seq > c.ackFloor.stream && seq <= c.delivered.stream);
      t.diagnostic(`${total} acknowledged, ${st.msgs} stored, consumer at ${c.delivered.stream}`);
    } finally {
      await storage.close();
    }
  },
);

it(
  'kill -9 while max_msgs drops the oldest: the newest messages there, in order, within the limit',
  { timeout: 120_000 },
  async (t) => {
    const dir = await tempDir();
    const MAX = 3000;
    const acked: number[] = [];
    for (let n = 1; n <= 5; n++) acked[n] = (await round(dir, n, MAX)).acked;
    const storage = new FileStorage({ storeDir: dir, warn: () => undefined });
    try {
      const store = storage
        .account('$G')
        .openStream(streamConfig('KILL', 'file', { maxMsgs: MAX }), Buffer.from('{}'));
      const st = store.state();
      assert.ok(st.msgs <= MAX, `${st.msgs} messages kept, max ${MAX}`);
      // What is left is one run of consecutive sequences, the newest ones.
      assert.equal(st.msgs, st.lastSeq - st.firstSeq + 1);
      let prev: [number, number] = [0, 0];
      for (let seq = st.firstSeq; seq <= st.lastSeq; seq++) {
        const m = store.loadMsg(seq)!;
        const [rn, idx] = m.data
          .toString('latin1', 0, m.data.indexOf('|'))
          .split('-')
          .map(Number) as [number, number];
        if (rn === prev[0]) assert.equal(idx, prev[1] + 1, `round ${rn}: ${idx} after ${prev[1]}`);
        else assert.ok(rn > prev[0], `round ${rn} after round ${prev[0]}`);
        prev = [rn, idx];
      }
      // The last round that had messages acknowledged: they are the newest, all kept
      // (a later round may have stored more without an acknowledgement before the kill).
      let lastAcked = 5;
      while (lastAcked > 0 && acked[lastAcked] === 0) lastAcked--;
      t.diagnostic(
        `acknowledged per round: ${acked.slice(1).join(', ')}; newest stored: round ${prev[0]}, index ${prev[1]}`,
      );
      assert.ok(lastAcked > 0, 'nothing acknowledged in 5 rounds');
      assert.ok(
        prev[0] >= lastAcked,
        `round ${lastAcked} was acknowledged, newest stored is round ${prev[0]}`,
      );
      if (prev[0] === lastAcked) {
        assert.ok(
          prev[1] >= acked[lastAcked]!,
          `round ${lastAcked}: ${acked[lastAcked]} acked, ${prev[1]} stored`,
        );
      }
    } finally {
      await storage.close();
    }
  },
);

/** Runs file-order-child.ts to its kill; the index of the acknowledged batch's last message. */
async function orderChild(dir: string, scenario: 'order' | 'drop' | 'consumer'): Promise<number> {
  const proc = spawn(process.execPath, [ORDER_CHILD, dir, scenario], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  let out = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  // A writer that never reaches its kill point is stopped (and the test fails).
  let stuck = false;
  const guard = setTimeout(() => {
    stuck = true;
    proc.kill('SIGKILL');
  }, 30_000);
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    proc.once('exit', (_code, sig) => resolve(sig)),
  );
  clearTimeout(guard);
  children.delete(proc);
  assert.ok(!stuck, `the writer never reached its kill point: ${out} ${stderr}`);
  assert.equal(signal, 'SIGKILL', `the writer was not killed mid-round: ${out} ${stderr}`);
  const acked = Number(/^ACK (\d+)$/m.exec(out)?.[1] ?? 0);
  assert.ok(acked > 0, `nothing acknowledged: ${stderr}`);
  return acked;
}

for (const [scenario, maxMsgs, what] of [
  ['order', -1, 'no later block without the earlier ones'],
  ['drop', 120, 'blocks max_msgs dropped before they were written are no hole'],
] as const) {
  it(`kill -9 in a write round spanning blocks: ${what}`, async () => {
    // file-order-child.ts dies at a chosen point of the round: what recovery finds must
    // be one run of sequences, each message under the sequence it was stored with.
    const dir = await tempDir();
    const acked = await orderChild(dir, scenario);
    const storage = new FileStorage({ storeDir: dir, warn: () => undefined });
    try {
      const store = storage
        .account('$G')
        .openStream(streamConfig('ORDER', 'file', { maxMsgs }), Buffer.from('{}'));
      const st = store.state();
      assert.equal(st.msgs, st.lastSeq - st.firstSeq + 1, 'a hole in the sequences');
      for (let seq = st.firstSeq; seq <= st.lastSeq; seq++) {
        const m = store.loadMsg(seq)!;
        assert.equal(Number(m.data.toString('latin1', 0, 6)), seq);
      }
      // The blocks written before the kill are there: more than the acknowledged batch
      // (order: the held block; drop: four blocks of 32).
      const written = scenario === 'order' ? acked + 1 : 4 * 32;
      assert.ok(st.lastSeq >= written, `${st.lastSeq} stored, ${acked} acknowledged`);
      if (scenario === 'order') assert.equal(st.firstSeq, 1);
    } finally {
      await storage.close();
    }
  });
}

it('kill -9 while a round is on its way: the consumer state on disk is not ahead of the stream', async () => {
  // file-order-child.ts: a round's block write never completes; the consumer, which had
  // those messages delivered, writes its state (stop) before the kill.
  const dir = await tempDir();
  const acked = await orderChild(dir, 'consumer');
  const storage = new FileStorage({ storeDir: dir, warn: () => undefined });
  try {
    const store = storage
      .account('$G')
      .openStream(streamConfig('ORDER', 'file'), Buffer.from('{}'));
    const st = store.state();
    assert.ok(st.lastSeq >= acked, `${acked} acknowledged, ${st.lastSeq} stored`);
    const c = store.consumerStore('dur').state();
    assert.ok(
      c.delivered.stream <= st.lastSeq,
      `delivered up to ${c.delivered.stream}, the stream ends at ${st.lastSeq}`,
    );
  } finally {
    await storage.close();
  }
});
