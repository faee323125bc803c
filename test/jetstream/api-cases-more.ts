// More API requests whose answers the reference recorded (fixtures/api-more.json):
// the clustered-only requests as a single server answers them, consumer and stream
// lists with paging, MSG.GET and MSG.DELETE corners, purge with keep and seq, names with
// `.`, `*`, `>`, absurd numbers and wrong types, and ACCOUNT.PURGE, which on a single
// reference server deletes the account's streams. One sequence, run in order.

import type { ApiCase } from './api-cases.js';

const S = '$JS.API.STREAM.';
const C = '$JS.API.CONSUMER.';
const mem = { storage: 'memory' };

/** A durable create request for stream S1 with `config` added to its durable name. */
function durable(name: string, consumer: string, config: Record<string, unknown>): ApiCase {
  return {
    name,
    subject: `${C}DURABLE.CREATE.S1.${consumer}`,
    body: { stream_name: 'S1', config: { durable_name: consumer, ...config } },
  };
}

const T = '$JS.API.STREAM.TEMPLATE.';
const tmpl = { name: 'T', max_streams: 2, config: { subjects: ['t.*'], storage: 'memory' } };

const TEMPLATE_CASES: ApiCase[] = [
  { name: 'template create', subject: T + 'CREATE.T', body: tmpl },
  { name: 'template create again', subject: T + 'CREATE.T', body: tmpl },
  { name: 'template create, name mismatch', subject: T + 'CREATE.T', body: { ...tmpl, name: 'U' } },
  {
    name: 'template create, named config',
    subject: T + 'CREATE.U',
    body: { name: 'U', config: { name: 'x', subjects: ['u'] } },
  },
  {
    name: 'template create, bad config',
    subject: T + 'CREATE.U',
    body: { name: 'U', config: { subjects: ['u'], max_age: 5 } },
  },
  { name: 'template create, bad JSON', subject: T + 'CREATE.U', body: '{' },
  {
    name: 'template create, negative max_streams',
    subject: T + 'CREATE.U',
    body: { ...tmpl, name: 'U', max_streams: -1 },
  },
  { name: 'publish t.a', subject: 't.a', body: 'x' },
  { name: 'publish t.a again', subject: 't.a', body: 'y' },
  { name: 'publish t.b', subject: 't.b', body: 'x' },
  { name: 'publish t.c, over max_streams', subject: 't.c', body: 'x', noReply: true },
  { name: 'info of a template stream', subject: S + 'INFO.t_a', body: null },
  { name: 'template names', subject: T + 'NAMES', body: null },
  { name: 'template names, offset', subject: T + 'NAMES', body: { offset: 1 } },
  { name: 'template names, bad JSON', subject: T + 'NAMES', body: '[' },
  { name: 'template info', subject: T + 'INFO.T', body: null },
  { name: 'template info with a body', subject: T + 'INFO.T', body: { x: 1 } },
  { name: 'template info, unknown', subject: T + 'INFO.Z', body: null },
  { name: 'delete a template stream', subject: S + 'DELETE.t_b', body: null },
  { name: 'template info after', subject: T + 'INFO.T', body: null },
  { name: 'template delete', subject: T + 'DELETE.T', body: null },
  { name: 'template delete again', subject: T + 'DELETE.T', body: null },
  { name: 'template delete with a body', subject: T + 'DELETE.T', body: { x: 1 } },
  { name: 'names after the template', subject: S + 'NAMES', body: null },
];

