// Ack on a subscription's ack inbox: the message leaves the pending set; a stalled
// subscription (MaxInflight reached) resumes. An ack for a message pending on another
// member of the same queue group clears it there (no double redelivery). Unknown
// sequences and repeated acks are harmless.

import { Ack } from '../protocol/index.js';
import { seqFromLong } from '../protocol/int64.js';
import type { StreamingServer } from '../server.js';
import type { Sub } from '../subscription.js';

export function handleAck(s: StreamingServer, sub: Sub, data: Buffer): void {
  let ack: Ack;
  try {
    ack = Ack.decode(data);
  } catch {
    return;
  }
  if (ack.subject !== sub.channel.name) {
    if (s.logger.debugEnabled) {
      s.logger.debug(`STAN: Ack for unknown channel "${ack.subject}" dropped`);
    }
    return;
  }
  const seq = seqFromLong(ack.sequence);
  if (sub.forget(seq)) {
    resumeIfUnstalled(sub);
    return;
  }
  const group = sub.group;
  if (group === null) return;
  for (const other of group.members) {
    if (other !== sub && other.forget(seq)) {
      resumeIfUnstalled(other);
      return;
    }
  }
}

function resumeIfUnstalled(sub: Sub): void {
  if (sub.stalled && sub.pending.size < sub.maxInflight) {
    sub.stalled = false;
    sub.channel.sendAvailable(sub);
  }
}
