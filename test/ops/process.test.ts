// bin/wirebus as a process: the pid and ports files, SIGHUP and `--signal reload`,
// SIGUSR1 log rotation, `--signal ldm` with a real client, SIGTERM, and the log
// line format of -T=false and -DV.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, Events } from 'nats';
import { freePort } from '../helpers/process.js';
import { RawClient } from '../helpers/raw.js';
import { ensureStopped, readText, runWirebus, tempDir, waitUntil } from './helpers.js';

const P1 = 'CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\n';
const LDM_EVENT: string = Events.LDM;

test('pid and ports files, reload by signal and by --signal, refused reloads, SIGTERM', async () => {
  const { dir, remove } = tempDir();
  const port = await freePort();
  const conf = join(dir, 'server.conf');
  const pidFile = join(dir, 'wirebus.pid');
  writeFileSync(conf, `listen: 127.0.0.1:${port}\nmax_payload: 1KB\n`);
  const w = runWirebus(['-c', conf, '-P', pidFile, '--ports_file_dir', dir]);
  try {
    await waitUntil(() => w.stderr().includes('Server is ready'), 10_000, 'ready');
    const pid = w.child.pid!;
    assert.match(w.stderr(), /\[INF\] Using configuration file: .*server\.conf\n/);
    assert.equal(readFileSync(pidFile, 'utf8'), String(pid));
    const portsFile = join(dir, `wirebus_${pid}.ports`);
    await waitUntil(() => existsSync(portsFile), 2000, 'ports file');
    assert.deepEqual(JSON.parse(readFileSync(portsFile, 'utf8')), {
      nats: [`nats://127.0.0.1:${port}`],
    });

    const c = await RawClient.open(port);
    assert.equal(await c.exchange(`${P1}PING\r\n`), 'PONG\r\n');

    // --signal reload=<pid file>: the new max_payload reaches the connected client.
    writeFileSync(conf, `listen: 127.0.0.1:${port}\nmax_payload: 2KB\n`);
    const sl = runWirebus(['--signal', `reload=${pidFile}`]);
    assert.equal(await sl.exited, 0);
    assert.ok(await c.waitFor((t) => t.includes('"max_payload":2048')), 'INFO after reload');
    c.take();
    await waitUntil(() => w.stderr().includes('Reloaded server configuration'), 2000, 'reload');
    assert.match(w.stderr(), /\[INF\] Reloaded: max_payload = 2048\n/);

    // A change that cannot be reloaded: refused, named, the old config stays.
    writeFileSync(conf, `listen: 127.0.0.1:${port + 1}\nmax_payload: 4KB\n`);
    process.kill(pid, 'SIGHUP');
    const refusal =
      `[ERR] Failed to reload server configuration: config reload not supported for Port: ` +
      `old=${port}, new=${port + 1}\n`;
    await waitUntil(() => w.stderr().includes(refusal), 2000, 'refusal');
    // A malformed file: refused with file:line.
    writeFileSync(conf, `listen: 127.0.0.1:${port}\nfoo: 1\n`);
    process.kill(pid, 'SIGHUP');
    await waitUntil(
      () =>
        w
          .stderr()
          .includes(`Failed to reload server configuration: ${conf}:2:1: unknown field "foo"`),
      2000,
      'malformed refusal',
    );
    // Still 2 KB: a 3 KB payload is refused, a 1.5 KB one goes through.
    const delivered = await c.exchange(`SUB a 1\r\nPUB a 1500\r\n${'x'.repeat(1500)}\r\nPING\r\n`);
    assert.ok(delivered.startsWith('MSG a 1 1500\r\n'), delivered.slice(0, 80));
    assert.equal(
      await c.exchange(`PUB a 3000\r\n${'x'.repeat(3000)}\r\n`, "'\r\n"),
      "-ERR 'Maximum Payload Violation'\r\n",
    );
    c.close();

    w.kill('SIGTERM');
    assert.equal(await w.exited, 0);
    assert.equal(existsSync(portsFile), false, 'ports file removed');
    assert.equal(existsSync(pidFile), false, 'pid file removed');
    assert.match(w.stderr(), /\[INF\] Initiating Shutdown\.\.\.\n.*\[INF\] Server Exiting\.\.\n$/);
  } finally {
    await ensureStopped(w);
    remove();
  }
});

