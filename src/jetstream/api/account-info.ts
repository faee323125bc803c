// $JS.API.INFO: the account's usage, limits and API counters.

import type { ApiRequest } from './request.js';
import { ok } from './request.js';

export function accountInfo(req: ApiRequest): void {
  const jsa = req.jsa;
  const l = jsa.limits;
  const fields: Record<string, unknown> = {
    memory: jsa.memoryUsed,
    storage: jsa.storeUsed,
    streams: jsa.streams.size,
    consumers: jsa.consumerCount(),
    limits: {
      max_memory: l.maxMemory,
      max_storage: l.maxStore,
      max_streams: l.maxStreams,
      max_consumers: l.maxConsumers,
      max_ack_pending: l.maxAckPending,
      memory_max_stream_bytes: l.memoryMaxStreamBytes,
      storage_max_stream_bytes: l.storeMaxStreamBytes,
      max_bytes_required: l.maxBytesRequired,
    },
  };
  if (jsa.js.options.domain !== '') fields.domain = jsa.js.options.domain;
  // The reference counts the request being answered only after answering it.
  fields.api = { total: jsa.apiTotal, errors: jsa.apiErrors };
  ok(req, 'account_info_response', fields);
}
