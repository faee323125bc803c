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

/** Polls until the condition holds: on a loaded machine timers run late, never early. */
async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`);
    await sleep(20);
  }
}

describe('FtMember', () => {
  it('a standby tries the lock only once heartbeats stop', async () => {
    const bus = new MemoryBus();
    const a = host('A', bus);
    const b = host('B', bus);
    a.lockFree = true;
    // A heartbeat timeout far above any event-loop stall a loaded machine shows, so that
    // "B never tried" holds by design, not by luck.
    const timing = { hbInterval: 50, hbTimeout: 1_000 };
    const ma = new FtMember(a, 'grp', timing);
    const mb = new FtMember(b, 'grp', timing);
    try {
      ma.start();
      await until('A active', () => a.activated === 1);
      assert.equal(ma.isActive, true);
      mb.start();
      await sleep(400);
      assert.equal(b.tries, 0, 'B heard A and never tried the lock');
      ma.stop();
      await until('B tries once A is silent', () => b.tries !== 0);
      assert.equal(b.activated, 0, 'but the lock is what makes it active');
      b.lockFree = true;
      await until('B active once the lock is free', () => b.activated === 1);
    } finally {
      ma.stop();
      mb.stop();
    }
  });

  it('of two servers active at once, the one activated later aborts', async () => {
    const bus = new MemoryBus();
    const a = host('A', bus);
    const b = host('B', bus);
    a.lockFree = true;
    b.lockFree = true;
    const ma = new FtMember(a, 'grp', TIMING);
    // B never heard A (as if partitioned), and took a lock it should not have had.
    const mb = new FtMember(b, 'other-subject-first', TIMING);
    const late = new FtMember(b, 'grp', { hbInterval: 50, hbTimeout: 10 });
    try {
      ma.start();
      await until('A active', () => a.activated === 1);
      mb.start();
      await until('B active', () => b.activated === 1);
      mb.stop();
      late.start();
      await until('B aborts', () => b.aborted.length > 0);
      assert.deepEqual(a.aborted, []);
      assert.match(b.aborted[0] ?? '', /^ft: serverID "A" claims to be active$/);
    } finally {
      ma.stop();
      mb.stop();
      late.stop();
    }
  });
});
