// Small builders shared by the store suite.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Long, nowNanos } from '../../src/streaming/protocol/index.js';
import {
  isStoreError,
  makeStoredMsg,
  type ServerInfoRecord,
  type MsgStore,
  type StoreErrorCode,
  type StoredMsg,
  type SubInit,
} from '../../src/streaming/store/index.js';

export { sleep };

/** The server info of a cluster named test-cluster, as a server would init() it. */
export const SERVER_INFO: ServerInfoRecord = {
  clusterID: 'test-cluster',
  discovery: '_STAN.discover.test-cluster',
  publish: '_STAN.pub.test-cluster',
  subscribe: '_STAN.sub.test-cluster',
  unsubscribe: '_STAN.unsub.test-cluster',
  close: '_STAN.close.test-cluster',
  subClose: '_STAN.subclose.test-cluster',
  acksSubs: '_STAN.ack.test-cluster',
  nodeID: '',
};

/** Message `seq` on `channel`, stamped now unless a timestamp is given. */
export function msg(channel: string, seq: number, timestamp: Long = nowNanos()): StoredMsg {
  return makeStoredMsg(seq, timestamp, channel, '', Buffer.from(`payload-${seq}`));
}

/** A timestamp `ms` milliseconds from now (negative: in the past). */
export function nanosFromNow(ms: number): Long {
  return nowNanos().add(Long.fromNumber(ms).multiply(1_000_000));
}

export function sub(overrides: Partial<SubInit> = {}): SubInit {
  return {
    clientID: 'me',
    qGroup: '',
    inbox: '_INBOX.deliver',
    ackInbox: '_INBOX.ack',
    maxInFlight: 1024,
    ackWaitInSecs: 30,
    durableName: '',
    lastSent: 0,
    isDurable: false,
    isClosed: false,
    ...overrides,
  };
}

export function assertStoreError(fn: () => unknown, code: StoreErrorCode, text?: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(isStoreError(err, code), `expected StoreError ${code}, got ${String(err)}`);
    if (text !== undefined) assert.equal(err.message, text);
    return true;
  });
}

export function assertSameMsg(actual: StoredMsg | undefined, expected: StoredMsg): void {
  assert.ok(actual, `message ${expected.sequence} is missing`);
  assert.equal(actual.sequence, expected.sequence);
  assert.equal(actual.timestamp.toString(), expected.timestamp.toString());
  assert.deepEqual(Buffer.from(actual.encoded), Buffer.from(expected.encoded));
}

/** `msgs` holds exactly messages 1..n of `channel`, message i with payload `body(i)`. */
export async function assertBodies(
  msgs: MsgStore,
  channel: string,
  n: number,
  body: (seq: number) => Buffer,
): Promise<void> {
  assert.equal(msgs.count, n);
  for (let seq = 1; seq <= n; seq++) {
    const m = await msgs.lookup(seq);
    const want = makeStoredMsg(seq, m!.timestamp, channel, '', body(seq));
    assert.deepEqual(Buffer.from(m!.encoded), Buffer.from(want.encoded), `message ${seq}`);
  }
}
