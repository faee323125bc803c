// Logging: with debug and trace off, the message path never calls the logger (the
// guards are booleans); with them on, the lines are the reference's; the file
// logger writes synchronously and takes new settings on reload.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { C0, RawClient } from '../helpers/raw.js';
import { createLogger } from '../../src/server/logger.js';
import { Server } from '../../src/server/server.js';
import { MemoryLogger, startLogged, tempDir } from './helpers.js';

class StrictLogger extends MemoryLogger {
  override debug(t: string): void {
    throw new Error(`debug called while off: ${t}`);
  }
  override trace(t: string): void {
    throw new Error(`trace called while off: ${t}`);
  }
}

test('with debug and trace off, traffic never reaches debug() or trace()', async () => {
  const log = new StrictLogger();
  const server = new Server({ host: '127.0.0.1', port: 0 }, log);
  await server.start();
  try {
    const sub = await RawClient.open(server.port);
    assert.equal(await sub.exchange(`${C0}SUB foo 1\r\nPING\r\n`), 'PONG\r\n');
    const pub = await RawClient.open(server.port);
    let batch = C0;
    for (let i = 0; i < 100; i++) batch += `PUB foo ${i % 2 === 0 ? 'r ' : ''}5\r\nhello\r\n`;
    batch += 'HPUB foo 12 17\r\nNATS/1.0\r\n\r\nhello\r\nUNSUB 9\r\nSUB\r\n';
    pub.send(batch);
    assert.ok(await sub.waitFor((t) => (t.match(/MSG foo 1/g) ?? []).length === 100));
    assert.ok(await pub.waitClosed(), 'closed on the bad SUB');
    sub.close();
  } finally {
    await server.close();
  }
});

test('debug lines for connections, trace lines for ops in and out', async () => {
  const { server, log } = await startLogged({ trace: true });
  try {
    const c = await RawClient.open(server.port);
    await c.exchange(
      'CONNECT {"verbose":false,"pedantic":false,"auth_token":"t0ken","protocol":1}\r\nSUB a 9\r\nPUB a r 2\r\nhi\r\nUNSUB 9 5\r\nPING\r\n',
    );
    c.send('BOGUS\r\n');
    assert.ok(await c.waitClosed());
    await new Promise((r) => setTimeout(r, 20));
    const ops = log.lines
      .slice(0, -1)
      .filter((l) => l.startsWith('[TRC]') || l.startsWith('[DBG]'))
      .map((l) => l.replace(/^(\[...\]) 127\.0\.0\.1:\d+ - cid:\d+ - /, '$1 '));
    assert.deepEqual(ops, [
      '[DBG] Client connection created',
      '[TRC] <<- [CONNECT {"verbose":false,"pedantic":false,"auth_token":"[REDACTED]","protocol":1}]',
      '[TRC] <<- [SUB a 9]',
      '[TRC] <<- [PUB a r 2]',
      '[TRC] ->> [MSG a 9 r 2]',
      '[TRC] <<- [UNSUB 9 5]',
      '[TRC] <<- [PING]',
      '[TRC] ->> [PONG]',
      '[TRC] ->> [-ERR Unknown Protocol Operation]',
    ]);
    assert.match(
      log.lines.at(-1) ?? '',
      /^\[DBG\] 127\.0\.0\.1:\d+ - cid:\d+ - Client connection closed: /,
    );
  } finally {
    await server.close();
  }
});

test('the file logger: reference line format, -T off, levels and file changed by configure()', () => {
  const { dir, remove } = tempDir();
  try {
    const a = join(dir, 'a.log');
    const b = join(dir, 'b.log');
    const logger = createLogger({
      debug: false,
      trace: false,
      logtime: true,
      logFile: a,
      quiet: false,
    });
    logger.info('one');
    logger.debug('hidden');
    assert.equal(logger.debugEnabled, false);
    logger.configure({ debug: true, trace: false, logtime: false, logFile: b, quiet: false });
    assert.equal(logger.debugEnabled, true);
    assert.equal(logger.traceEnabled, false);
    logger.debug('two');
    logger.warn('three');
    logger.close();
    assert.match(
      readFileSync(a, 'utf8'),
      new RegExp(
        `^\\[${process.pid}\\] \\d{4}/\\d\\d/\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{6} \\[INF\\] one\\n$`,
      ),
    );
    assert.equal(
      readFileSync(b, 'utf8'),
      `[${process.pid}] [DBG] two\n[${process.pid}] [WRN] three\n`,
    );
  } finally {
    remove();
  }
});
