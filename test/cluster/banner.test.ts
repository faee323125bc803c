// The start-up lines that name the cluster, compared with what nats-server 2.9.10
// logs for the same flags: `  Cluster:  <name>` in the banner (even when only a name
// is configured), then `Cluster name is <name>` and `Listening for route connections
// on host:port` once the server is ready.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { connect } from 'nats';
import { freePort, startWirebus } from '../helpers/process.js';
import { referenceMissing, waitFor } from './helpers.js';

const missing = referenceMissing();

/** The log's lines without pid, time and level, from `Starting` up to the last cluster line. */
function lines(log: string): string[] {
  return log
    .split('\n')
    .map((l) => /^\[\d+\] \S+ \S+ \[(?:INF|WRN)\] (.*)$/.exec(l)?.[1])
    .filter((l): l is string => l !== undefined)
    .filter((l) => !l.startsWith('  Version:') && !/^ {2}(?:Name|ID): /.test(l));
}

/** Runs nats-server with args until its log contains `until`, then stops it. */
async function referenceLog(args: readonly string[], until: string): Promise<string> {
  const child = spawn('nats-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (t: string) => (log += t));
  try {
    await waitFor(`nats-server to log ${until}`, () => log.includes(until), 8000);
  } finally {
    child.kill('SIGKILL');
  }
  return log;
}

describe('the cluster lines of the start-up log', { skip: missing ?? false }, () => {
  it('are those of the reference with a cluster port', async () => {
    const [p1, p2, c1, c2] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const flags = (c: number): string[] => [
      '--cluster',
      `nats://127.0.0.1:${c}`,
      '--cluster_name',
      'banner',
    ];
    const until = 'Listening for route connections';
    const ref = await referenceLog(['-a', '127.0.0.1', '-p', String(p1), ...flags(c1)], until);
    const wb = await startWirebus(p2, flags(c2));
    try {
      await waitFor('the route listener', () => wb.log().includes(until));
      const expected = lines(ref).map((l) => l.replace(`:${p1}`, ':P').replace(`:${c1}`, ':C'));
      const actual = lines(wb.log()).map((l) => l.replace(`:${p2}`, ':P').replace(`:${c2}`, ':C'));
      assert.deepEqual(actual, expected);
      assert.deepEqual(expected, [
        'Starting nats-server',
        '  Git:      [not set]',
        '  Cluster:  banner',
        'Listening for client connections on 127.0.0.1:P',
        'Server is ready',
        'Cluster name is banner',
        'Listening for route connections on 127.0.0.1:C',
      ]);
    } finally {
      await wb.stop();
    }
  });

  it('name a drawn cluster name the same way', async () => {
    const [p, c] = await Promise.all([freePort(), freePort()]);
    const wb = await startWirebus(p, ['--cluster', `nats://127.0.0.1:${c}`]);
    try {
      await waitFor('the route listener', () => wb.log().includes('Listening for route'));
      const name = /Cluster name is (\S+)/.exec(wb.log())?.[1] ?? '';
      assert.notEqual(name, '');
      const l = lines(wb.log());
      assert.ok(l.includes(`  Cluster:  ${name}`));
      const at = l.indexOf(`Cluster name is ${name}`);
      assert.equal(l[at + 1], 'Cluster name was dynamically generated, consider setting one');
    } finally {
      await wb.stop();
    }
  });

  it('name a cluster configured without a port, in the banner and in INFO', async () => {
    const p = await freePort();
    const wb = await startWirebus(p, ['--cluster_name', 'lonely']);
    try {
      assert.ok(lines(wb.log()).includes('  Cluster:  lonely'));
      assert.ok(!wb.log().includes('Cluster name is'));
      const nc = await connect({ servers: wb.url });
      assert.equal(nc.info?.cluster, 'lonely');
      await nc.close();
    } finally {
      await wb.stop();
    }
  });
});
