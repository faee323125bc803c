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
      sub.dropPending(seq);
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
  const msgs = sub.channel.store.msgs;
  const found = seqs.map((seq) => msgs.lookup(seq));
  if (!found.some((f) => f instanceof Promise)) {
    const now = Date.now();
    seqs.forEach((seq, i) => {
      resendOrForget(sub, seq, found[i] as StoredMsg | undefined, now);
    });
    return;
  }
  // The store reads some of them from disk (FILE, SQL after a restart): new messages
  // wait until all of these went out, in sequence order (the reference's newOnHold);
  // `fetching` holds sendAvailable/sendGroup back meanwhile.
  sub.fetching = true;
  Promise.all(found.map(async (f) => f)).then(
    (all) => {
      sub.fetching = false;
      if (sub.offline) return;
      const now = Date.now();
      seqs.forEach((seq, i) => {
        resendOrForget(sub, seq, all[i], now);
      });
      if (sub.group !== null) sub.channel.sendGroup(sub.group);
      else sub.channel.sendAvailable(sub);
    },
    (err: unknown) => {
      sub.fetching = false;
      s.logger.error(`STAN: Unable to redeliver messages: ${String(err)}`);
    },
  );
}

function resendOrForget(sub: Sub, seq: number, m: StoredMsg | undefined, now: number): void {
  if (m === undefined) sub.forget(seq);
  else sub.resend(seq, m, now);
}
