// bin/wirebus through a symlink named `nats-server`, as test harnesses spawn it (the
// official nats.js launcher runs `nats-server` from PATH, then waits for
// `<ports_file_dir>/nats-server_<pid>.ports`): twelve spawned at once each write
// their ports file under the invoked name and answer PING; `--signal` without a pid
// looks for processes by that name. No timings are asserted (bench/startup.ts
// measures them).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { portsFilePath } from '../../src/ops/process-files.js';
import { isServerCommandLine } from '../../src/ops/signal-command.js';
import { RawClient } from '../helpers/raw.js';
import { ROOT, tempDir, waitUntil } from './helpers.js';

const P1 = 'CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\n';

/** `nats-server args...` from PATH, where PATH finds the symlink first. */
function spawnByName(binDir: string, args: readonly string[]): ChildProcess {
  const path = [binDir, dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);
  return spawn('nats-server', args, {
    env: { ...process.env, PATH: path },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.exitCode);
  }
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function stderrOf(child: ChildProcess): () => string {
  let text = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (t: string) => (text += t));
  return () => text;
}

test('the ports file and the --signal lookup are named after the program as invoked', () => {
  assert.equal(portsFilePath('/run', 42, 'nats-server'), '/run/nats-server_42.ports');
  assert.equal(portsFilePath('/run', 42), '/run/wirebus_42.ports');
  assert.equal(
    isServerCommandLine(['node', '/x/bin/nats-server', '-p', '-1'], 'nats-server'),
    true,
  );
  assert.equal(isServerCommandLine(['/usr/sbin/nats-server'], 'nats-server'), true);
  assert.equal(isServerCommandLine(['node', '/x/bin/wirebus'], 'nats-server'), false);
  assert.equal(isServerCommandLine(['node', '/x/bin/nats-server']), false);
});

test('twelve spawned at once through a symlink named nats-server: ports files, PING, --signal', async () => {
  const { dir, remove } = tempDir();
  const binDir = join(dir, 'bin');
  const portsDir = join(dir, 'ports');
  mkdirSync(binDir);
  mkdirSync(portsDir);
  symlinkSync(join(ROOT, 'bin', 'wirebus'), join(binDir, 'nats-server'));
  const children = Array.from({ length: 12 }, () =>
    spawnByName(binDir, ['-a', '127.0.0.1', '-p', '-1', '--ports_file_dir', portsDir]),
  );
  const logs = children.map(stderrOf);
  try {
    await Promise.all(
      children.map(async (child, i) => {
        const file = join(portsDir, `nats-server_${String(child.pid)}.ports`);
        // A generous limit only so that a broken build fails instead of hanging.
        await waitUntil(() => existsSync(file) || child.exitCode !== null, 60_000, file);
        assert.ok(existsSync(file), `server ${i} exited:\n${logs[i]!()}`);
        const ports = JSON.parse(readFileSync(file, 'utf8')) as { nats: string[] };
        assert.equal(ports.nats.length, 1);
        const url = new URL(ports.nats[0]!);
        assert.equal(url.hostname, '127.0.0.1');
        const c = await RawClient.open(Number(url.port));
        try {
          assert.equal(await c.exchange(`${P1}PING\r\n`), 'PONG\r\n');
        } finally {
          c.close();
        }
      }),
    );
    assert.equal(existsSync(join(portsDir, `wirebus_${String(children[0]!.pid)}.ports`)), false);

    // Without a pid, --signal looks for processes named as it was invoked: all twelve
    // (other nats-server processes on the machine may be listed too).
    const sl = spawnByName(binDir, ['--signal', 'reload']);
    const slErr = stderrOf(sl);
    assert.equal(await exitOf(sl), 1);
    assert.match(slErr(), /^wirebus: multiple nats-server processes running:\n/);
    const listed = new Set(slErr().split('\n').slice(1));
    for (const child of children) assert.ok(listed.has(String(child.pid)), slErr());

    // SIGTERM: each exits cleanly and removes its ports file.
    for (const child of children) child.kill('SIGTERM');
    assert.deepEqual(await Promise.all(children.map(exitOf)), Array(12).fill(0));
    for (const child of children) {
      assert.equal(existsSync(join(portsDir, `nats-server_${String(child.pid)}.ports`)), false);
    }
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.all(children.map(exitOf));
    remove();
  }
});
