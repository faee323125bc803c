// The `nats` package (nats.js v2) against wirebus: every scenario of scenarios.ts.

import { connect, ErrorCode, Events, headers, NatsError, type MsgHdrs } from 'nats';
import type { ClientAdapter } from './adapter.js';
import { clientTests } from './scenarios.js';

// v2's error codes and event types are enums; the values compared are strings.
const NO_RESPONDERS: string = ErrorCode.NoResponders;
const MAX_PAYLOAD: string = ErrorCode.MaxPayloadExceeded;
const PROTOCOL_ERROR: string = ErrorCode.ProtocolError;
const ERROR_EVENT: string = Events.Error;

const natsV2: ClientAdapter<MsgHdrs> = {
  name: 'nats v2',
  connect: (opts) => connect(opts),
  headers: () => headers(),
  isNoResponders: (err) => err instanceof NatsError && err.code === NO_RESPONDERS,
  isMaxPayload: (err) => err instanceof NatsError && err.code === MAX_PAYLOAD,
  // v2 reports an asynchronous -ERR as { type: 'error', data: <its error code> }:
  // every text but the auth and permission ones becomes the one protocol error code.
  serverError: (status) =>
    status.type === ERROR_EVENT && 'data' in status && typeof status.data === 'string'
      ? status.data
      : undefined,
  reported: () => PROTOCOL_ERROR,
};

clientTests(natsV2);
