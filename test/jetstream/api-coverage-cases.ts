// The list of every $JS.API request type nats-server 2.9.10 serves, which
// api-coverage.test.ts checks against all the recorded cases, and the few requests and
// errors no other recording sends (api-cases.ts, api-cases-more.ts, storage-cases.ts):
// consumer lists and names with their errors, a clustered-only request on a stream that
// does not exist. The reference's answers are recorded in
// fixtures/api-coverage.json (capture-reference-coverage.ts).

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
  { name: 'consumer list: offset 1', subject: C + 'LIST.CV', body: { offset: 1 } },
  { name: 'consumer list: offset a string', subject: C + 'LIST.CV', body: { offset: 'a' } },
  { name: 'consumer names: no such stream', subject: C + 'NAMES.NOPE', body: null },
  { name: 'consumer names: not JSON', subject: C + 'NAMES.CV', body: 'x' },
  {
    name: 'consumer stepdown: no such stream',
    subject: C + 'LEADER.STEPDOWN.NOPE.d1',
    body: null,
  },
  { name: 'peer remove: empty body', subject: S + 'PEER.REMOVE.CV', body: null },
  { name: 'template names', subject: S + 'TEMPLATE.NAMES', body: null },
  { name: 'template names: offset', subject: S + 'TEMPLATE.NAMES', body: { offset: 2 } },
];
