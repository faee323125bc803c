// The API requests whose answers the reference recorded (fixtures/api.json) and wirebus
// must give again: one stateful sequence, run in order on a fresh server.

export interface ApiCase {
  /** What the step checks. */
  name: string;
  subject: string;
  /** The body: a string as is, anything else as JSON; null for an empty body. */
  body: unknown;
  headers?: Record<string, string>;
  /** Send without waiting for a reply (setup), or expect none (the reference is silent). */
  noReply?: boolean;
}

const S = '$JS.API.STREAM.';
const C = '$JS.API.CONSUMER.';
const mem = { storage: 'memory' };

/** A publish with one header (the expectations and rollups a stream checks). */
function published(
  name: string,
  subject: string,
  body: string,
  header: string,
  value: string,
): ApiCase {
  return { name, subject, body, headers: { [header]: value } };
}

export const API_CASES: ApiCase[] = [
  { name: 'account info, empty', subject: '$JS.API.INFO', body: null },
  { name: 'create: name mismatch', subject: S + 'CREATE.S1', body: { subjects: ['a.>'] } },
  { name: 'create: not JSON', subject: S + 'CREATE.S1', body: 'nope' },
  { name: 'create: empty body', subject: S + 'CREATE.S1', body: null },
  { name: 'create: wrong type', subject: S + 'CREATE.S1', body: { name: 'S1', max_msgs: 'x' } },
  { name: 'create: fraction', subject: S + 'CREATE.S1', body: { name: 'S1', max_age: 1.5 } },
  { name: 'create: bad retention', subject: S + 'CREATE.S1', body: { name: 'S1', retention: 'x' } },
  {
    name: 'create: bad subject',
    subject: S + 'CREATE.S1',
    body: { name: 'S1', subjects: ['a..b'] },
  },
  {
    name: 'create: api overlap',
    subject: S + 'CREATE.S1',
    body: { name: 'S1', subjects: ['$JS.API.x'] },
  },
  {
    name: 'create: duplicate subjects',
    subject: S + 'CREATE.S1',
    body: { name: 'S1', subjects: ['a', 'a'] },
  },
  {
    name: 'create: self overlap',
    subject: S + 'CREATE.S1',
    body: { name: 'S1', subjects: ['a.*', 'a.b'] },
  },
  { name: 'create: max age small', subject: S + 'CREATE.S1', body: { name: 'S1', max_age: 1000 } },
  { name: 'create: replicas', subject: S + 'CREATE.S1', body: { name: 'S1', num_replicas: 3 } },
  {
    name: 'create: negative replicas',
    subject: S + 'CREATE.S1',
    body: { name: 'S1', num_replicas: -1 },
  },
  { name: 'create: sealed', subject: S + 'CREATE.S1', body: { name: 'S1', sealed: true } },
  {
    name: 'create: rollup and deny purge',
    subject: S + 'CREATE.S1',
    body: { name: 'S1', allow_rollup_hdrs: true, deny_purge: true },
  },
  {
    name: 'create: discard new per subject',
    subject: S + 'CREATE.S1',
    body: { name: 'S1', discard_new_per_subject: true },
  },
  { name: 'create', subject: S + 'CREATE.S1', body: { name: 'S1', subjects: ['a.>'], ...mem } },
  {
    name: 'create again, same',
    subject: S + 'CREATE.S1',
    body: { name: 'S1', subjects: ['a.>'], ...mem },
  },
  {
    name: 'create again, different',
    subject: S + 'CREATE.S1',
    body: { name: 'S1', subjects: ['a.>'], ...mem, max_msgs: 5 },
  },
  {
    name: 'create: overlap',
    subject: S + 'CREATE.S2',
    body: { name: 'S2', subjects: ['a.b'], ...mem },
  },
  { name: 'publish', subject: 'a.b', body: 'one' },
  { name: 'publish with id', subject: 'a.b', body: 'two', headers: { 'Nats-Msg-Id': 'x' } },
  { name: 'publish duplicate', subject: 'a.b', body: 'two', headers: { 'Nats-Msg-Id': 'x' } },
  published('expected stream wrong', 'a.c', 'x', 'Nats-Expected-Stream', 'zz'),
  published('expected last seq wrong', 'a.c', 'x', 'Nats-Expected-Last-Sequence', '1'),
  published('expected last seq right', 'a.c', 'x', 'Nats-Expected-Last-Sequence', '2'),
  published(
    'expected last subject seq wrong',
    'a.c',
    'y',
    'Nats-Expected-Last-Subject-Sequence',
    '1',
  ),
  published(
    'expected last subject seq right',
    'a.c',
    'y',
    'Nats-Expected-Last-Subject-Sequence',
    '3',
  ),
  published('expected last msg id wrong', 'a.d', 'z', 'Nats-Expected-Last-Msg-Id', 'q'),
  { name: 'rollup not permitted', subject: 'a.d', body: 'z', headers: { 'Nats-Rollup': 'sub' } },
  { name: 'stream info', subject: S + 'INFO.S1', body: null },
  { name: 'stream info subjects', subject: S + 'INFO.S1', body: { subjects_filter: '>' } },
  { name: 'stream info bad JSON', subject: S + 'INFO.S1', body: '{' },
  { name: 'stream info unknown', subject: S + 'INFO.S9', body: null },
  { name: 'names', subject: S + 'NAMES', body: null },
  { name: 'names filtered out', subject: S + 'NAMES', body: { subject: 'b.>' } },
  { name: 'list', subject: S + 'LIST', body: null },
  { name: 'msg get seq', subject: S + 'MSG.GET.S1', body: { seq: 2 } },
  { name: 'msg get last', subject: S + 'MSG.GET.S1', body: { last_by_subj: 'a.c' } },
  { name: 'msg get next', subject: S + 'MSG.GET.S1', body: { seq: 2, next_by_subj: 'a.c' } },
  { name: 'msg get missing', subject: S + 'MSG.GET.S1', body: { seq: 99 } },
  { name: 'msg get empty', subject: S + 'MSG.GET.S1', body: null },
  { name: 'msg get both', subject: S + 'MSG.GET.S1', body: { seq: 1, last_by_subj: 'a.c' } },
  { name: 'msg get negative', subject: S + 'MSG.GET.S1', body: { seq: -1 } },
  { name: 'msg delete', subject: S + 'MSG.DELETE.S1', body: { seq: 1 } },
  { name: 'msg delete again', subject: S + 'MSG.DELETE.S1', body: { seq: 1, no_erase: true } },
  { name: 'stream info deleted details', subject: S + 'INFO.S1', body: { deleted_details: true } },
  {
    name: 'update',
    subject: S + 'UPDATE.S1',
    body: { name: 'S1', subjects: ['a.>'], ...mem, max_msgs_per_subject: 1 },
  },
  {
    name: 'update storage',
    subject: S + 'UPDATE.S1',
    body: { name: 'S1', subjects: ['a.>'], storage: 'file' },
  },
  { name: 'update unknown', subject: S + 'UPDATE.S9', body: { name: 'S9' } },
  { name: 'consumer: not JSON', subject: C + 'CREATE.S1', body: 'x' },
  {
    name: 'consumer: stream mismatch',
    subject: C + 'CREATE.S1',
    body: { stream_name: 'S2', config: {} },
  },
  {
    name: 'consumer: ephemeral with durable',
    subject: C + 'CREATE.S1',
    body: { stream_name: 'S1', config: { durable_name: 'd' } },
  },
  {
    name: 'consumer: durable not set',
    subject: C + 'DURABLE.CREATE.S1.d1',
    body: { stream_name: 'S1', config: {} },
  },
  {
    name: 'consumer: durable mismatch',
    subject: C + 'DURABLE.CREATE.S1.d1',
    body: { stream_name: 'S1', config: { durable_name: 'd2' } },
  },
  {
    name: 'consumer: bad filter',
    subject: C + 'DURABLE.CREATE.S1.d1',
    body: { stream_name: 'S1', config: { durable_name: 'd1', filter_subject: 'b' } },
  },
  {
    name: 'consumer: bad policy',
    subject: C + 'DURABLE.CREATE.S1.d1',
    body: {
      stream_name: 'S1',
      config: { durable_name: 'd1', deliver_policy: 'by_start_sequence' },
    },
  },
  {
    name: 'consumer: push with max waiting',
    subject: C + 'DURABLE.CREATE.S1.d1',
    body: {
      stream_name: 'S1',
      config: { durable_name: 'd1', deliver_subject: 'dx', max_waiting: 5 },
    },
  },
  {
    name: 'consumer: pull heartbeat',
    subject: C + 'DURABLE.CREATE.S1.d1',
    body: { stream_name: 'S1', config: { durable_name: 'd1', idle_heartbeat: 1e9 } },
  },
  {
    name: 'consumer: flow control without heartbeat',
    subject: C + 'DURABLE.CREATE.S1.d1',
    body: {
      stream_name: 'S1',
      config: { durable_name: 'd1', deliver_subject: 'dx', flow_control: true },
    },
  },
  {
    name: 'consumer: deliver cycle',
    subject: C + 'DURABLE.CREATE.S1.d1',
    body: { stream_name: 'S1', config: { durable_name: 'd1', deliver_subject: 'a.x' } },
  },
  {
    name: 'consumer: stream unknown',
    subject: C + 'DURABLE.CREATE.S9.d1',
    body: { stream_name: 'S9', config: { durable_name: 'd1' } },
  },
  {
    name: 'consumer: durable pull',
    subject: C + 'DURABLE.CREATE.S1.d1',
    body: { stream_name: 'S1', config: { durable_name: 'd1', ack_policy: 'explicit' } },
  },
  {
    name: 'consumer: named with filter',
    subject: C + 'CREATE.S1.n1.a.c',
    body: {
      stream_name: 'S1',
      config: { name: 'n1', filter_subject: 'a.c', ack_policy: 'explicit' },
    },
  },
  {
    name: 'consumer: filter mismatch',
    subject: C + 'CREATE.S1.n2.a.c',
    body: { stream_name: 'S1', config: { name: 'n2', filter_subject: 'a.d' } },
  },
  { name: 'consumer info', subject: C + 'INFO.S1.d1', body: null },
  { name: 'consumer info unknown', subject: C + 'INFO.S1.zz', body: null },
  { name: 'consumer names', subject: C + 'NAMES.S1', body: null },
  { name: 'next', subject: C + 'MSG.NEXT.S1.d1', body: null },
  { name: 'next batch no_wait', subject: C + 'MSG.NEXT.S1.n1', body: { batch: 1, no_wait: true } },
  { name: 'next no_wait empty', subject: C + 'MSG.NEXT.S1.n1', body: { batch: 1, no_wait: true } },
  { name: 'next expires', subject: C + 'MSG.NEXT.S1.n1', body: { batch: 2, expires: 200_000_000 } },
  {
    name: 'next bad heartbeat',
    subject: C + 'MSG.NEXT.S1.n1',
    body: { batch: 1, expires: 1e9, idle_heartbeat: 1e9 },
  },
  { name: 'consumer info after', subject: C + 'INFO.S1.d1', body: null },
  { name: 'purge bad', subject: S + 'PURGE.S1', body: { seq: 2, keep: 1 } },
  { name: 'purge subject', subject: S + 'PURGE.S1', body: { filter: 'a.c' } },
  { name: 'purge', subject: S + 'PURGE.S1', body: null },
  { name: 'consumer delete', subject: C + 'DELETE.S1.d1', body: null },
  { name: 'consumer delete again', subject: C + 'DELETE.S1.d1', body: null },
  { name: 'stepdown', subject: S + 'LEADER.STEPDOWN.S1', body: null },
  { name: 'delete with body', subject: S + 'DELETE.S1', body: { x: 1 } },
  { name: 'delete', subject: S + 'DELETE.S1', body: null },
  { name: 'delete unknown', subject: S + 'DELETE.S1', body: null },
  { name: 'account info, after', subject: '$JS.API.INFO', body: null },
];
