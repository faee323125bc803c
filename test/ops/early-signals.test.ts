// Signals that arrive while bin/wirebus starts: held, then acted on once it runs (the
// reference traps them before it listens). Untrapped, SIGHUP's default action ended
// the process when sent on "Server is ready" while the streaming layer still started.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../helpers/process.js';
import { EarlySignals } from '../../src/ops/lifecycle.js';
import { runWirebus, tempDir, waitUntil } from './helpers.js';

test('EarlySignals holds what this process is sent, in order, until released', async () => {
  const early = new EarlySignals();
  // Signal handles do not keep the loop alive: a timer does, until each has come.
  const alive = setInterval(() => undefined, 1000);
  for (const signal of ['SIGHUP', 'SIGUSR1'] as const) {
    const dispatched = new Promise((resolve) => process.once(signal, resolve));
    process.kill(process.pid, signal);
    await dispatched;
  }
  clearInterval(alive);
  assert.deepEqual(early.release(), ['SIGHUP', 'SIGUSR1']);
  assert.equal(process.listenerCount('SIGHUP'), 0);
  assert.deepEqual(early.release(), []);
});

test('a SIGHUP sent on "Server is ready", before streaming is up, reloads once it is', async () => {
  const { dir, remove } = tempDir();
  const port = await freePort();
  const conf = join(dir, 'server.conf');
  writeFileSync(conf, `listen: 127.0.0.1:${port}\nmax_payload: 1KB\n`);
  const w = runWirebus(['-c', conf, '--streaming', '-st', 'MEMORY']);
  try {
    // Sent from the 'data' event that carries the line: as soon as this process can.
    let sent = false;
    w.child.stderr?.on('data', (t: string) => {
      if (!sent && t.includes('] Server is ready')) {
        sent = true;
        writeFileSync(conf, `listen: 127.0.0.1:${port}\nmax_payload: 2KB\n`);
        w.child.kill('SIGHUP');
      }
    });
    await waitUntil(() => w.stderr().includes('Streaming Server is ready'), 10_000, 'streaming');
    await waitUntil(() => w.stderr().includes('Reloaded: max_payload = 2048'), 5000, 'reload');
    assert.equal(w.child.exitCode, null, w.stderr());
    w.kill('SIGTERM');
    assert.equal(await w.exited, 0);
  } finally {
    w.kill('SIGKILL');
    remove();
  }
});
