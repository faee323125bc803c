// A JetStream delivery is routed on its deliver subject (a pull request's inbox, a push
// consumer's deliver subject) but shows its stream subject to the client. Between
// servers the reference carries that subject at the end of the ack reply, after an `@`:
//
//   RMSG $G _INBOX.x $JS.ACK.S.C.1.1.1.<ts>.0@orders.new 2
//
// and the receiving server delivers `MSG orders.new <sid> $JS.ACK.S.C.1.1.1.<ts>.0 2`
// (the reference's processMsgResults and msgHeaderForRouteOrLeaf; only replies under
// `$JS.ACK.` are read that way). Both directions allocate only for such deliveries.
// The only messages routed under a name other than their own are JetStream deliveries,
// and every one carries an ack reply, so checking replies under `$JS.ACK.` finds them all.

import { MappedMessage } from '../auth/accounts.js';
import { otherOwnSubject, type PublishedMessage } from '../server/message.js';

const ACK_PREFIX = Buffer.from('$JS.ACK.', 'latin1');

function ackReply(m: PublishedMessage): boolean {
  const start = m.replyStart;
  if (start < 0 || m.replyEnd - start <= ACK_PREFIX.length) return false;
  const b = m.argBuf;
  for (let i = 0; i < ACK_PREFIX.length; i++) if (b[start + i] !== ACK_PREFIX[i]) return false;
  return true;
}

/** m as it goes to a route when it is routed on `subject`: its own subject after `@`. */
export function toRoute(subject: string, m: PublishedMessage): PublishedMessage {
  if (!ackReply(m)) return m;
  const own = otherOwnSubject(m, subject);
  if (own === null) return m;
  return new MappedMessage(
    m,
    subject,
    `${m.argBuf.toString('latin1', m.replyStart, m.replyEnd)}@${own}`,
  );
}

/** A routed message with its subject after `@` in an ack reply: delivered under that subject. */
export function fromRoute(m: PublishedMessage): PublishedMessage {
  if (!ackReply(m)) return m;
  const reply = m.argBuf.toString('latin1', m.replyStart, m.replyEnd);
  const at = reply.lastIndexOf('@');
  if (at < 0 || at === reply.length - 1) return m;
  return new MappedMessage(m, reply.slice(at + 1), reply.slice(0, at));
}
