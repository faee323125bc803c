// Part of `npm run build`: runs the bundled command once, up to "Server is ready" on
// loopback ports chosen by the system, then has one client connect, go through the
// handshake (INFO, CONNECT, PING/PONG), publish to itself and leave, then drives
// JetStream a little (below), and saves V8's code cache of everything that compiled
// (dist/bundle/cli.cjs.cache; see bin/load-bundle.cjs). With the connection's path in
// the cache, a spawned server's first clients do not wait for that code to be compiled
// (the connection storm of ../shared/bench starts each server fresh).
//
// JetStream: a fresh server's first thousands of messages to a stream, or from a
// consumer, cost it 1.5-2 times the CPU of later ones, in V8's parser and compilers.
// With the bytecode of those paths in the cache (acked publishes, pull consumers with
// acks, push consumers, KV put and get, on memory and file streams), a fresh server's
// first consumer spent 9-16% less CPU per message (bench/RESULTS.md, "JetStream
// consumers: the code cache"); the cache grows by about 240 KB, a server's start-up by
// under 1 ms of CPU and 0.3 MiB.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers';
import { setFlagsFromString } from 'node:v8';

const require = createRequire(import.meta.url);
const { loadBundle } = require('../bin/load-bundle.cjs');
const nats = require('nats');

const { exports: cli, saveCache } = loadBundle();
const write = process.stderr.write.bind(process.stderr);

function fail(why) {
  write(`warm-code-cache: ${why}\n${log}`);
  rmSync(storeDir, { recursive: true, force: true });
  process.exit(1);
}

/** One client's whole life on the server's client port, then the cache is saved. */
function handshake(port) {
  const socket = connect(port, '127.0.0.1');
  let seen = '';
  let sentConnect = false;
  socket.setEncoding('latin1');
  socket.on('data', (text) => {
    seen += text;
    if (!sentConnect && seen.startsWith('INFO ') && seen.includes('\r\n')) {
      sentConnect = true;
      socket.write(
        'CONNECT {"verbose":false,"pedantic":false,"name":"warm","lang":"node","version":"0"}\r\n' +
          'SUB warm.> 1\r\nPUB warm.up 2\r\nhi\r\nPING\r\n',
      );
    }
    if (seen.includes('PONG\r\n')) socket.end();
  });
  socket.on('error', (err) => fail(err.message));
  socket.on('close', () => {
    if (!seen.includes('MSG warm.up 1 2\r\nhi\r\n')) fail(`unexpected answer: ${seen}`);
    jetstream(port).then(
      // The server notices the close on its next turn; let it run its side first.
      () =>
        setTimeout(() => {
          restoreDefaultFlags();
          saveCache();
          rmSync(storeDir, { recursive: true, force: true });
          process.exit(0);
        }, 50),
      (err) => fail(`jetstream: ${err instanceof Error ? err.stack : String(err)}`),
    );
  });
}

/** How many messages each path runs: enough to compile them all, few enough for a build. */
const WARM_MSGS = 1000;

/** Resolves once WARM_MSGS messages came to `subject`. */
function received(nc, subject) {
  let n = 0;
  return new Promise((resolve) => {
    nc.subscribe(subject, {
      callback: () => {
        if (++n === WARM_MSGS) resolve();
      },
    });
  });
}

/** Each JetStream path a fresh server's first clients run, once per storage. */
async function jetstream(port) {
  const nc = await nats.connect({ servers: `127.0.0.1:${port}` });
  const jsm = await nc.jetstreamManager();
  const data = new Uint8Array(128);
  for (const storage of ['memory', 'file']) {
    const name = `WARM_${storage}`;
    await jsm.streams.add({ name, subjects: [`${name}.>`], storage });
    // Acked publishes, a window of them in flight, as a loaded publisher sends them.
    const inbox = nats.createInbox();
    const allAcked = received(nc, inbox);
    for (let i = 0; i < WARM_MSGS; i++) nc.publish(`${name}.x`, data, { reply: inbox });
    await allAcked;
    await nc.jetstream().publish(`${name}.x`, data);
    // A pull consumer with explicit acks.
    await jsm.consumers.add(name, { durable_name: 'pull', ack_policy: nats.AckPolicy.Explicit });
    const pull = await nc.jetstream().consumers.get(name, 'pull');
    let got = 0;
    for await (const m of await pull.consume({ max_messages: 500 })) {
      m.ack();
      if (++got === WARM_MSGS) break;
    }
    // A push consumer without acks.
    const deliver = nats.createInbox();
    const allPushed = received(nc, deliver);
    await nc.flush();
    await jsm.consumers.add(name, {
      durable_name: 'push',
      deliver_subject: deliver,
      ack_policy: nats.AckPolicy.None,
    });
    await allPushed;
    await jsm.consumers.info(name, 'push');
    await jsm.streams.info(name);
    // KV put and get.
    const kv = await nc.jetstream().views.kv(`warm_${storage}`, { storage });
    for (let i = 0; i < 50; i++) {
      await kv.put('k', data);
      await kv.get('k');
    }
  }
  await nc.close();
}

/**
 * Puts the V8 flags the server set once ready (cli.READY_V8_FLAGS) back to the defaults
 * this Node prints, so that the cache is made under the flags a server starts with.
 */
function restoreDefaultFlags() {
  const options = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout;
  for (const flag of cli.READY_V8_FLAGS) {
    // --name=value, --name or --no-name; the default is printed in one of those forms.
    const name = flag.replace(/^--(no-)?/, '').split('=')[0];
    const dflt = new RegExp(`default: (--(?:no-)?${name}(?:=\\S+)?)\\s`).exec(options ?? '');
    if (dflt === null) fail(`no default for --${name} in node --v8-options`);
    else setFlagsFromString(dflt[1]);
  }
}

let log = '';
process.stderr.write = (chunk) => {
  log += String(chunk);
  if (log.includes('Server is ready')) {
    const port = /Listening for client connections on [^\s]*:(\d+)/.exec(log);
    if (port === null) fail('no client port in the log');
    else handshake(Number(port[1]));
    process.stderr.write = () => true;
  }
  return true;
};
const storeDir = mkdtempSync(join(tmpdir(), 'wirebus-warm-'));
cli.main(['-a', '127.0.0.1', '-p', '-1', '-m', '-1', '-js', '-sd', storeDir]).then(
  (code) => fail(`the server stopped (${code}) before it was ready`),
  (err) => fail(err instanceof Error ? err.stack : String(err)),
);
