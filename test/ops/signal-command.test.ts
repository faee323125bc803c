// `--signal <command>[=<pid|pidfile>]`: the reference's commands, signals, messages
// and exit codes; finding the one running wirebus when no pid is given.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  findServerPids,
  isServerCommandLine,
  sendSignalCommand,
  SignalCommandError,
} from '../../src/ops/signal-command.js';
import { runWirebus, tempDir } from './helpers.js';

function recorder(): {
  sent: [number, string][];
  kill: (pid: number, signal: NodeJS.Signals) => void;
} {
  const sent: [number, string][] = [];
  return { sent, kill: (pid, signal) => sent.push([pid, signal]) };
}

/** A fake /proc holding the given command lines. */
function fakeProc(dir: string, processes: Record<number, string[]>): string {
  const root = join(dir, 'proc');
  mkdirSync(root, { recursive: true });
  mkdirSync(join(root, 'self'));
  for (const [pid, argv] of Object.entries(processes)) {
    mkdirSync(join(root, pid));
    writeFileSync(join(root, pid, 'cmdline'), argv.join('\0') + '\0');
  }
  return root;
}

test('each command sends the reference signal', () => {
  const expected: Record<string, string> = {
    stop: 'SIGKILL',
    quit: 'SIGINT',
    term: 'SIGTERM',
    reopen: 'SIGUSR1',
    reload: 'SIGHUP',
    ldm: 'SIGUSR2',
  };
  for (const [command, signal] of Object.entries(expected)) {
    const r = recorder();
    sendSignalCommand(`${command}=4321`, { kill: r.kill });
    assert.deepEqual(r.sent, [[4321, signal]], command);
  }
});

test('pid files, bad pids, bad commands and extra parameters give the reference messages', () => {
  const { dir, remove } = tempDir();
  try {
    const r = recorder();
    const pidFile = join(dir, 'wirebus.pid');
    writeFileSync(pidFile, '777');
    sendSignalCommand(`reload=${pidFile}`, { kill: r.kill });
    // A trailing newline is accepted (the reference refuses it).
    writeFileSync(pidFile, '778\n');
    sendSignalCommand(`reopen=${pidFile}`, { kill: r.kill });
    assert.deepEqual(r.sent, [
      [777, 'SIGHUP'],
      [778, 'SIGUSR1'],
    ]);

    const fails = (spec: string, message: string): void => {
      assert.throws(
        () => {
          sendSignalCommand(spec, { kill: r.kill });
        },
        (err: unknown) => err instanceof SignalCommandError && err.message === message,
        spec,
      );
    };
    fails('reload=abc', 'invalid pid: abc');
    fails(`reload=${join(dir, 'missing.pid')}`, `invalid pid: ${join(dir, 'missing.pid')}`);
    writeFileSync(pidFile, 'abc\n');
    fails(`reload=${pidFile}`, 'invalid pid: abc\n');
    fails('foo=12', 'unknown signal "foo"');
    fails('reload=1=2', 'invalid signal parameters: [2]');
    fails('reload=1=2=3', 'invalid signal parameters: [2 3]');
    assert.equal(r.sent.length, 2, 'nothing sent on an error');
  } finally {
    remove();
  }
});

test('kill errors read as Go prints them', () => {
  assert.throws(
    () => {
      sendSignalCommand('reload=4321', {
        kill: () => {
          throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
        },
      });
    },
    { message: 'no such process' },
  );
});

test('without a pid: the one wirebus process, none, or several', () => {
  const { dir, remove } = tempDir();
  try {
    const proc = fakeProc(dir, {
      100: ['node', '/srv/wirebus/bin/wirebus', '-c', 'a.conf'],
      101: ['/usr/bin/node', '--enable-source-maps', 'node_modules/.bin/wirebus'],
      102: ['wirebus', '-p', '4223'],
      103: ['nats-server', '-p', '4222'],
      104: ['node', 'other.js', 'wirebus'],
      105: ['vim', 'bin/wirebus'],
      106: ['node', '/srv/wirebus/bin/wirebus', '--signal', 'reload'],
    });
    // The command's own process (106) is skipped.
    assert.deepEqual(findServerPids(proc, 106), [100, 101, 102]);

    const one = fakeProc(join(dir, 'one'), { 200: ['node', 'bin/wirebus'] });
    const r = recorder();
    sendSignalCommand('reload', { procRoot: one, selfPid: 1, kill: r.kill });
    sendSignalCommand('ldm=', { procRoot: one, selfPid: 1, kill: r.kill });
    assert.deepEqual(r.sent, [
      [200, 'SIGHUP'],
      [200, 'SIGUSR2'],
    ]);

    assert.throws(
      () => sendSignalCommand('reload', { procRoot: proc, selfPid: 106, kill: r.kill }),
      {
        message: 'multiple wirebus processes running:\n100\n101\n102',
      },
    );
    const none = fakeProc(join(dir, 'none'), { 300: ['nats-server'] });
    assert.throws(() => sendSignalCommand('reload', { procRoot: none, selfPid: 1, kill: r.kill }), {
      message: 'no wirebus processes running',
    });
    // As the reference, the pid is resolved before the command is checked.
    assert.throws(() => sendSignalCommand('foo', { procRoot: none, selfPid: 1, kill: r.kill }), {
      message: 'no wirebus processes running',
    });
  } finally {
    remove();
  }
});

test('command lines that count as a wirebus server', () => {
  assert.equal(isServerCommandLine(['node', 'bin/wirebus']), true);
  assert.equal(isServerCommandLine(['/opt/node20/bin/node', '/x/bin/wirebus', '-DV']), true);
  assert.equal(isServerCommandLine(['/usr/local/bin/wirebus']), true);
  assert.equal(isServerCommandLine(['node', 'dist/src/cli.js']), false);
  assert.equal(isServerCommandLine(['bash', '-c', 'bin/wirebus']), false);
  assert.equal(isServerCommandLine([]), false);
});

test('bin/wirebus --signal: exit 1 and the message on stderr, exit 0 once sent', async () => {
  const bad = runWirebus(['-sl', 'foo=1']);
  assert.equal(await bad.exited, 1);
  assert.equal(bad.stderr(), 'wirebus: unknown signal "foo"\n');

  const invalid = runWirebus(['--signal=reload=notapid']);
  assert.equal(await invalid.exited, 1);
  assert.equal(invalid.stderr(), 'wirebus: invalid pid: notapid\n');

  // A real process to signal: reload on a process that traps SIGHUP.
  const target = spawn(
    process.execPath,
    [
      '-e',
      "process.on('SIGHUP', () => { console.log('HUP'); process.exit(0); }); setInterval(() => {}, 1000); console.log('up');",
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let out = '';
  target.stdout.setEncoding('utf8');
  const up = new Promise<void>((resolve) => {
    target.stdout.on('data', (t: string) => {
      out += t;
      if (out.includes('up')) resolve();
    });
  });
  const exited = new Promise<void>((resolve) => target.once('exit', () => resolve()));
  await up;
  const ok = runWirebus(['-sl', `reload=${String(target.pid)}`]);
  assert.equal(await ok.exited, 0);
  assert.equal(ok.stderr(), '');
  await exited;
  assert.match(out, /HUP/);
});
