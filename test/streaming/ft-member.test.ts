// FtMember alone, on an in-memory bus with stores whose lock the test decides: the
// standby tries the lock only when heartbeats stop, an active server heartbeats, and
// of two servers that both believe they are active the later one aborts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Bus, BusHandler, BusSubscription } from '../../src/streaming/bus.js';
import { FtMember, type FtHost } from '../../src/streaming/ft.js';
import { sleep } from './store-fixtures.js';

const TIMING = { hbInterval: 50, hbTimeout: 150 };

/** Every subscriber of a subject gets every publish, at once. */
class MemoryBus implements Pick<Bus, 'subscribe' | 'publish'> {
  private readonly subs = new Map<string, Set<BusHandler>>();
  published = 0;

  subscribe(subject: string, handler: BusHandler): BusSubscription {
    let set = this.subs.get(subject);
    if (set === undefined) this.subs.set(subject, (set = new Set()));
    set.add(handler);
    return { unsubscribe: () => set.delete(handler) };
  }

  publish(subject: string, reply: string | null, data: Uint8Array): void {
    this.published++;
    for (const h of this.subs.get(subject) ?? []) h(subject, reply, Buffer.from(data));
  }
}

interface TestHost extends FtHost {
  lockFree: boolean;
  tries: number;
  activated: number;
  aborted: string[];
}

function host(serverId: string, bus: MemoryBus): TestHost {
  const h: TestHost = {
    serverId,
    clusterId: 'test-cluster',
    bus,
    lockFree: false,
    tries: 0,
    activated: 0,
    aborted: [],
    store: {
      tryExclusiveLock: () => {
        h.tries++;
        return Promise.resolve(h.lockFree);
      },
    },
    logger: { info: () => undefined, error: () => undefined },
    activate: () => {
      h.activated++;
      return Promise.resolve();
    },
    abort: (reason) => {
      h.aborted.push(reason);
    },
  };
  return h;
}

describe('FtMember', () => {
  it('a standby tries the lock only once heartbeats stop', async () => {
    const bus = new MemoryBus();
    const a = host('A', bus);
    const b = host('B', bus);
    a.lockFree = true;
    const ma = new FtMember(a, 'grp', TIMING);
    const mb = new FtMember(b, 'grp', TIMING);
    ma.start();
    await sleep(300);
    assert.equal(a.activated, 1);
    assert.equal(ma.isActive, true);
    mb.start();
    await sleep(400);
    assert.equal(b.tries, 0, 'B heard A and never tried the lock');
    ma.stop();
    await sleep(400);
    assert.notEqual(b.tries, 0, 'B tries once A is silent');
    assert.equal(b.activated, 0, 'but the lock is what makes it active');
    b.lockFree = true;
    await sleep(300);
    assert.equal(b.activated, 1);
    mb.stop();
  });

  it('of two servers active at once, the one activated later aborts', async () => {
    const bus = new MemoryBus();
    const a = host('A', bus);
    const b = host('B', bus);
    a.lockFree = true;
    b.lockFree = true;
    const ma = new FtMember(a, 'grp', TIMING);
    ma.start();
    await sleep(300);
    // B never heard A (as if partitioned), and took a lock it should not have had.
    const mb = new FtMember(b, 'other-subject-first', TIMING);
    mb.start();
    await sleep(300);
    mb.stop();
    const late = new FtMember(b, 'grp', { hbInterval: 50, hbTimeout: 10 });
    late.start();
    await sleep(300);
    assert.deepEqual(a.aborted, []);
    assert.match(b.aborted[0] ?? '', /^ft: serverID "A" claims to be active$/);
    ma.stop();
    late.stop();
  });
});
