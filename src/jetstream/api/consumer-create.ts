// $JS.API.CONSUMER.CREATE.<stream> (ephemeral), CONSUMER.CREATE.<stream>.<name>[.<filter>]
// and CONSUMER.DURABLE.CREATE.<stream>.<durable>, checked in the reference's order.

import { decodeConsumerConfig } from '../consumer-config.js';
import { addConsumer } from '../consumer-manage.js';
import { JsErr } from '../errors.js';
import { JsonFields } from '../json.js';
import { fail, ok, type ApiRequest } from './request.js';

const TYPE = 'consumer_create_response';

export function consumerCreate(req: ApiRequest): void {
  const f = JsonFields.parse(req.body);
  const stream = f?.str('stream_name') ?? '';
  const cf = f?.obj('config') ?? null;
  const cfg = cf === null ? null : decodeConsumerConfig(cf);
  if (f === null || !f.ok || (cf !== null && cfg === null))
    return fail(req, TYPE, JsErr.invalidJson());
  const t = req.tokens;
  const n = t.length;
  let kind: 'ephemeral' | 'durable' | 'named';
  let streamName: string;
  let consumerName = '';
  let filtered = '';
  if (n === 5) {
    kind = 'ephemeral';
    streamName = t[4]!;
  } else if (t[3] === 'DURABLE') {
    kind = 'durable';
    if (n !== 7) return fail(req, TYPE, JsErr.consumerDurableNameNotInSubject());
    streamName = t[5]!;
    consumerName = t[6]!;
  } else {
    kind = 'named';
    streamName = t[4]!;
    consumerName = t[5]!;
  }
  // As the reference (2.9.10): only a filter of two tokens or more is seen in the subject.
  if (n > 7) filtered = t.slice(6).join('.');
  if (streamName !== stream) return fail(req, TYPE, JsErr.streamMismatch());
  if (/[\\/]/.test(consumerName)) return fail(req, TYPE, JsErr.consumerPathSeparators());
  if (cfg === null) return fail(req, TYPE, JsErr.consumerConfigRequired());
  if (kind === 'durable') {
    if (cfg.durable === '') return fail(req, TYPE, JsErr.consumerDurableNameNotSet());
    if (consumerName !== cfg.durable)
      return fail(req, TYPE, JsErr.consumerDurableNameNotMatchSubject());
  }
  if (kind === 'named') {
    if (cfg.durable !== '' && consumerName !== cfg.durable)
      return fail(req, TYPE, JsErr.consumerDurableNameNotMatchSubject());
    cfg.name = consumerName;
  }
  if (kind === 'ephemeral' && cfg.durable !== '')
    return fail(req, TYPE, JsErr.consumerEphemeralWithDurableName());
  if (filtered !== '' && cfg.filterSubject !== filtered)
    return fail(req, TYPE, JsErr.consumerCreateFilterSubjectMismatch());
  if (cfg.replicas > 1) return fail(req, TYPE, JsErr.streamReplicasNotSupported());
  const s = req.jsa.streams.get(stream);
  if (s === undefined) return fail(req, TYPE, JsErr.streamNotFound());
  const r = addConsumer(req.jsa, s, cfg);
  if ('err_code' in r) return fail(req, TYPE, r);
  ok(req, TYPE, r.infoJson());
}
