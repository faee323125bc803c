// Redelivery: messages whose AckWait passed go out again flagged `redelivered` with a
// count (forced: MaxInflight does not hold them back). In a queue group an expired
// message goes to the group's best member, which may be another one. A message the
// store no longer has (removed by limits) counts as acked.

import type { StreamingServer } from './server.js';
import type { StoredMsg } from './store/types.js';
import type { Sub } from './subscription.js';

/** The AckWait timer of `sub` fired. */
export function redeliverExpired(s: StreamingServer, sub: Sub): void {
  const now = Date.now();
  // A client that misses heartbeats gets no redeliveries outside queue groups, as
  // the reference (they would only pile up).
  if (sub.group === null && sub.client !== null && sub.client.failedHb > 0) {
    sub.armTimer(now + sub.ackWaitMs, now);
    return;
  }
  const { seqs, next } = sub.expired(now);
  for (const seq of seqs) redeliverOne(s, sub, seq, now);
  if (next > 0) sub.armTimer(next, now);
  if (sub.group !== null && sub.stalled && sub.pending.size < sub.maxInflight) {
    sub.stalled = false;
    sub.channel.sendGroup(sub.group);
  }
}

function redeliverOne(s: StreamingServer, sub: Sub, seq: number, now: number): void {
  const found = sub.channel.store.msgs.lookup(seq);
  if (found instanceof Promise) {
    found.then(
      (m) => {
        if (sub.pending.has(seq)) send(sub, seq, m, Date.now());
      },
      (err: unknown) => {
        s.logger.error(`STAN: Unable to redeliver message ${seq}: ${String(err)}`);
      },
    );
    return;
  }
  send(sub, seq, found, now);
}

function send(sub: Sub, seq: number, msg: StoredMsg | undefined, now: number): void {
  if (msg === undefined) {
    sub.forget(seq);
    return;
  }
  let target = sub;
  if (sub.group !== null) {
    target = sub.group.pickForced(sub);
    if (target !== sub) {
      // The original member gets an implicit ack.
      sub.pending.delete(seq);
      sub.channel.store.subs.ack(sub.id, seq);
      sub.channel.store.subs.addPending(target.id, seq);
    }
  }
  target.resend(seq, msg, now);
}

/** A durable resuming (or a shadow taken over): every unacked message again, in order. */
export function redeliverAll(s: StreamingServer, sub: Sub): void {
  const seqs = sub.pendingSorted();
  if (seqs.length === 0) return;
  const now = Date.now();
  for (const seq of seqs) {
    const found = sub.channel.store.msgs.lookup(seq);
    if (found instanceof Promise) {
      found.then(
        (m) => {
          if (m === undefined) sub.forget(seq);
          else if (!sub.offline) sub.resend(seq, m, Date.now());
        },
        (err: unknown) => {
          s.logger.error(`STAN: Unable to redeliver message ${seq}: ${String(err)}`);
        },
      );
      continue;
    }
    if (found === undefined) sub.forget(seq);
    else sub.resend(seq, found, now);
  }
}
