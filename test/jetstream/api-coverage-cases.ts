// The $JS.API request types of nats-server 2.9.10 that the main sequence (api-cases.ts)
// does not send, with their errors: consumer lists, the clustered-only requests as a
// single server answers them, account purge and stream moves, stream templates, and
// subjects under $JS.API that name no request. The reference's answers are recorded in
// fixtures/api-coverage.json (capture-reference-coverage.ts). Also the list of every
// request type the reference serves, which api-coverage.test.ts checks against all the
// recorded cases.

import type { ApiCase } from './api-cases.js';

const S = '$JS.API.STREAM.';
const C = '$JS.API.CONSUMER.';

/** Every request subject of nats-server 2.9.10 (server/jetstream_api.go), `*` a name. */
export const REFERENCE_API_SUBJECTS = [
  '$JS.API.INFO',
  '$JS.API.STREAM.TEMPLATE.CREATE.*',
  '$JS.API.STREAM.TEMPLATE.NAMES',
  '$JS.API.STREAM.TEMPLATE.INFO.*',
  '$JS.API.STREAM.TEMPLATE.DELETE.*',
  '$JS.API.STREAM.CREATE.*',
  '$JS.API.STREAM.UPDATE.*',
  '$JS.API.STREAM.NAMES',
  '$JS.API.STREAM.LIST',
  '$JS.API.STREAM.INFO.*',
  '$JS.API.STREAM.DELETE.*',
  '$JS.API.STREAM.PURGE.*',
  '$JS.API.STREAM.SNAPSHOT.*',
  '$JS.API.STREAM.RESTORE.*',
  '$JS.API.STREAM.MSG.DELETE.*',
  '$JS.API.STREAM.MSG.GET.*',
  '$JS.API.DIRECT.GET.*',
  '$JS.API.DIRECT.GET.*.>',
  '$JS.API.CONSUMER.CREATE.*',
  '$JS.API.CONSUMER.CREATE.*.>',
  '$JS.API.CONSUMER.DURABLE.CREATE.*.*',
  '$JS.API.CONSUMER.NAMES.*',
  '$JS.API.CONSUMER.LIST.*',
  '$JS.API.CONSUMER.INFO.*.*',
  '$JS.API.CONSUMER.DELETE.*.*',
  '$JS.API.CONSUMER.MSG.NEXT.*.*',
  '$JS.API.STREAM.PEER.REMOVE.*',
  '$JS.API.STREAM.LEADER.STEPDOWN.*',
  '$JS.API.CONSUMER.LEADER.STEPDOWN.*.*',
  '$JS.API.META.LEADER.STEPDOWN',
  '$JS.API.SERVER.REMOVE',
  '$JS.API.ACCOUNT.PURGE.*',
  '$JS.API.ACCOUNT.STREAM.MOVE.*.*',
  '$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.*.*',
] as const;

const stream = { name: 'CV', subjects: ['cv.>'], storage: 'memory' };
const durable = (name: string): unknown => ({
  stream_name: 'CV',
  config: { durable_name: name, ack_policy: 'explicit' },
});

export const COVERAGE_CASES: ApiCase[] = [
  { name: 'create the stream', subject: S + 'CREATE.CV', body: stream },
  { name: 'consumer list: none yet', subject: C + 'LIST.CV', body: null },
  { name: 'durable d1', subject: C + 'DURABLE.CREATE.CV.d1', body: durable('d1') },
  { name: 'durable d2', subject: C + 'DURABLE.CREATE.CV.d2', body: durable('d2') },
  { name: 'consumer list: both', subject: C + 'LIST.CV', body: null },
  { name: 'consumer list: offset 1', subject: C + 'LIST.CV', body: { offset: 1 } },
  { name: 'consumer list: offset past the end', subject: C + 'LIST.CV', body: { offset: 9 } },
  { name: 'consumer list: not JSON', subject: C + 'LIST.CV', body: 'x' },
  { name: 'consumer list: offset a string', subject: C + 'LIST.CV', body: { offset: 'a' } },
  { name: 'consumer list: no such stream', subject: C + 'LIST.NOPE', body: null },
  { name: 'consumer names: offset 1', subject: C + 'NAMES.CV', body: { offset: 1 } },
  { name: 'consumer names: no such stream', subject: C + 'NAMES.NOPE', body: null },
  { name: 'consumer stepdown', subject: C + 'LEADER.STEPDOWN.CV.d1', body: null },
  { name: 'consumer stepdown: no such consumer', subject: C + 'LEADER.STEPDOWN.CV.zz', body: null },
  { name: 'consumer stepdown: no such stream', subject: C + 'LEADER.STEPDOWN.NOPE.d1', body: null },
  { name: 'stream stepdown: no such stream', subject: S + 'LEADER.STEPDOWN.NOPE', body: null },
  { name: 'peer remove', subject: S + 'PEER.REMOVE.CV', body: { peer: 'x' } },
  { name: 'peer remove: empty body', subject: S + 'PEER.REMOVE.CV', body: null },
  { name: 'peer remove: no such stream', subject: S + 'PEER.REMOVE.NOPE', body: { peer: 'x' } },
  { name: 'meta stepdown', subject: '$JS.API.META.LEADER.STEPDOWN', body: null, noReply: true },
  { name: 'server remove', subject: '$JS.API.SERVER.REMOVE', body: { peer: 'x' }, noReply: true },
  { name: 'account purge', subject: '$JS.API.ACCOUNT.PURGE.$G', body: null },
  { name: 'account purge: another account', subject: '$JS.API.ACCOUNT.PURGE.OTHER', body: null },
  {
    name: 'stream move',
    subject: '$JS.API.ACCOUNT.STREAM.MOVE.$G.CV',
    body: { server: 'x' },
    noReply: true,
  },
  {
    name: 'stream cancel move',
    subject: '$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.$G.CV',
    body: null,
    noReply: true,
  },
  { name: 'template names', subject: S + 'TEMPLATE.NAMES', body: null },
  { name: 'no such request', subject: '$JS.API.NOPE', body: null, noReply: true },
  { name: 'a request with a token too many', subject: S + 'INFO.CV.x', body: null, noReply: true },
  { name: 'consumer list after all that', subject: C + 'LIST.CV', body: null },
];
