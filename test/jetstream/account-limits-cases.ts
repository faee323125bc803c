// An account with every JetStream limit the reference reads from an account's
// `jetstream` map (under its other names for some), and the requests that meet them:
// account info, max_bytes required and capped per storage, max_ack_pending as default
// and as ceiling, max_streams. Recorded from nats-server 2.9.10 by
// capture-reference-limits.ts (fixtures/account-limits.json).

import type { ApiCase } from './api-cases.js';

export const LIMITS_CONF = `
accounts {
  L {
    users: [ { user: l, password: l } ]
    jetstream: {
      memory: 64K, disk: 1M, streams: 2, consumers: 3,
      max_bytes: true, mem_max_stream_bytes: 2000, disk_max_stream_bytes: 4000,
      max_ack_pending: 5
    }
  }
}
`;

export const LIMITS_USER = { user: 'l', pass: 'l' };

const S = '$JS.API.STREAM.';
const C = '$JS.API.CONSUMER.';

function stream(name: string, extra: Record<string, unknown>): ApiCase {
  return { name, subject: `${S}CREATE.${extra.name as string}`, body: extra };
}

export const LIMITS_CASES: ApiCase[] = [
  { name: 'account info', subject: '$JS.API.INFO', body: null },
  stream('no max_bytes', { name: 'M', storage: 'memory' }),
  stream('memory max_bytes over the limit', { name: 'M', storage: 'memory', max_bytes: 2001 }),
  stream('file max_bytes over the limit', { name: 'F', storage: 'file', max_bytes: 4001 }),
  stream('memory stream at the limit', { name: 'M', storage: 'memory', max_bytes: 2000 }),
  stream('file stream within the limit', { name: 'F', storage: 'file', max_bytes: 3000 }),
  {
    name: 'explicit consumer: max_ack_pending from the account',
    subject: `${C}DURABLE.CREATE.M.c1`,
    body: { stream_name: 'M', config: { durable_name: 'c1', ack_policy: 'explicit' } },
  },
  {
    name: 'consumer: max_ack_pending over the limit',
    subject: `${C}DURABLE.CREATE.M.c2`,
    body: {
      stream_name: 'M',
      config: { durable_name: 'c2', ack_policy: 'explicit', max_ack_pending: 6 },
    },
  },
  stream('a third stream', { name: 'T', storage: 'memory', max_bytes: 100 }),
  { name: 'account info after', subject: '$JS.API.INFO', body: null },
];
