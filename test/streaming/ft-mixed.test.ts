// A mixed fault-tolerance group on one FILE directory: wirebus and the reference
// nats-streaming-server as the two members of one ft_group (the migration with no
// downtime: add wirebus as the standby, stop the reference). The active one, of
// either kind, is killed with kill -9 while a client publishes with acks and a
// durable consumes; the other takes over with every acknowledged message and the
// durable's position (ft-scenario.ts). Both must never be active at once: the fcntl
// lock on .rootdir.lck is what they share. Needs the reference binary; skipped
// without it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { failover, referenceMember, stopAll, wirebusMember } from './ft-scenario.js';
import { skipWithoutReference } from './stan-reference.js';

const skip = skipWithoutReference();
const dirs: string[] = [];
after(async () => {
  await stopAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function sharedDir(): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-ft-mixed-'));
  dirs.push(dir);
  return ['-st', 'FILE', '--dir', dir];
}

describe('mixed fault-tolerance group on a shared FILE directory', { skip }, () => {
  it('wirebus active, reference standby: kill -9 of wirebus, the reference takes over', async () => {
    const store = sharedDir();
    await failover(wirebusMember(store), referenceMember(store));
  });

  it('reference active, wirebus standby: kill -9 of the reference, wirebus takes over', async () => {
    const store = sharedDir();
    await failover(referenceMember(store), wirebusMember(store));
  });
});