export const MORE_API_CASES: ApiCase[] = [
  { name: 'create', subject: S + 'CREATE.S1', body: { name: 'S1', subjects: ['a.>'], ...mem } },
  { name: 'publish 1', subject: 'a.b', body: '1' },
  { name: 'publish 2', subject: 'a.c', body: '2' },
  { name: 'publish 3', subject: 'a.b', body: '3' },
  { name: 'publish 4', subject: 'a.c', body: '4' },
  durable('durable', 'd1', { ack_policy: 'explicit' }),
  { name: 'peer remove', subject: S + 'PEER.REMOVE.S1', body: { peer: 'x' } },
  { name: 'peer remove, empty', subject: S + 'PEER.REMOVE.S1', body: null },
  { name: 'peer remove, unknown stream', subject: S + 'PEER.REMOVE.S9', body: null },
  { name: 'stream stepdown', subject: S + 'LEADER.STEPDOWN.S1', body: null },
  { name: 'stream stepdown, unknown', subject: S + 'LEADER.STEPDOWN.S9', body: null },
  { name: 'consumer stepdown', subject: C + 'LEADER.STEPDOWN.S1.d1', body: null },
  { name: 'consumer stepdown, unknown', subject: C + 'LEADER.STEPDOWN.S1.zz', body: null },
  { name: 'meta stepdown', subject: '$JS.API.META.LEADER.STEPDOWN', body: null, noReply: true },
  { name: 'server remove', subject: '$JS.API.SERVER.REMOVE', body: { peer: 'x' }, noReply: true },
  {
    name: 'stream move',
    subject: '$JS.API.ACCOUNT.STREAM.MOVE.$G.S1',
    body: { server: 'x' },
    noReply: true,
  },
  {
    name: 'stream cancel move',
    subject: '$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.$G.S1',
    body: null,
    noReply: true,
  },
  { name: 'consumer list', subject: C + 'LIST.S1', body: null },
  { name: 'consumer list, offset past the end', subject: C + 'LIST.S1', body: { offset: 5 } },
  { name: 'consumer names, offset', subject: C + 'NAMES.S1', body: { offset: 1 } },
  { name: 'consumer list, unknown stream', subject: C + 'LIST.S9', body: null },
  { name: 'consumer list, bad JSON', subject: C + 'LIST.S1', body: '{' },
  { name: 'stream list, offset', subject: S + 'LIST', body: { offset: 3 } },
  { name: 'stream names, subject', subject: S + 'NAMES', body: { subject: 'a.b' } },
  { name: 'msg get, next without seq', subject: S + 'MSG.GET.S1', body: { next_by_subj: 'a.c' } },
  {
    name: 'msg get, next by wildcard',
    subject: S + 'MSG.GET.S1',
    body: { seq: 1, next_by_subj: 'a.*' },
  },
  { name: 'msg get, last by wildcard', subject: S + 'MSG.GET.S1', body: { last_by_subj: 'a.*' } },
  { name: 'msg get, last missing', subject: S + 'MSG.GET.S1', body: { last_by_subj: 'a.zz' } },
  { name: 'msg get, huge seq', subject: S + 'MSG.GET.S1', body: { seq: 1e30 } },
  { name: 'msg get, seq as string', subject: S + 'MSG.GET.S1', body: { seq: '1' } },
  { name: 'msg delete, erase', subject: S + 'MSG.DELETE.S1', body: { seq: 2 } },
  { name: 'msg delete, missing', subject: S + 'MSG.DELETE.S1', body: { seq: 99 } },
  { name: 'msg delete, empty', subject: S + 'MSG.DELETE.S1', body: null },
  { name: 'msg delete, unknown stream', subject: S + 'MSG.DELETE.S9', body: { seq: 1 } },
  { name: 'purge, keep', subject: S + 'PURGE.S1', body: { keep: 1 } },
  { name: 'purge, seq', subject: S + 'PURGE.S1', body: { seq: 4 } },
  { name: 'purge, bad JSON', subject: S + 'PURGE.S1', body: 'x' },
  { name: 'purge, unknown stream', subject: S + 'PURGE.S9', body: null },
  { name: 'consumer info', subject: C + 'INFO.S1.d1', body: null },
  { name: 'create, name with *', subject: S + 'CREATE.a*', body: { name: 'a*' } },
  { name: 'create, name >', subject: S + 'CREATE.>', body: { name: '>' } },
  { name: 'create, name with .', subject: S + 'CREATE.x', body: { name: 'x.y' } },
  { name: 'create, absurd max_msgs', subject: S + 'CREATE.X', body: { name: 'X', max_msgs: 1e30 } },
  {
    name: 'create, absurd max_bytes',
    subject: S + 'CREATE.X',
    body: { name: 'X', max_bytes: 9.3e18, ...mem },
  },
  {
    name: 'create, absurd duplicate_window',
    subject: S + 'CREATE.X',
    body: { name: 'X', duplicate_window: 1e19, ...mem },
  },
  {
    name: 'create, subjects not a list',
    subject: S + 'CREATE.X',
    body: { name: 'X', subjects: 'x' },
  },
  { name: 'create, array body', subject: S + 'CREATE.X', body: [] },
  { name: 'create, null body', subject: S + 'CREATE.X', body: 'null' },
  {
    name: 'create, negative max_msg_size',
    subject: S + 'CREATE.X',
    body: { name: 'X', max_msg_size: -5, ...mem },
  },
  {
    name: 'consumer, durable name with .',
    subject: C + 'DURABLE.CREATE.S1.a',
    body: { stream_name: 'S1', config: { durable_name: 'a.b' } },
  },
  durable('consumer, durable name with *', 'a*', {}),
  {
    name: 'consumer, name with > in the subject',
    subject: C + 'CREATE.S1.x>',
    body: { stream_name: 'S1', config: { name: 'x>' } },
  },
  {
    name: 'consumer, name with * in the subject',
    subject: C + 'CREATE.S1.y*',
    body: { stream_name: 'S1', config: {} },
  },
  durable('consumer, absurd max_deliver', 'd3', { max_deliver: 1e30 }),
  durable('consumer, bad ack policy', 'd3', { ack_policy: 'maybe' }),
  {
    name: 'consumer, config a string',
    subject: C + 'DURABLE.CREATE.S1.d3',
    body: { stream_name: 'S1', config: 'x' },
  },
  {
    name: 'next, negative batch',
    subject: C + 'MSG.NEXT.S1.d1',
    body: { batch: -1, no_wait: true },
  },
  { name: 'next, unknown consumer', subject: C + 'MSG.NEXT.S1.zz', body: null, noReply: true },
  // Go's own error texts for bodies its json.Unmarshal refuses.
  ...[
    '{x',
    '{"batch":"1"}',
    '{"batch":1.5}',
    '{"batch":1e3}',
    '{"no_wait":1}',
    '{"expires":"1s"}',
    '{"batch":[1]}',
    '{"batch":{}}',
    '{"batch":true}',
    '{"batch":1,}',
    '{"batch":01}',
    '{"batch":-}',
    '{"batch":1.}',
    '{"batch":1e}',
    '{"a":tru}',
    '{"a":"\\x"}',
    '{"a":"\\u12g4"}',
    '{"a":"x\n"}',
    '{"a":',
    '{"a" 1}',
    '{} x',
    '{"batch":99999999999999999999}',
    '{"batch":1,"batch":"x"}',
    '{"idle_heartbeat":5,"expires":1}',
    '{"Batch":"2"}',
    '{"a":[1 2]}',
    '{"a":\u00e9}',
    '{"batch":null,"no_wait":true}',
  ].map((body) => ({ name: `next, body ${body}`, subject: C + 'MSG.NEXT.S1.d1', body })),
  { name: 'unknown verb', subject: S + 'FOO', body: null, noReply: true },
  { name: 'INFO with an extra token', subject: '$JS.API.INFO.x', body: null, noReply: true },
  { name: 'account info', subject: '$JS.API.INFO', body: null },
  { name: 'account info with a body', subject: '$JS.API.INFO', body: { x: 1 } },
  // Stream templates: the first message on a subject makes its stream.
  ...TEMPLATE_CASES,
  { name: 'account purge, unknown account', subject: '$JS.API.ACCOUNT.PURGE.FOO', body: null },
  { name: 'names before the purge', subject: S + 'NAMES', body: null },
  { name: 'account purge', subject: '$JS.API.ACCOUNT.PURGE.$G', body: null },
  { name: 'names after the purge', subject: S + 'NAMES', body: null },
  { name: 'account info after the purge', subject: '$JS.API.INFO', body: null },
];
