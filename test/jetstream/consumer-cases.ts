// The consumer scenario whose transcript the reference recorded (fixtures/consumers.json):
// create refusals for every rule of the consumer config, create on an existing consumer,
// pull requests and their status lines, push delivery with heartbeats, flow control and
// headers_only, every ack verb, redelivery, max_deliver, max_ack_pending, the deliver
// policies, sample_freq's metric, inactive_threshold, and CONSUMER.INFO after each kind
// of event. One stateful sequence, run in order on a fresh server.

import type { ConsumerStep } from './consumer-transcript.js';

const C = '$JS.API.CONSUMER.';
const S = '$JS.API.STREAM.';
const MS = 1e6;

function create(name: string, config: Record<string, unknown>, stream = 'S'): ConsumerStep {
  return {
    name: `create ${name}`,
    subject: `${C}CREATE.${stream}.${name}`,
    body: { stream_name: stream, config: { name, ...config } },
  };
}

function durable(name: string, config: Record<string, unknown>, stream = 'S'): ConsumerStep {
  return {
    name: `durable ${name}`,
    subject: `${C}DURABLE.CREATE.${stream}.${name}`,
    body: { stream_name: stream, config: { durable_name: name, ...config } },
  };
}

/** A refusal: a named create the reference answers with an error. */
function refused(what: string, config: Record<string, unknown>, stream = 'S'): ConsumerStep {
  return { ...create('bad', config, stream), name: `refused: ${what}` };
}

function info(name: string, when: string, stream = 'S'): ConsumerStep {
  return { name: `info ${name} ${when}`, subject: `${C}INFO.${stream}.${name}` };
}

function next(name: string, what: string, body: unknown, expect = 1, wait?: number): ConsumerStep {
  return {
    name: `next ${name}: ${what}`,
    subject: `${C}MSG.NEXT.S.${name}`,
    body,
    expect,
    ...(wait === undefined ? {} : { wait }),
  };
}

/** An ack of message `i` of step `step`, with a reply (AckSync) unless `noReply`. */
function ack(
  what: string,
  step: string,
  i: number,
  body: string,
  opts: Partial<ConsumerStep> = {},
): ConsumerStep {
  return { name: `ack: ${what}`, subject: (t) => t.ackOf(step, i), body, ...opts };
}

function pub(subject: string, body: string, hdrs?: Record<string, string>): ConsumerStep {
  return {
    name: `publish ${subject} ${body}`,
    subject,
    body,
    ...(hdrs === undefined ? {} : { headers: hdrs }),
  };
}

const start = '2020-01-01T00:00:00Z';

/**
 * The push consumers' deliver subjects the transcript subscribes to. H.hb's subscription
 * takes one message: heartbeats go on every 200 ms and would spill into later steps.
 */
export const PUSH_SUBJECTS: { subject: string; queue?: string; max?: number }[] = [
  { subject: 'D.push' },
  { subject: 'D.ho' },
  { subject: 'G.grp', queue: 'workers' },
  { subject: 'D.rl' },
  { subject: 'D.ro' },
  { subject: 'H.hb', max: 1 },
  // Flow control's 30 messages and its request: then no more (heartbeats).
  { subject: 'F.fc', max: 31 },
];

/** 30 messages of 100 000 bytes on stream B, for flow control. */
function bigMessages(): ConsumerStep[] {
  const body = 'x'.repeat(100_000);
  return Array.from({ length: 30 }, (_, i) => ({ ...pub('b.x', body), name: `publish big #${i}` }));
}

