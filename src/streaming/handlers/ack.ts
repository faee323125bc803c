// Ack on a subscription's ack inbox: the message leaves the pending set; a stalled
// subscription (MaxInflight reached) resumes. An ack for a message pending on another
// member of the same queue group clears it there (no double redelivery). Unknown
// sequences and repeated acks are harmless.

import { Ack } from '../protocol/index.js';
import { ACK_INVALID, ACK_OTHER_CHANNEL, decodeAck } from '../protocol/wire.js';
import type { StreamingServer } from '../server.js';
import type { Sub } from '../subscription.js';

/** The Ack is `buf[start, end)`, a read buffer: nothing of it is kept past this call. */
export function handleAck(
  s: StreamingServer,
  sub: Sub,
  buf: Buffer,
  start: number,
  end: number,
): void {
  const seq = decodeAck(buf, sub.channel.nameBytes, start, end);
  if (seq === ACK_INVALID) return;
  if (seq === ACK_OTHER_CHANNEL) {
    if (s.logger.debugEnabled) {
      s.logger.debug(
        `STAN: Ack for unknown channel "${otherChannel(buf.subarray(start, end))}" dropped`,
      );
    }
    return;
  }
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

function otherChannel(data: Buffer): string {
  try {
    return Ack.decode(data).subject;
  } catch {
    return '';
  }
}
