// The reference for the capture scripts (capture-reference*.ts): nats-server 2.9.10 -js on
// a free loopback port with a fresh store directory, for the time `body` runs.

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/process.js';

export async function withReference<T>(body: (port: number) => Promise<T>): Promise<T> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-js-capture-'));
  const ref = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, 800));
  try {
    return await body(port);
  } finally {
    ref.kill();
  }
}
