// Part of `npm run build`: runs the bundled command once, up to "Server is ready" on
// loopback ports chosen by the system, then has one client connect, go through the
// handshake (INFO, CONNECT, PING/PONG), publish to itself and leave, and saves V8's
// code cache of everything that compiled (dist/bundle/cli.cjs.cache; see
// bin/load-bundle.cjs). With the connection's path in the cache, a spawned server's
// first clients do not wait for that code to be compiled (the connection storm of
// ../shared/bench starts each server fresh).

import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { setTimeout } from 'node:timers';
import { setFlagsFromString } from 'node:v8';

const { loadBundle } = createRequire(import.meta.url)('../bin/load-bundle.cjs');

const { exports: cli, saveCache } = loadBundle();
const write = process.stderr.write.bind(process.stderr);

function fail(why) {
  write(`warm-code-cache: ${why}\n${log}`);
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
    // The server notices the close on its next turn; let it run its side first.
    setTimeout(() => {
      restoreDefaultFlags();
      saveCache();
      process.exit(0);
    }, 50);
  });
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
cli.main(['-a', '127.0.0.1', '-p', '-1', '-m', '-1']).then(
  (code) => fail(`the server stopped (${code}) before it was ready`),
  (err) => fail(err instanceof Error ? err.stack : String(err)),
);
