// A queue group: members share one position in the channel and each message goes to
// one member (the reference's queueState and findBestQueueSub).

import type { Sub } from './subscription.js';

/** A member that left hands its unacked messages over; they go out again after this. */
export const HANDOVER_DELAY_MS = 100;

export class QueueGroup {
  readonly members: Sub[] = [];
  /** The last member of a durable group that closed: kept offline with its pending set. */
  shadow: Sub | null = null;
  /** Redelivery counts, shared by the members (the reference keeps them per group). */
  readonly redeliveries = new Map<number, number>();

  constructor(
    /** As monitoring shows it: "group" or "durable:group". */
    readonly name: string,
    readonly isDurable: boolean,
    /** Highest sequence sent to any member. */
    public lastSent: number,
  ) {}

  /**
   * The member to send a new message to: not stalled, answered (not starting), its
   * client answering heartbeats, fewest unacked messages, first on ties; a pick at the
   * head of the list moves to the end so that equal members take turns. Null when
   * all are stalled.
   */
  pick(): Sub | null {
    const members = this.members;
    let best: Sub | null = null;
    let bestIndex = -1;
    for (let i = 0; i < members.length; i++) {
      const m = members[i]!;
      if (m.stalled || m.starting || (m.client !== null && m.client.failedHb > 0)) continue;
      if (best === null || m.pending.size < best.pending.size) {
        best = m;
        bestIndex = i;
      }
    }
    if (best !== null && bestIndex === 0 && members.length > 1) {
      members.shift();
      members.push(best);
    }
    return best;
  }

  /** The member for a redelivery (forced): the best one, else the first. */
  pickForced(fallback: Sub): Sub {
    return this.pick() ?? this.members[0] ?? fallback;
  }

  remove(member: Sub): void {
    const i = this.members.indexOf(member);
    if (i >= 0) this.members.splice(i, 1);
  }
}
