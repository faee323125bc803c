// SubscriptionRequest: validate in the reference's order, then a new subscription, a
// durable resuming, a new queue group member or a durable queue group's shadow
// taken over. The SubscriptionResponse (with the ack inbox) goes out before the
// first message; a resumed durable gets its unacked messages again first. With a
// store whose records become durable later (clustered), the response waits for the
// subscription's record: a subscription answered is known to the next Leader.

import type Long from 'long';
import { isChannelNameValid } from '../channel-name.js';
import type { Channel } from '../channel.js';
import type { StanClient } from '../client.js';
import { nuid } from '../../protocol/nuid.js';
import { SubscriptionRequest, SubscriptionResponse } from '../protocol/index.js';
import { seqFromLong } from '../protocol/int64.js';
import { QueueGroup } from '../queue.js';
import { redeliverAll } from '../redelivery.js';
import { Err, type StreamingServer } from '../server.js';
import { Sub } from '../subscription.js';
import { removeSubscription } from './unsubscribe.js';

const MAX_START_POSITION = 4;

export async function handleSubscribe(
  s: StreamingServer,
  reply: string | null,
  data: Buffer,
): Promise<void> {
  if (reply === null) return;
  let req: SubscriptionRequest;
  try {
    req = SubscriptionRequest.decode(data);
  } catch {
    respond(s, reply, '', Err.invalidSubReq);
    return;
  }
  const invalid = validate(req);
  if (invalid !== null) {
    respond(s, reply, '', invalid);
    return;
  }
  const fail = (error: string): void => {
    respond(s, reply, '', error);
  };
  const position = req.startPosition as number;
  const client = s.clients.get(req.clientID);
  if (client === undefined) {
    fail(Err.unknownClient);
    return;
  }
  if (!s.serving) return;
  let channel: Channel;
  try {
    channel = s.channel(req.subject);
  } catch (err) {
    fail((err as Error).message);
    return;
  }
  const durable = req.durableName;
  if (req.qGroup !== '' && durable.includes(':')) {
    fail(Err.durableQueueName);
    return;
  }
  channel.subscribing++;
  try {
    const error =
      req.qGroup === ''
        ? await subscribePlain(s, reply, req, client, channel, position)
        : await subscribeQueue(s, reply, req, client, channel, position);
    if (error !== null) fail(error);
  } finally {
    channel.subscribing--;
  }
}

/** The request's own checks, in the reference's order. */
function validate(req: SubscriptionRequest): string | null {
  if (req.clientID === '') return Err.missingClient;
  if (req.ackWaitInSecs <= 0) return Err.invalidAckWait;
  if (req.maxInFlight <= 0) return Err.invalidMaxInflight;
  const position = req.startPosition as number;
  if (position < 0 || position > MAX_START_POSITION) return Err.invalidStart;
  if (!isChannelNameValid(req.subject, false)) return Err.invalidSubject;
  return null;
}

/** Returns an error text, or null once the subscription answered and started. */
async function subscribePlain(
  s: StreamingServer,
  reply: string,
  req: SubscriptionRequest,
  client: StanClient,
  channel: Channel,
  position: number,
): Promise<string | null> {
  const durable = req.durableName;
  const key = req.clientID + '-' + durable;
  if (durable !== '') {
    let existing = channel.durables.get(key);
    if (existing !== undefined && !existing.offline) {
      if (!s.options.replaceDurable) return Err.dupDurable;
      removeSubscription(s, existing, 'close');
      existing = channel.durables.get(key);
    }
    if (existing !== undefined) {
      resume(s, existing, req, client);
      channel.plain.push(existing);
      s.listenAcks(existing);
      answer(s, reply, existing, redeliverAll);
      return null;
    }
  }
  const lastSent = await channel.startSequence(
    position,
    seqFromLong(req.startSequence),
    req.startTimeDelta,
  );
  if (s.clients.get(client.id) !== client || s.channels.get(channel.name) !== channel) {
    return Err.unknownClient;
  }
  if (durable !== '' && channel.durables.has(key)) return Err.dupDurable;
  let sub: Sub;
  try {
    sub = create(s, req, client, channel, '', lastSent);
  } catch (err) {
    return (err as Error).message;
  }
  channel.plain.push(sub);
  if (durable !== '') channel.durables.set(key, sub);
  answer(s, reply, sub, null);
  return null;
}