test('-l file: SIGUSR1 reopens it after a rename; -T=false drops timestamps; -DV traces without payloads or credentials', async () => {
  const { dir, remove } = tempDir();
  const port = await freePort();
  const log = join(dir, 'wirebus.log');
  const w = runWirebus(['-a', '127.0.0.1', '-p', String(port), '-l', log, '-T=false', '-DV']);
  try {
    await waitUntil(() => readText(log).includes('Server is ready'), 10_000, 'ready');
    const pid = w.child.pid!;
    assert.equal(w.stderr(), '', 'everything goes to the file');
    const first = readText(log).split('\n')[0];
    assert.equal(first, `[${pid}] [INF] Starting nats-server`);

    const c = await RawClient.open(port);
    const connect =
      'CONNECT {"verbose":false,"pedantic":false,"user":"u","pass":"s3cret","name":"app","lang":"go","version":"1.2"}\r\n';
    assert.match(
      await c.exchange(`${connect}SUB foo 1\r\nPUB foo bar 5\r\nhello\r\nPING\r\n`),
      /^MSG foo 1 bar 5\r\nhello\r\nPONG\r\n$/,
    );
    c.close();
    await waitUntil(() => readText(log).includes('Client connection closed'), 2000, 'close');
    const text = readText(log);
    const cid = /cid:(\d+) - Client connection created/.exec(text)?.[1];
    assert.ok(cid !== undefined, text);
    const who = `127.0.0.1:\\d+ - cid:${cid}`;
    const named = `${who} - "v1\\.2:go:app"`;
    for (const line of [
      `\\[DBG\\] ${who} - Client connection created`,
      `\\[TRC\\] ${who} - <<- \\[CONNECT \\{"verbose":false,"pedantic":false,"user":"u","pass":"\\[REDACTED\\]","name":"app","lang":"go","version":"1\\.2"\\}\\]`,
      `\\[TRC\\] ${named} - <<- \\[SUB foo 1\\]`,
      `\\[TRC\\] ${named} - <<- \\[PUB foo bar 5\\]`,
      `\\[TRC\\] ${named} - ->> \\[MSG foo 1 bar 5\\]`,
      `\\[TRC\\] ${named} - <<- \\[PING\\]`,
      `\\[TRC\\] ${named} - ->> \\[PONG\\]`,
      `\\[DBG\\] ${named} - Client connection closed: Client Closed`,
    ]) {
      assert.match(text, new RegExp(`^\\[${pid}\\] ${line}$`, 'm'));
    }
    assert.doesNotMatch(text, /s3cret/);
    assert.doesNotMatch(text, /hello/, 'payloads are not logged');

    // Rotation: rename, SIGUSR1, the next lines go to a new file of the old name.
    renameSync(log, `${log}.1`);
    process.kill(pid, 'SIGUSR1');
    await waitUntil(() => readText(log).includes('File log re-opened'), 2000, 'reopen');
    assert.equal(readText(log), `[${pid}] [INF] File log re-opened\n`);
    assert.match(readText(`${log}.1`), /Trapped "user defined signal 1" signal\n$/);
    process.kill(pid, 'SIGINT');
    assert.equal(await w.exited, 0);
    assert.match(readText(log), /\[INF\] Server Exiting\.\.\n$/);
  } finally {
    await ensureStopped(w);
    remove();
  }
});

test('--signal ldm: the client hears ldm:true and is moved off, SIGTERM is ignored meanwhile, then the process exits', async () => {
  const { dir, remove } = tempDir();
  const port = await freePort();
  const conf = join(dir, 'ldm.conf');
  writeFileSync(
    conf,
    `port: ${port}\nhost: 127.0.0.1\nlame_duck_duration: "30s"\nlame_duck_grace_period: "500ms"\n`,
  );
  const w = runWirebus(['-c', conf]);
  try {
    await waitUntil(() => w.stderr().includes('Server is ready'), 10_000, 'ready');
    const nc = await connect({ servers: `127.0.0.1:${port}`, reconnect: false });
    const events: string[] = [];
    void (async () => {
      for await (const s of nc.status()) events.push(s.type);
    })();
    await nc.flush();

    const start = Date.now();
    const sl = runWirebus(['-sl', `ldm=${String(w.child.pid)}`]);
    assert.equal(await sl.exited, 0);
    await waitUntil(() => events.includes(LDM_EVENT), 2000, 'ldm event');
    w.kill('SIGTERM'); // ignored in lame duck mode, as the reference
    await nc.closed();
    const closedAfter = Date.now() - start;
    assert.ok(closedAfter >= 400, `closed after ${closedAfter} ms, before the grace period`);
    assert.equal(await w.exited, 0);
    const log = w.stderr();
    assert.match(log, /\[INF\] Entering lame duck mode, stop accepting new clients\n/);
    assert.match(log, /\[INF\] Closing existing clients\n/);
    assert.match(log, /\[INF\] Server Exiting\.\.\n$/);
  } finally {
    await ensureStopped(w);
    remove();
  }
});
