// A consumer's configuration: decoded from the API's JSON as nats-server decodes its
// ConsumerConfig, completed with its defaults (setConsumerConfigDefaults), checked by
// its rules (checkConsumerCfg) and written back in its field order.

import { hasWildcard, isValidSubject } from '../subjects/validate.js';
import { JsErr, type ApiError } from './errors.js';
import type { JsonFields } from './json.js';
import { isSubset, subjectsIntersect } from '../subjects/relations.js';
import { JS_MAX_DESCRIPTION_LEN, type StreamConfig } from './stream-config.js';
import { rfc3339Nano } from './time.js';

export type DeliverPolicy =
  'all' | 'last' | 'new' | 'by_start_sequence' | 'by_start_time' | 'last_per_subject';
export type AckPolicy = 'none' | 'all' | 'explicit';

export interface ConsumerConfig {
  durable: string;
  name: string;
  description: string;
  deliverPolicy: DeliverPolicy;
  optStartSeq: number;
  /** Nanoseconds since the epoch, or null. */
  optStartTime: number | null;
  ackPolicy: AckPolicy;
  ackWait: number;
  maxDeliver: number;
  backoff: number[];
  filterSubject: string;
  replayPolicy: 'instant' | 'original';
  rateLimit: number;
  sampleFreq: string;
  maxWaiting: number;
  maxAckPending: number;
  heartbeat: number;
  flowControl: boolean;
  headersOnly: boolean;
  maxBatch: number;
  maxExpires: number;
  maxBytes: number;
  deliverSubject: string;
  deliverGroup: string;
  inactiveThreshold: number;
  replicas: number;
  memStorage: boolean;
  direct: boolean;
}

const DELIVER: readonly DeliverPolicy[] = [
  'all',
  'last',
  'new',
  'by_start_sequence',
  'by_start_time',
  'last_per_subject',
];
const MS = 1e6;
export const ACK_WAIT_DEFAULT = 30_000 * MS;
export const MAX_ACK_PENDING_DEFAULT = 1000;
export const WAIT_QUEUE_DEFAULT_MAX = 512;
export const DELETE_WAIT_DEFAULT = 5_000 * MS;

function policy<T extends string>(f: JsonFields, key: string, values: readonly T[], def: T): T {
  const v = f.raw(key);
  // null is invalid JSON as well: Go hands it to the enum's UnmarshalJSON, which refuses it.
  if (v === undefined) return def;
  if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
  f.ok = false;
  return def;
}

export function decodeConsumerConfig(f: JsonFields): ConsumerConfig | null {
  const cfg: ConsumerConfig = {
    durable: f.str('durable_name'),
    name: f.str('name'),
    description: f.str('description'),
    // The reference's DeliverPolicy also reads "undefined" as all.
    deliverPolicy:
      f.raw('deliver_policy') === 'undefined' ? 'all' : policy(f, 'deliver_policy', DELIVER, 'all'),
    optStartSeq: f.uint('opt_start_seq'),
    optStartTime: f.time('opt_start_time'),
    ackPolicy: policy(f, 'ack_policy', ['none', 'all', 'explicit'] as const, 'none'),
    ackWait: f.int('ack_wait'),
    maxDeliver: f.int('max_deliver'),
    backoff: f.intList('backoff'),
    filterSubject: f.str('filter_subject'),
    replayPolicy: policy(f, 'replay_policy', ['instant', 'original'] as const, 'instant'),
    rateLimit: f.uint('rate_limit_bps'),
    sampleFreq: f.str('sample_freq'),
    maxWaiting: f.int('max_waiting'),
    maxAckPending: f.int('max_ack_pending'),
    heartbeat: f.int('idle_heartbeat'),
    flowControl: f.bool('flow_control'),
    headersOnly: f.bool('headers_only'),
    maxBatch: f.int('max_batch'),
    maxExpires: f.int('max_expires'),
    maxBytes: f.int('max_bytes'),
    deliverSubject: f.str('deliver_subject'),
    deliverGroup: f.str('deliver_group'),
    inactiveThreshold: f.int('inactive_threshold'),
    replicas: f.int('num_replicas'),
    memStorage: f.bool('mem_storage'),
    direct: f.bool('direct'),
  };
  return f.ok ? cfg : null;
}

