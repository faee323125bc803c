// The queue-member scenario of the monitoring fixtures (fixtures/queue-monitor.json):
// plain and durable queue groups whose members join after the group was sent
// messages, leave with unacked messages that go to another member, close and
// unsubscribe; after each step /streaming/channelsz?subs=1 and clientsz?subs=1 are
// taken. capture-queue-monitor.ts runs it against the reference, the test against
// wirebus; both go through this one function, so the steps cannot drift apart.

import {
  connect,
  publish,
  sleep,
  subscribe,
  unsubscribe,
  type Received,
  type Stan,
} from './stan.js';

export interface Snapshot {
  readonly step: string;
  readonly channelsz: unknown;
  readonly clientsz: unknown;
}

/** Values that differ from run to run: compared by type only. */
export const QUEUE_MONITOR_VARIABLE = new Set([
  'inbox',
  'ack_inbox',
  'hb_inbox',
  'server_id',
  'now',
]);

/** Lets deliveries, handovers and acks settle before a snapshot. */
const SETTLE_MS = 400;

export async function queueMonitorScenario(
  url: string,
  http: string,
  clusterID: string,
): Promise<Snapshot[]> {
  const snaps: Snapshot[] = [];
  const clients: Stan[] = [];
  const client = async (id: string): Promise<Stan> => {
    const sc = await connect(url, clusterID, id);
    clients.push(sc);
    return sc;
  };
  const snap = async (step: string): Promise<void> => {
    await sleep(SETTLE_MS);
    const get = async (path: string): Promise<unknown> => (await fetch(http + path)).json();
    snaps.push({
      step,
      channelsz: await get('/streaming/channelsz?subs=1'),
      clientsz: await get('/streaming/clientsz?subs=1'),
    });
  };
  // Manual acks that are never sent, unless `ack`: pending messages stay pending.
  const member = (sc: Stan, channel: string, group: string, durable = '', ack = false) => {
    const o = sc.subscriptionOptions().setManualAckMode(true).setAckWait(60_000);
    if (durable !== '') o.setDurableName(durable);
    return subscribe(sc, channel, o, group, ack ? (m) => m.ack() : undefined);
  };
  const pub = async (sc: Stan, channel: string, n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await publish(sc, channel, `${channel}-${i}`);
  };
  try {
    const p = await client('pub');

    // A plain group: a member that joins after the group was sent messages.
    const a1 = await client('a1');
    const m1 = await member(a1, 'plain', 'q');
    await pub(p, 'plain', 3);
    await snap('plain: first member was sent 1-3');
    const a2 = await client('a2');
    const m2 = await member(a2, 'plain', 'q');
    await snap('plain: a second member joins');
    await pub(p, 'plain', 2);
    await snap('plain: 4 and 5 go to the new member');
    await unsubscribe(m1.sub);
    await snap('plain: the first member leaves, its 1-3 go to the second');
    const a3 = await client('a3');
    const m3 = await member(a3, 'plain', 'q');
    await unsubscribe(m2.sub, true);
    await snap('plain: a third member joins, the second closes, 1-5 go to the third');
    await unsubscribe(m3.sub);
    await snap('plain: the last member unsubscribes');

    // A plain group whose members ack: a member leaves with nothing unacked.
    const b1 = await client('b1');
    const acked = await member(b1, 'acked', 'q', '', true);
    await pub(p, 'acked', 3);
    await acked.waitFor(3);
    const b2 = await client('b2');
    await member(b2, 'acked', 'q');
    await snap('acked: a member joins a group that was sent and acked 1-3');
    await unsubscribe(acked.sub);
    await snap('acked: the first member leaves with nothing pending');

    // A durable group: join, leave with redistribution, the last member closes
    // (the group goes offline), a member resumes it, then unsubscribes.
    const d1 = await client('d1');
    const dm1 = await member(d1, 'durable', 'dq', 'dur');
    await pub(p, 'durable', 2);
    const d2 = await client('d2');
    const dm2: Received = await member(d2, 'durable', 'dq', 'dur');
    await snap('durable: a second member joins after 1-2');
    await pub(p, 'durable', 1);
    await unsubscribe(dm1.sub, true);
    await snap('durable: the first member closes, its 1-2 go to the second');
    await unsubscribe(dm2.sub, true);
    await snap('durable: the last member closes, the group is offline');
    const d3 = await client('d3');
    const dm3 = await member(d3, 'durable', 'dq', 'dur');
    await snap('durable: a member resumes the group');
    await pub(p, 'durable', 1);
    await snap('durable: 4 goes to the resumed member');
    await unsubscribe(dm3.sub);
    await snap('durable: the member unsubscribes, the group is gone');
  } finally {
    for (const sc of clients) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 1000);
        sc.once('close', () => {
          clearTimeout(t);
          resolve();
        });
        sc.close();
      });
    }
  }
  return snaps;
}

/**
 * A snapshot with its subscription lists in a stable order (the reference walks Go
 * maps) and run-specific values replaced by their type.
 */
export function normalise(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map((x) => normalise(x));
    const isSubs = items.every((x) => typeof x === 'object' && x !== null && 'client_id' in x);
    if (isSubs) items.sort((a, b) => byJson(a, b));
    return items;
  }
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      out[k] = QUEUE_MONITOR_VARIABLE.has(k) ? `<${typeof x}>` : normalise(x);
    }
    return out;
  }
  return v;
}

function byJson(a: unknown, b: unknown): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