async function subscribeQueue(
  s: StreamingServer,
  reply: string,
  req: SubscriptionRequest,
  client: StanClient,
  channel: Channel,
  position: number,
): Promise<string | null> {
  const durable = req.durableName;
  const name = durable !== '' ? `${durable}:${req.qGroup}` : req.qGroup;
  let group = channel.groups.get(name);
  let created = false;
  if (group === undefined) {
    // The start position applies only to the member that creates the group.
    const lastSent = await channel.startSequence(
      position,
      seqFromLong(req.startSequence),
      delta(req),
    );
    if (s.clients.get(client.id) !== client || s.channels.get(channel.name) !== channel) {
      return Err.unknownClient;
    }
    group = channel.groups.get(name);
    if (group === undefined) {
      group = new QueueGroup(name, durable !== '', lastSent);
      channel.groups.set(name, group);
      created = true;
    }
  }
  const shadow = group.shadow;
  if (shadow !== null) {
    group.shadow = null;
    resume(s, shadow, req, client);
    group.members.push(shadow);
    s.listenAcks(shadow);
    answer(s, reply, shadow, redeliverAll);
    return null;
  }
  let sub: Sub;
  try {
    // A member that joins an existing group starts with last_sent 0, its own, as
    // the reference shows it; the group keeps the position (group.lastSent).
    sub = create(s, req, client, channel, name, created ? group.lastSent : 0);
  } catch (err) {
    if (group.members.length === 0 && group.shadow === null) channel.groups.delete(name);
    return (err as Error).message;
  }
  sub.group = group;
  group.members.push(sub);
  answer(s, reply, sub, null);
  return null;
}

function delta(req: SubscriptionRequest): Long {
  return req.startTimeDelta;
}

/** A new subscription: store record, client list, ack inbox. Throws the store's errors. */
function create(
  s: StreamingServer,
  req: SubscriptionRequest,
  client: StanClient,
  channel: Channel,
  queueName: string,
  lastSent: number,
): Sub {
  // A durable queue member's durable name is in its group name ("durable:group"):
  // its record's own is empty, as in the reference's store.
  const durableName = queueName === '' ? req.durableName : '';
  const record = channel.store.subs.create({
    clientID: req.clientID,
    qGroup: queueName,
    inbox: req.inbox,
    ackInbox: `_INBOX.${nuid.next()}`,
    maxInFlight: req.maxInFlight,
    ackWaitInSecs: req.ackWaitInSecs,
    durableName,
    lastSent,
    isDurable: req.durableName !== '',
    isClosed: false,
  });
  const sub = new Sub(channel, record, durableName);
  sub.client = client;
  client.subs.push(sub);
  s.listenAcks(sub);
  return sub;
}

/** An offline durable (or a durable group's shadow) comes back with the new request's settings. */
function resume(s: StreamingServer, sub: Sub, req: SubscriptionRequest, client: StanClient): void {
  sub.clientID = req.clientID;
  sub.inbox = req.inbox;
  sub.ackInbox = `_INBOX.${nuid.next()}`;
  sub.maxInflight = req.maxInFlight;
  sub.ackWaitSecs = req.ackWaitInSecs;
  sub.ackWaitMs = req.ackWaitInSecs * 1000;
  sub.offline = false;
  sub.stalled = false;
  sub.client = client;
  client.subs.push(sub);
  sub.channel.store.subs.update(sub.record());
  s.logger.debug(
    `STAN: [Client:${req.clientID}] Resumed durable subscription on "${sub.channel.name}"`,
  );
}

/**
 * Sends the SubscriptionResponse, then the subscription's messages (`resend`: its
 * unacked ones first, for a durable that resumes). A store whose records become
 * durable a moment later (the clustered store writes them to its bucket, coalesced)
 * is waited for first, as for a connect: a subscription whose response went out is
 * known to the next Leader. Meanwhile nothing is sent to it (`starting`); a
 * subscription removed meanwhile, or a node that stopped leading, answers nothing
 * (the client times out and asks again, as with the reference during an election).
 */
function answer(
  s: StreamingServer,
  reply: string,
  sub: Sub,
  resend: ((s: StreamingServer, sub: Sub) => void) | null,
): void {
  const start = (): void => {
    respond(s, reply, sub.ackInbox, '');
    if (resend !== null) resend(s, sub);
    if (sub.group !== null) sub.channel.sendGroup(sub.group);
    else sub.channel.sendAvailable(sub);
  };
  const durable = s.store.recordsDurable?.();
  if (durable === undefined) {
    start();
    return;
  }
  sub.starting = true;
  const client = sub.client;
  const generation = s.generation;
  void durable.then(
    () => {
      sub.starting = false;
      if (s.serving && s.generation === generation && sub.client === client) start();
    },
    () => undefined,
  );
}

function respond(s: StreamingServer, reply: string, ackInbox: string, error: string): void {
  const bytes =
    error === ''
      ? SubscriptionResponse.encode({ ackInbox }).finish()
      : SubscriptionResponse.encode({ error }).finish();
  s.bus.publish(reply, null, bytes);
}
