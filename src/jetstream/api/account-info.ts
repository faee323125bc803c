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
      max_ack_pending: -1,
      memory_max_stream_bytes: -1,
      storage_max_stream_bytes: -1,
      max_bytes_required: false,
    },
  };
  if (jsa.js.options.domain !== '') fields.domain = jsa.js.options.domain;
  // The reference counts the request being answered only after answering it.
  fields.api = { total: jsa.apiTotal, errors: jsa.apiErrors };
  ok(req, 'account_info_response', fields);
}