/** The reference's setConsumerConfigDefaults; `accountMaxAckPending` lowers max_ack_pending's default. */
export function setConsumerDefaults(cfg: ConsumerConfig, accountMaxAckPending = -1): void {
  const acks = cfg.ackPolicy === 'explicit' || cfg.ackPolicy === 'all';
  if (cfg.deliverSubject === '' && cfg.maxWaiting === 0) cfg.maxWaiting = WAIT_QUEUE_DEFAULT_MAX;
  if (cfg.ackWait === 0 && acks) cfg.ackWait = ACK_WAIT_DEFAULT;
  if (cfg.maxDeliver === 0) cfg.maxDeliver = -1;
  if (cfg.backoff.length > 0) cfg.ackWait = cfg.backoff[0]!;
  if (acks && cfg.maxAckPending === 0) {
    cfg.maxAckPending =
      accountMaxAckPending > 0 && accountMaxAckPending < MAX_ACK_PENDING_DEFAULT
        ? accountMaxAckPending
        : MAX_ACK_PENDING_DEFAULT;
  }
}

function validFilter(filter: string, subjects: readonly string[]): boolean {
  if (!isValidSubject(filter, true)) return false;
  for (const s of subjects) {
    if (isSubset(filter, s)) return true;
    if (subjectsIntersect(filter, s) && hasWildcard(filter)) return true;
  }
  return false;
}

/** checkConsumerCfg: null when the config is acceptable for the stream. */
export function checkConsumerConfig(cfg: ConsumerConfig, stream: StreamConfig): ApiError | null {
  if (cfg.replicas > 0 && cfg.replicas > stream.replicas)
    return JsErr.consumerReplicasExceedsStream();
  if (cfg.replicas < 0) return JsErr.replicasNegative();
  if (cfg.backoff.length > 0 && cfg.maxDeliver <= cfg.backoff.length)
    return JsErr.consumerMaxDeliverBackoff();
  if (cfg.description.length > JS_MAX_DESCRIPTION_LEN)
    return JsErr.consumerDescriptionTooLong(JS_MAX_DESCRIPTION_LEN);
  if (cfg.deliverSubject !== '') {
    if (hasWildcard(cfg.deliverSubject)) return JsErr.consumerDeliverToWildcards();
    if (!isValidSubject(cfg.deliverSubject, false)) return JsErr.consumerInvalidDeliverSubject();
    if (stream.subjects.some((s) => subjectsIntersect(s, cfg.deliverSubject)))
      return JsErr.consumerDeliverCycle();
    if (cfg.maxWaiting !== 0) return JsErr.consumerPushMaxWaiting();
    if (cfg.maxAckPending > 0 && cfg.ackPolicy === 'none')
      return JsErr.consumerMaxPendingAckPolicyRequired();
    if (cfg.heartbeat > 0 && cfg.heartbeat < 100 * MS) return JsErr.consumerSmallHeartbeat();
  } else {
    if (cfg.ackPolicy === 'none' && stream.retention === 'workqueue')
      return JsErr.consumerPullRequiresAck();
    if (cfg.rateLimit > 0) return JsErr.consumerPullWithRateLimit();
    if (cfg.maxWaiting < 0) return JsErr.consumerMaxWaitingNegative();
    if (cfg.heartbeat > 0) return JsErr.consumerHbRequiresPush();
    if (cfg.flowControl) return JsErr.consumerFcRequiresPush();
    if (cfg.maxBatch < 0) return JsErr.consumerMaxRequestBatchNegative();
    if (cfg.maxExpires !== 0 && cfg.maxExpires < MS)
      return JsErr.consumerMaxRequestExpiresTooSmall();
  }
  if (cfg.direct) {
    if (cfg.deliverSubject === '') return JsErr.consumerDirectRequiresPush();
    if (cfg.durable !== '') return JsErr.consumerDirectRequiresEphemeral();
  }
  if (cfg.filterSubject !== '' && !validFilter(cfg.filterSubject, stream.subjects))
    return JsErr.consumerFilterNotSubset();
  const badStart = (dp: string, start: string): ApiError =>
    JsErr.consumerInvalidPolicy(
      `consumer delivery policy is deliver ${dp}, but optional start ${start} is also set`,
    );
  const notSet = (dp: string, what: string): ApiError =>
    JsErr.consumerInvalidPolicy(
      `consumer delivery policy is deliver ${dp}, but optional ${what} is not set`,
    );
  const seq = cfg.optStartSeq > 0;
  const time = cfg.optStartTime !== null;
  switch (cfg.deliverPolicy) {
    case 'all':
    case 'last':
    case 'new':
    case 'last_per_subject': {
      const dp = cfg.deliverPolicy === 'last_per_subject' ? 'last per subject' : cfg.deliverPolicy;
      if (seq) return badStart(dp, 'sequence');
      if (time) return badStart(dp, 'time');
      if (cfg.deliverPolicy === 'last_per_subject' && cfg.filterSubject === '')
        return notSet('last per subject', 'filter subject');
      break;
    }
    case 'by_start_sequence':
      if (!seq) return notSet('by start sequence', 'start sequence');
      if (time) return badStart('by start sequence', 'time');
      break;
    case 'by_start_time':
      if (!time) return notSet('by start time', 'start time');
      if (seq) return badStart('by start time', 'start sequence');
      break;
  }
  if (cfg.sampleFreq !== '') {
    const s = cfg.sampleFreq.endsWith('%') ? cfg.sampleFreq.slice(0, -1) : cfg.sampleFreq;
    if (!/^[+-]?\d+$/.test(s))
      return JsErr.consumerInvalidSampling(
        `strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`,
      );
    if (Number(s) < 0) return JsErr.consumerInvalidSampling('<nil>');
  }
  if (cfg.flowControl && cfg.heartbeat === 0) return JsErr.consumerWithFlowControlNeedsHeartbeats();
  if (cfg.durable !== '' && cfg.name !== '' && cfg.name !== cfg.durable)
    return JsErr.consumerCreateDurableAndNameMismatch();
  return null;
}