export const CONSUMER_CASES: ConsumerStep[] = [
  {
    name: 'stream S',
    subject: `${S}CREATE.S`,
    body: { name: 'S', subjects: ['s.>'], storage: 'memory' },
  },
  {
    name: 'stream W (work queue)',
    subject: `${S}CREATE.W`,
    body: { name: 'W', subjects: ['w.>'], storage: 'memory', retention: 'workqueue' },
  },
  {
    name: 'stream M (max_consumers 1)',
    subject: `${S}CREATE.M`,
    body: { name: 'M', subjects: ['m.>'], storage: 'memory', max_consumers: 1 },
  },
  pub('s.a', 'one'),
  pub('s.b', 'two', { X: 'y' }),
  pub('s.a', 'three'),
  pub('s.c', 'four'),
  pub('s.b', 'five'),

  // ---- create refusals ----
  refused('backoff longer than max_deliver', {
    ack_policy: 'explicit',
    backoff: [MS * 100, MS * 200],
    max_deliver: 2,
  }),
  refused('backoff without max_deliver', { ack_policy: 'explicit', backoff: [MS * 100] }),
  refused('backoff negative', { ack_policy: 'explicit', backoff: [-1], max_deliver: 5 }),
  refused('description too long', { description: 'x'.repeat(4097) }),
  refused('deliver subject wildcard', { deliver_subject: 'D.*' }),
  refused('deliver subject invalid', { deliver_subject: 'D..x' }),
  refused('deliver cycle', { deliver_subject: 's.x' }),
  refused('push max_waiting', { deliver_subject: 'D.x', max_waiting: 5 }),
  refused('push max_ack_pending ack none', { deliver_subject: 'D.x', max_ack_pending: 5 }),
  refused('push small heartbeat', { deliver_subject: 'D.x', idle_heartbeat: 50 * MS }),
  refused('flow control without heartbeat', { deliver_subject: 'D.x', flow_control: true }),
  refused('pull rate limit', { ack_policy: 'explicit', rate_limit_bps: 1000 }),
  refused('pull negative max_waiting', { ack_policy: 'explicit', max_waiting: -1 }),
  refused('pull heartbeat', { ack_policy: 'explicit', idle_heartbeat: 1e9 }),
  refused('pull flow control', { ack_policy: 'explicit', flow_control: true }),
  refused('pull negative max_batch', { ack_policy: 'explicit', max_batch: -1 }),
  refused('pull max_expires under 1ms', { ack_policy: 'explicit', max_expires: 1000 }),
  refused('direct pull', { direct: true }),
  refused('filter outside the stream', { filter_subject: 'x.y' }),
  refused('filter invalid', { filter_subject: 's..a' }),
  refused('deliver all with start seq', { opt_start_seq: 2 }),
  refused('deliver all with start time', { opt_start_time: start }),
  refused('deliver last with start seq', { deliver_policy: 'last', opt_start_seq: 2 }),
  refused('deliver new with start time', { deliver_policy: 'new', opt_start_time: start }),
  refused('last per subject without filter', { deliver_policy: 'last_per_subject' }),
  refused('last per subject with start seq', {
    deliver_policy: 'last_per_subject',
    filter_subject: 's.a',
    opt_start_seq: 1,
  }),
  refused('by start sequence without it', { deliver_policy: 'by_start_sequence' }),
  refused('by start sequence with time', {
    deliver_policy: 'by_start_sequence',
    opt_start_seq: 1,
    opt_start_time: start,
  }),
  refused('by start time without it', { deliver_policy: 'by_start_time' }),
  refused('by start time with seq', {
    deliver_policy: 'by_start_time',
    opt_start_time: start,
    opt_start_seq: 1,
  }),
  refused('bad deliver policy', { deliver_policy: 'sometimes' }),
  refused('bad ack policy', { ack_policy: 'maybe' }),
  refused('bad replay policy', { replay_policy: 'slow' }),
  refused('sample_freq not a number', { sample_freq: 'often' }),
  refused('sample_freq negative', { sample_freq: '-5%' }),
  refused('replicas over the stream', { num_replicas: 3 }),
  refused('replicas negative', { num_replicas: -1 }),
  refused('ack_wait as text', { ack_wait: '1s' }),
  refused('name and durable differ', { durable_name: 'other' }),
  {
    name: 'refused: durable name too long',
    subject: `${C}CREATE.S`,
    body: { stream_name: 'S', config: { durable_name: 'd'.repeat(256) } },
  },
  {
    name: 'refused: ephemeral name with a dot',
    subject: `${C}CREATE.S`,
    body: { stream_name: 'S', config: { name: 'a.b' } },
  },
  {
    name: 'refused: durable with a path separator',
    subject: `${C}DURABLE.CREATE.S.a/b`,
    body: { stream_name: 'S', config: { durable_name: 'a/b' } },
  },
  refused('work queue without acks', { ack_policy: 'none' }, 'W'),
  refused('work queue ack all', { ack_policy: 'all' }, 'W'),
  refused(
    'work queue deliver last',
    { ack_policy: 'explicit', deliver_policy: 'last', filter_subject: 'w.a' },
    'W',
  ),
  create('w1', { ack_policy: 'explicit', filter_subject: 'w.a' }, 'W'),
  refused('work queue unfiltered second', { ack_policy: 'explicit' }, 'W'),
  refused('work queue overlapping filter', { ack_policy: 'explicit', filter_subject: 'w.*' }, 'W'),
  create('w2', { ack_policy: 'explicit', filter_subject: 'w.b' }, 'W'),
  // Work queue acks out of order: each acked message leaves the stream at once.
  pub('w.a', 'w1'),
  pub('w.a', 'w2'),
  pub('w.a', 'w3'),
  { ...next('w1', 'batch 3', { batch: 3 }, 3), subject: `${C}MSG.NEXT.W.w1` },
  ack('work queue: the third first', 'next w1: batch 3', 2, '+ACK', { expect: 1 }),
  { name: 'work queue after one ack', subject: `${S}INFO.W` },
  ack('work queue: the first', 'next w1: batch 3', 0, '+ACK', { expect: 1 }),
  { name: 'work queue after two acks', subject: `${S}INFO.W` },
  info('w1', 'two acked', 'W'),
  create('m1', {}, 'M'),
  refused('max consumers', {}, 'M'),

  // ---- create on an existing consumer ----
  durable('D1', { ack_policy: 'explicit', ack_wait: 30e9, max_ack_pending: 10 }),
  {
    ...durable('D1', { ack_policy: 'explicit', ack_wait: 30e9, max_ack_pending: 10 }),
    name: 'D1 again, same',
  },
  {
    ...durable('D1', { ack_policy: 'explicit', ack_wait: 20e9, max_ack_pending: 20 }),
    name: 'D1 again, new ack_wait and max_ack_pending',
  },
  {
    ...durable('D1', { ack_policy: 'all' }),
    name: 'D1 again, another ack policy',
  },
  {
    ...durable('D1', { ack_policy: 'explicit', deliver_policy: 'new' }),
    name: 'D1 again, another deliver policy',
  },
  {
    ...durable('D1', { ack_policy: 'explicit', filter_subject: 's.a' }),
    name: 'D1 again, another filter',
  },
  {
    ...durable('D1', { ack_policy: 'explicit', max_waiting: 3 }),
    name: 'D1 again, another max_waiting',
  },
  {
    ...durable('D1', { ack_policy: 'explicit', deliver_subject: 'D.d1' }),
    name: 'D1 again, push',
  },
  {
    ...durable('D1', { ack_policy: 'explicit', replay_policy: 'original' }),
    name: 'D1 again, another replay policy',
  },
  {
    ...durable('D1', { ack_policy: 'explicit', description: 'now described' }),
    name: 'D1 again, a description',
  },
  info('D1', 'after the updates'),

  // ---- pull: batches, acks and the counters ----
  create('P', { ack_policy: 'explicit', max_waiting: 2 }),
  info('P', 'new'),
  next('P', 'batch 2', { batch: 2 }, 2),
  info('P', 'two delivered'),
  ack('+ACK first', 'next P: batch 2', 0, '+ACK', { noReply: true, expect: 0 }),
  info('P', 'first acked'),
  ack('-NAK second', 'next P: batch 2', 1, '-NAK', { noReply: true, expect: 0 }),
  info('P', 'second nacked'),
  next('P', 'the nacked one again', null),
  info('P', 'redelivered'),
  ack('+WPI', 'next P: the nacked one again', 0, '+WPI', { expect: 1 }),
  ack('+TERM (AckSync)', 'next P: the nacked one again', 0, '+TERM', { expect: 2 }),
  info('P', 'terminated'),
  next('P', 'number body', '1'),
  ack('+NXT with a batch', 'next P: number body', 0, '+NXT {"batch":2}', { expect: 2 }),
  info('P', 'after +NXT'),
  ack('+ACK (AckSync) of an acked one', 'next P: number body', 0, '+ACK', { expect: 1 }),
  ack('+ACK all of +NXT', 'ack: +NXT with a batch', 1, '+ACK', { expect: 1 }),
  info('P', 'floor after skipping'),
  ack('+ACK the rest', 'ack: +NXT with a batch', 0, '+ACK', { expect: 1 }),
  info('P', 'all acked'),
  next('P', 'no_wait, nothing', { batch: 1, no_wait: true }),
  next('P', 'no_wait with expires, nothing', { batch: 1, no_wait: true, expires: 200 * MS }),
  next('P', 'expires', { batch: 3, expires: 150 * MS, max_bytes: 1000 }),
  next('P', 'heartbeat', { batch: 1, expires: 600 * MS, idle_heartbeat: 250 * MS }, 3),
  next('P', 'heartbeat too large', { batch: 1, expires: 100 * MS, idle_heartbeat: 80 * MS }),
  next('P', 'bad JSON', '{"batch":'),
  next('P', 'wrong type', { batch: 'x' }),
  next('P', 'waiting 1', { batch: 1, expires: 1000 * MS }, 0),
  next('P', 'waiting 2', { batch: 1, expires: 1000 * MS }, 0),
  next('P', 'waiting 3: max waiting', { batch: 1, expires: 1000 * MS }),
  info('P', 'two waiting'),
  { ...pub('s.d', 'six'), expect: 2 },
  { ...pub('s.d', 'seven'), expect: 2 },
  info('P', 'waiting served'),

  // ---- pull request limits ----
  create('L', {
    ack_policy: 'explicit',
    max_batch: 2,
    max_expires: 1e9,
    max_bytes: 100,
  }),
  next('L', 'batch over max_batch', { batch: 3 }),
  next('L', 'expires over max_expires', { batch: 1, expires: 2e9 }),
  next('L', 'max_bytes over the limit', { batch: 1, max_bytes: 200 }),
  next('L', 'message over max_bytes', { batch: 2, max_bytes: 5 }),
  next('L', 'max_bytes fits one', { batch: 2, max_bytes: 30, expires: 100 * MS }, 2),
  info('L', 'after the limits'),

  // ---- ack policies all and none, ack floors ----
  create('A', { ack_policy: 'all' }),
  next('A', 'batch 4', { batch: 4 }, 4),
  ack('ack all: the third', 'next A: batch 4', 2, '+ACK', { expect: 1 }),
  info('A', 'third acked'),
  create('N', { ack_policy: 'none' }),
  next('N', 'batch 3', { batch: 3 }, 3),
  info('N', 'three delivered'),

  // ---- deliver policies and filters ----
  create('last', { deliver_policy: 'last', ack_policy: 'explicit' }),
  next('last', 'all there is', { batch: 10, no_wait: true }, 2),
  create('lastf', { deliver_policy: 'last', filter_subject: 's.a', ack_policy: 'explicit' }),
  next('lastf', 'all there is', { batch: 10, no_wait: true }, 2),
  create('new', { deliver_policy: 'new', ack_policy: 'explicit' }),
  info('new', 'created'),
  create('seq', { deliver_policy: 'by_start_sequence', opt_start_seq: 3 }),
  next('seq', 'all there is', { batch: 10, no_wait: true }, 6),
  create('seqf', { deliver_policy: 'by_start_sequence', opt_start_seq: 2, filter_subject: 's.b' }),
  next('seqf', 'all there is', { batch: 10, no_wait: true }, 3),
  create('time', { deliver_policy: 'by_start_time', opt_start_time: start }),
  info('time', 'created'),
  create('lps', { deliver_policy: 'last_per_subject', filter_subject: 's.*' }),
  info('lps', 'created'),
  next('lps', 'all there is', { batch: 10, no_wait: true }, 5),
  create('lpsa', { deliver_policy: 'last_per_subject', filter_subject: 's.a' }),
  next('lpsa', 'all there is', { batch: 10, no_wait: true }, 2),
  pub('s.a', 'eight'),
  info('new', 'after a publish'),
  info('lps', 'after a publish'),

  // ---- push: deliver subject, headers, heartbeat, flow control ----
  {
    ...create('push', { deliver_subject: 'D.push', ack_policy: 'explicit', filter_subject: 's.b' }),
    expect: 3,
  },
  info('push', 'delivered'),
  ack('push +ACK', 'create push', 1, '+ACK', { expect: 1 }),
  info('push', 'acked'),
  {
    ...create('ho', { deliver_subject: 'D.ho', headers_only: true, filter_subject: 's.b' }),
    expect: 3,
  },
  // The transcript listens on H.> for one message: heartbeats stop reaching it after.
  {
    ...create('hb', {
      deliver_subject: 'H.hb',
      deliver_policy: 'new',
      idle_heartbeat: 200 * MS,
      flow_control: true,
    }),
    expect: 2,
  },
  {
    ...create('grp', { deliver_subject: 'G.grp', deliver_group: 'workers', filter_subject: 's.c' }),
    expect: 2,
  },
  info('grp', 'delivered'),
  create('wild', { deliver_subject: 'W.x', filter_subject: 's.c' }),
  { ...info('wild', 'a wildcard subscription is not interest'), delay: 100 },
  create('grp2', { deliver_subject: 'G.grp', deliver_group: 'others', filter_subject: 's.c' }),
  { ...info('grp2', 'another queue is not interest'), delay: 100 },
  next('push', 'pull from push', null),

  // ---- redelivery, max_deliver, max_ack_pending, sample_freq ----
  create('R', {
    ack_policy: 'explicit',
    ack_wait: 150 * MS,
    max_deliver: 2,
    filter_subject: 's.c',
    sample_freq: '100%',
  }),
  next('R', 'first delivery', null),
  { ...next('R', 'after ack_wait', null), delay: 250 },
  { ...next('R', 'after max_deliver', { batch: 1, expires: 300 * MS }, 2), delay: 250 },
  info('R', 'max delivered'),
  create('R2', { ack_policy: 'explicit', filter_subject: 's.c', sample_freq: '100%' }),
  next('R2', 'one', null),
  ack('with a metric', 'next R2: one', 0, '+ACK', { expect: 2 }),
  // -NAK with a Go duration; +TERM with a reason is no term in 2.9.10.
  create('NK', { ack_policy: 'explicit', filter_subject: 's.c' }),
  next('NK', 'one', null),
  ack('-NAK 300ms', 'next NK: one', 0, '-NAK 300ms', { expect: 2 }),
  next('NK', 'not yet', { batch: 1, expires: 100 * MS }),
  next('NK', 'after the delay', { batch: 1, expires: 600 * MS }),
  ack('+TERM with a reason', 'next NK: after the delay', 0, '+TERM no thanks', { expect: 1 }),
  info('NK', 'after +TERM with a reason'),
  ack('-NAK bad delay', 'next NK: after the delay', 0, '-NAK soon', { expect: 2 }),
  next('NK', 'at once after a bad delay', null),
  // rate_limit_bps and replay original deliver the same messages.
  {
    ...create('rl', { deliver_subject: 'D.rl', rate_limit_bps: 8000, filter_subject: 's.a' }),
    expect: 4,
  },
  {
    ...create('ro', { deliver_subject: 'D.ro', replay_policy: 'original', filter_subject: 's.b' }),
    expect: 3,
  },
  // backoff: the first redelivery after 150 ms, the next after 400 ms.
  create('BO', {
    ack_policy: 'explicit',
    filter_subject: 's.c',
    backoff: [150 * MS, 400 * MS],
    max_deliver: 3,
  }),
  next('BO', 'first delivery', null),
  { ...next('BO', 'after the first backoff', { batch: 1, expires: 600 * MS }), delay: 200 },
  next('BO', 'not before the second', { batch: 1, expires: 200 * MS }),
  next('BO', 'after the second', { batch: 1, expires: 600 * MS }),
  info('BO', 'three deliveries'),
  // No request waits: max_deliver's advisory only goes once one comes, after ack_wait.
  { ...info('BO', 'after the last ack_wait'), delay: 450 },
  next('BO', 'past max_deliver', { batch: 1, expires: 100 * MS }, 2),
  info('BO', 'past max_deliver'),
  create('MAP', { ack_policy: 'explicit', max_ack_pending: 2 }),
  next('MAP', 'batch 5 at max_ack_pending 2', { batch: 5, expires: 200 * MS }, 3),
  info('MAP', 'at max_ack_pending'),
  ack('-NAK with delay', 'next MAP: batch 5 at max_ack_pending 2', 0, '-NAK {"delay":300000000}', {
    expect: 1,
  }),
  // At max_ack_pending a no_wait request waits: the nacked one comes back after its delay.
  next('MAP', 'no_wait at max_ack_pending', { batch: 1, no_wait: true }),
  next('MAP', 'nothing more', { batch: 1, expires: 200 * MS }),
  info('MAP', 'after the delay'),

  // ---- inactive_threshold and delete ----
  create('pushgone', { deliver_subject: 'Z.nobody', inactive_threshold: 200 * MS }),
  create('gone', { ack_policy: 'explicit', inactive_threshold: 200 * MS }),
  durable('dgone', { ack_policy: 'explicit', inactive_threshold: 200 * MS }),
  // A pull consumer's wait is its threshold plus 100 ms and up to 900 ms of jitter.
  { ...info('gone', 'after the threshold'), delay: 1400 },
  info('dgone', 'after the threshold'),
  info('pushgone', 'after the threshold'),
  // A no_wait request behind waiting ones that would take everything left.
  create('RP', { ack_policy: 'explicit', filter_subject: 's.c', max_ack_pending: 1 }),
  next('RP', 'take the one message', null),
  next('RP', 'wait for more', { batch: 5, expires: 400 * MS }, 0),
  // grp's queue subscriber gets it too.
  { ...pub('s.c', 'nine'), expect: 2 },
  next('RP', 'no_wait behind it', { batch: 1, no_wait: true }),
  info('RP', 'one waiting'),
  { name: 'RP: the waiting request expires', subject: 'nothing', noReply: true, expect: 1 },
  durable('DEL', { ack_policy: 'explicit', deliver_policy: 'new' }),
  next('DEL', 'waiting for a delete', { batch: 1, expires: 2e9 }, 0),
  { name: 'delete DEL', subject: `${C}DELETE.S.DEL`, expect: 2 },

  // ---- flow control: a request past half the 2 MB window, a stop past all of it ----
  {
    name: 'stream B',
    subject: `${S}CREATE.B`,
    body: { name: 'B', subjects: ['b.>'], storage: 'memory' },
  },
  ...bigMessages(),
  {
    ...create(
      'fc',
      { deliver_subject: 'F.fc', flow_control: true, idle_heartbeat: 5e9, ack_policy: 'none' },
      'B',
    ),
    expect: 23,
  },
  info('fc', 'stalled', 'B'),
  {
    name: 'flow control answered',
    subject: (t) => t.lastFlowControl(),
    noReply: true,
    expect: 9,
  },
  info('fc', 'all delivered', 'B'),
];
