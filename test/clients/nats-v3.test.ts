// `@nats-io/transport-node` (nats.js v3) against wirebus: every scenario of
// scenarios.ts.

import { connect, errors, headers, type MsgHdrs } from '@nats-io/transport-node';
import type { ClientAdapter } from './adapter.js';
import { clientTests } from './scenarios.js';

const natsV3: ClientAdapter<MsgHdrs> = {
  name: 'nats v3',
  connect: (opts) => connect(opts),
  headers: () => headers(),
  isNoResponders: (err) => err instanceof errors.RequestError && err.isNoResponders(),
  isMaxPayload: (err) =>
    err instanceof errors.InvalidArgumentError && err.message.includes('max_payload'),
  // v3 reports an asynchronous -ERR as { type: 'error', error } with the server's text.
  serverError: (status) =>
    status.type === 'error' && 'error' in status && status.error instanceof Error
      ? status.error.message
      : undefined,
  reported: (text) => text,
};

clientTests(natsV3);