/** What the store keeps for a consumer, as the reference's FileConsumerInfo. */
export function consumerMeta(name: string, cfg: ConsumerConfig, createdNs: number): Buffer {
  return Buffer.from(
    JSON.stringify({ created: rfc3339Nano(createdNs), name, config: consumerConfigJson(cfg) }),
  );
}

/** The config as the reference marshals it. */
export function consumerConfigJson(cfg: ConsumerConfig): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (cfg.durable !== '') o.durable_name = cfg.durable;
  if (cfg.name !== '') o.name = cfg.name;
  if (cfg.description !== '') o.description = cfg.description;
  o.deliver_policy = cfg.deliverPolicy;
  if (cfg.optStartSeq !== 0) o.opt_start_seq = cfg.optStartSeq;
  if (cfg.optStartTime !== null) o.opt_start_time = rfc3339Nano(cfg.optStartTime);
  o.ack_policy = cfg.ackPolicy;
  if (cfg.ackWait !== 0) o.ack_wait = cfg.ackWait;
  if (cfg.maxDeliver !== 0) o.max_deliver = cfg.maxDeliver;
  if (cfg.backoff.length > 0) o.backoff = cfg.backoff;
  if (cfg.filterSubject !== '') o.filter_subject = cfg.filterSubject;
  o.replay_policy = cfg.replayPolicy;
  if (cfg.rateLimit !== 0) o.rate_limit_bps = cfg.rateLimit;
  if (cfg.sampleFreq !== '') o.sample_freq = cfg.sampleFreq;
  if (cfg.maxWaiting !== 0) o.max_waiting = cfg.maxWaiting;
  if (cfg.maxAckPending !== 0) o.max_ack_pending = cfg.maxAckPending;
  if (cfg.heartbeat !== 0) o.idle_heartbeat = cfg.heartbeat;
  if (cfg.flowControl) o.flow_control = true;
  if (cfg.headersOnly) o.headers_only = true;
  if (cfg.maxBatch !== 0) o.max_batch = cfg.maxBatch;
  if (cfg.maxExpires !== 0) o.max_expires = cfg.maxExpires;
  if (cfg.maxBytes !== 0) o.max_bytes = cfg.maxBytes;
  if (cfg.deliverSubject !== '') o.deliver_subject = cfg.deliverSubject;
  if (cfg.deliverGroup !== '') o.deliver_group = cfg.deliverGroup;
  if (cfg.inactiveThreshold !== 0) o.inactive_threshold = cfg.inactiveThreshold;
  o.num_replicas = cfg.replicas;
  if (cfg.memStorage) o.mem_storage = true;
  if (cfg.direct) o.direct = true;
  return o;
}
