// Where a clustered deployment keeps its state in JetStream (the mapping documented in
// docs/design/clustered-streaming.md), so that JetStream applications can find it:
//
// - channel `orders.new` of cluster `test-cluster`: stream `STAN_test-cluster_orders_new`
//   (description: `NATS Streaming channel "orders.new" of cluster "test-cluster"`)
//   with the one subject `_STAN.ch.test-cluster.orders.new`. Stream sequence =
//   channel sequence; the message body is the published data, the STAN timestamp and
//   reply are headers.
// - bucket `STAN_<cid>_state`: `info`, `client.<id>`, `chan.<b64url(name)>`,
//   `sub.<b64url(channel)>.<subscription id>` (JSON values).
// - bucket `STAN_<cid>_lease`: key `leader`, the Leader's lease.

/** Header with the STAN timestamp (Unix nanoseconds, decimal). */
export const TIMESTAMP_HEADER = 'Stan-Timestamp';
/** Header with the publisher's reply subject, when it gave one. */
export const REPLY_HEADER = 'Stan-Reply';

export const INFO_KEY = 'info';
export const CLIENT_PREFIX = 'client.';
export const CHANNEL_PREFIX = 'chan.';
export const SUB_PREFIX = 'sub.';
export const LEASE_KEY = 'leader';

export function stateBucket(clusterId: string): string {
  return `STAN_${clusterId}_state`;
}

export function leaseBucket(clusterId: string): string {
  return `STAN_${clusterId}_lease`;
}

/** The header that makes JetStream store a message only as the stream's next one. */
export const EXPECTED_LAST_HEADER = 'Nats-Expected-Last-Sequence';

/**
 * Where a Leader's JetStream PubAcks come back: `_STAN.jsack.<cid>.<unique>.<channel
 * index>`, one `<unique>` per Leader term. A known form, so that Followers subscribe
 * to every Leader's PubAcks and apply a message only once JetStream stored it.
 */
export function ackSubjectPrefix(clusterId: string, unique: string): string {
  return `_STAN.jsack.${clusterId}.${unique}`;
}

/** Every Leader's PubAck subjects. */
export function allAckSubjects(clusterId: string): string {
  return `_STAN.jsack.${clusterId}.>`;
}

/**
 * Where a Leader says how far JetStream stored a channel's stream for it:
 * `_STAN.jsconf.<cid>.<unique>.<channel index>`, the same `<unique>` and index as its
 * ack subject, a body of JetStream's PubAck form for the highest sequence acknowledged
 * so far. One such message per channel and turn of acknowledgements instead of every
 * PubAck: what the Followers subscribe to (follow.ts).
 */
export function confirmSubjectPrefix(clusterId: string, unique: string): string {
  return `_STAN.jsconf.${clusterId}.${unique}`;
}

/** Every Leader's confirmation subjects (what Followers subscribe to). */
export function allConfirmSubjects(clusterId: string): string {
  return `_STAN.jsconf.${clusterId}.>`;
}

/** The subject a channel's messages are stored under. */
export function channelSubject(clusterId: string, channel: string): string {
  return `_STAN.ch.${clusterId}.${channel}`;
}

// Stream names may not hold `.`, `*`, `>`, `/`, `\` or white space: letters, digits
// and `-` stay, `.` becomes `_`, any other byte is `%XX`, so that two channels never
// share a stream.
const KEEP = /[A-Za-z0-9-]/;

export function channelStreamName(clusterId: string, channel: string): string {
  let out = `STAN_${clusterId}_`;
  for (const ch of channel) {
    if (KEEP.test(ch)) out += ch;
    else if (ch === '.') out += '_';
    else
      for (const b of Buffer.from(ch)) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** A channel name as one key token (base64url: no `.`, `*`, `>`). */
export function channelToken(channel: string): string {
  return Buffer.from(channel).toString('base64url');
}

export function channelFromToken(token: string): string {
  return Buffer.from(token, 'base64url').toString();
}

export function channelKey(channel: string): string {
  return CHANNEL_PREFIX + channelToken(channel);
}

export function subKey(channel: string, id: number): string {
  return `${SUB_PREFIX}${channelToken(channel)}.${id}`;
}

export function clientKey(id: string): string {
  return CLIENT_PREFIX + id;
}
