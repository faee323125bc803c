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
  { name: 'unknown verb', subject: S + 'FOO', body: null, noReply: true },
  { name: 'INFO with an extra token', subject: '$JS.API.INFO.x', body: null, noReply: true },
  { name: 'account info', subject: '$JS.API.INFO', body: null },
  { name: 'account info with a body', subject: '$JS.API.INFO', body: { x: 1 } },
  { name: 'account purge, unknown account', subject: '$JS.API.ACCOUNT.PURGE.FOO', body: null },
  { name: 'names before the purge', subject: S + 'NAMES', body: null },
  { name: 'account purge', subject: '$JS.API.ACCOUNT.PURGE.$G', body: null },
  { name: 'names after the purge', subject: S + 'NAMES', body: null },
  { name: 'account info after the purge', subject: '$JS.API.INFO', body: null },
];
