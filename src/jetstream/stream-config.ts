// A stream's configuration: read from the API's JSON as nats-server decodes its
// StreamConfig, completed with the reference's defaults and checked by its rules
// (checkStreamCfg), and written back in the reference's field order.

import { isValidSubscribeSubject } from '../subjects/validate.js';
import { SubjectTransform } from '../subjects/transform.js';
import { JsErr, type ApiError } from './errors.js';
import type { JsonFields } from './json.js';
import { subjectsIntersect } from '../subjects/relations.js';
import type { StorageType, StreamStoreConfig } from './storage/types.js';
import { rfc3339Nano } from './time.js';

export type Retention = 'limits' | 'interest' | 'workqueue';

export interface RePublish {
  src: string;
  dest: string;
  headersOnly: boolean;
}

export interface StreamConfig {
  name: string;
  description: string;
  subjects: string[];
  retention: Retention;
  maxConsumers: number;
  maxMsgs: number;
  maxBytes: number;
  maxAge: number;
  maxMsgsPerSubject: number;
  maxMsgSize: number;
  discard: 'old' | 'new';
  storage: StorageType;
  replicas: number;
  noAck: boolean;
  templateOwner: string;
  duplicateWindow: number;
  /** Kept as given: a single server has no placement, but echoes it. */
  placement: unknown;
  hasMirror: boolean;
  hasSources: boolean;
  republish: RePublish | null;
  allowDirect: boolean;
  mirrorDirect: boolean;
  discardNewPerSubject: boolean;
  sealed: boolean;
  denyDelete: boolean;
  denyPurge: boolean;
  allowRollup: boolean;
}

export const JS_MAX_NAME_LEN = 255;
export const JS_MAX_DESCRIPTION_LEN = 4 * 1024;
const DEFAULT_DUPLICATES_WINDOW = 2 * 60 * 1e9;
const MS = 1e6;

/** Names of streams and consumers: not empty, no `.`, `*`, `>` or whitespace (isValidName). */
export function isValidName(name: string): boolean {
  if (name === '') return false;
  return !/[.*>\s]/.test(name);
}

/**
 * An enum as the reference's UnmarshalJSON reads it: its exact lower-case words only
 * (`"Limits"` is invalid JSON there), and null is invalid too (Go hands null to it).
 */
function enumOf<T extends string>(f: JsonFields, key: string, values: readonly T[], def: T): T {
  const v = f.raw(key);
  if (v === undefined) return def;
  if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
  f.ok = false;
  return def;
}

/** Decodes a StreamConfig; null when a field has the wrong type (the reference's invalid JSON). */
export function decodeStreamConfig(f: JsonFields): StreamConfig | null {
  const republish = f.obj('republish');
  const cfg: StreamConfig = {
    name: f.str('name'),
    description: f.str('description'),
    subjects: f.strList('subjects'),
    retention: enumOf(f, 'retention', ['limits', 'interest', 'workqueue'], 'limits'),
    maxConsumers: f.int('max_consumers'),
    maxMsgs: f.int('max_msgs'),
    maxBytes: f.int('max_bytes'),
    maxAge: f.int('max_age'),
    maxMsgsPerSubject: f.int('max_msgs_per_subject'),
    maxMsgSize: f.int('max_msg_size', 32),
    discard: enumOf(f, 'discard', ['old', 'new'], 'old'),
    storage: enumOf(f, 'storage', ['file', 'memory'], 'file'),
    replicas: f.int('num_replicas'),
    noAck: f.bool('no_ack'),
    templateOwner: f.str('template_owner'),
    duplicateWindow: f.int('duplicate_window'),
    placement: f.raw('placement') ?? null,
    hasMirror: f.has('mirror'),
    hasSources: Array.isArray(f.raw('sources')) && (f.raw('sources') as unknown[]).length > 0,
    republish:
      republish === null
        ? null
        : {
            src: republish.str('src'),
            dest: republish.str('dest'),
            headersOnly: republish.bool('headers_only'),
          },
    allowDirect: f.bool('allow_direct'),
    mirrorDirect: f.bool('mirror_direct'),
    discardNewPerSubject: f.bool('discard_new_per_subject'),
    sealed: f.bool('sealed'),
    denyDelete: f.bool('deny_delete'),
    denyPurge: f.bool('deny_purge'),
    allowRollup: f.bool('allow_rollup_hdrs'),
  };
  if (republish !== null && !republish.ok) return null;
  return f.ok ? cfg : null;
}

/** An account's rule on a stream's max_bytes (the reference's maxBytesLimits). */
export interface MaxBytesRule {
  required: boolean;
  /** The most max_bytes may be for the stream's storage; -1 or 0 for no limit. */
  limit: number;
}

/**
 * The reference's defaults and checks (checkStreamCfg); the completed config or an error.
 * `bytes`: the account's rule on max_bytes, checked where the reference checks it.
 */
export function checkStreamConfig(
  input: StreamConfig,
  bytes: MaxBytesRule | null = null,
): StreamConfig | ApiError {
  const bad = (text: string): ApiError => JsErr.streamInvalidConfig(text);
  if (!isValidName(input.name))
    return bad("stream name is required and can not contain '.', '*', '>'");
  if (input.name.length > JS_MAX_NAME_LEN)
    return bad(`stream name is too long, maximum allowed is ${JS_MAX_NAME_LEN}`);
  if (input.description.length > JS_MAX_DESCRIPTION_LEN)
    return bad(`stream description is too long, maximum allowed is ${JS_MAX_DESCRIPTION_LEN}`);
  const cfg: StreamConfig = {
    ...input,
    subjects: [...input.subjects],
    republish: input.republish && { ...input.republish },
  };
  if (cfg.replicas === 0) cfg.replicas = 1;
  if (cfg.replicas > 5) return bad('maximum replicas is 5');
  if (cfg.replicas < 0) return JsErr.replicasNegative();
  if (cfg.maxMsgs === 0) cfg.maxMsgs = -1;
  if (cfg.maxMsgsPerSubject === 0) cfg.maxMsgsPerSubject = -1;
  if (cfg.maxBytes === 0) cfg.maxBytes = -1;
  if (cfg.maxMsgSize === 0) cfg.maxMsgSize = -1;
  if (cfg.maxConsumers === 0) cfg.maxConsumers = -1;
  if (cfg.duplicateWindow === 0 && !cfg.hasMirror) {
    cfg.duplicateWindow =
      cfg.maxAge !== 0 && cfg.maxAge < DEFAULT_DUPLICATES_WINDOW
        ? cfg.maxAge
        : DEFAULT_DUPLICATES_WINDOW;
  }
  if (cfg.maxAge > 0 && cfg.maxAge < 100 * MS) return bad('max age needs to be >= 100ms');
  if (cfg.duplicateWindow < 0) return bad('duplicates window can not be negative');
  if (cfg.maxAge !== 0 && cfg.duplicateWindow > cfg.maxAge)
    return bad('duplicates window can not be larger then max age');
  if (cfg.duplicateWindow > 0 && cfg.duplicateWindow < 100 * MS)
    return bad('duplicates window needs to be >= 100ms');
  if (cfg.denyPurge && cfg.allowRollup) return bad('roll-ups require the purge permission');
  if (cfg.discardNewPerSubject) {
    if (cfg.discard !== 'new')
      return bad('discard new per subject requires discard new policy to be set');
    if (cfg.maxMsgsPerSubject <= 0)
      return bad('discard new per subject requires max msgs per subject > 0');
  }
  if (cfg.hasMirror && cfg.subjects.length > 0)
    return { code: 400, err_code: 10034, description: 'stream mirrors can not contain subjects' };
  if (cfg.hasMirror && cfg.hasSources)
    return {
      code: 400,
      err_code: 10031,
      description: 'stream mirrors can not also contain other sources',
    };
  if (cfg.subjects.length === 0) {
    if (!cfg.hasMirror && !cfg.hasSources) cfg.subjects.push(cfg.name);
  } else {
    const seen = new Set<string>();
    for (const subj of cfg.subjects) {
      if (seen.has(subj)) return bad('duplicate subjects detected');
      if (subjectsIntersect(subj, '$JS.API.>') && isSubsetOfApi(subj))
        return bad('subjects overlap with jetstream api');
      if (!isValidStreamSubject(subj)) return bad('invalid subject');
      seen.add(subj);
    }
  }
  if (bytes !== null) {
    if (bytes.required && cfg.maxBytes <= 0) return JsErr.streamMaxBytesRequired();
    if (bytes.limit > 0 && cfg.maxBytes > bytes.limit) return JsErr.streamMaxStreamBytesExceeded();
  }
  if (cfg.subjects.length > 1) {
    for (const subj of cfg.subjects) {
      for (const other of cfg.subjects) {
        if (other !== subj && subjectsIntersect(other, subj))
          return bad(`subject ${JSON.stringify(subj)} overlaps with ${JSON.stringify(other)}`);
      }
    }
  }
  if (cfg.republish !== null) {
    const rp = cfg.republish;
    if (rp.src === '') rp.src = '>';
    if (!cfg.subjects.some((s) => subjectsIntersect(rp.src, s)))
      return bad('stream configuration for republish source is not valid subset of subjects');
    if (cfg.subjects.some((s) => subjectsIntersect(rp.dest, s)))
      return bad('stream configuration for republish destination forms a cycle');
    if (SubjectTransform.create(rp.src, rp.dest) === null)
      return bad('stream configuration for republish not valid');
  }
  return cfg;
}

/**
 * Until mirrors and sources arrive, a config with either is refused rather than run
 * wrongly, with the reference's own answer to a config it cannot use (checkStreamCfg of
 * a nil config).
 */
export function refuseMirrorsAndSources(cfg: StreamConfig): ApiError | null {
  return cfg.hasMirror || cfg.hasSources
    ? JsErr.streamInvalidConfig('stream configuration invalid')
    : null;
}

/**
 * The reference's IsValidSubject: no empty token, nothing after `>`, no whitespace.
 * A token like `b*` is a literal, as in subscriptions.
 */
function isValidStreamSubject(subj: string): boolean {
  return isValidSubscribeSubject(subj) && !/[ \t\n\r\f]/.test(subj);
}

function isSubsetOfApi(subj: string): boolean {
  // subjectIsSubsetMatch(subj, "$JS.API.>"): every subject subj matches is an API subject.
  const t = subj.split('.');
  return t.length >= 3 && t[0] === '$JS' && t[1] === 'API';
}

/** The store's view of the limits. */
export function storeConfigOf(cfg: StreamConfig): StreamStoreConfig {
  return {
    name: cfg.name,
    storage: cfg.storage,
    maxMsgs: cfg.maxMsgs,
    maxBytes: cfg.maxBytes,
    maxAgeNs: cfg.maxAge,
    maxMsgsPerSubject: cfg.maxMsgsPerSubject,
    discard: cfg.discard,
    discardNewPerSubject: cfg.discardNewPerSubject,
  };
}

/** The config as the reference marshals it (field order and omitempty as its struct). */
export function streamConfigJson(cfg: StreamConfig): Record<string, unknown> {
  const o: Record<string, unknown> = { name: cfg.name };
  if (cfg.description !== '') o.description = cfg.description;
  if (cfg.subjects.length > 0) o.subjects = cfg.subjects;
  o.retention = cfg.retention;
  o.max_consumers = cfg.maxConsumers;
  o.max_msgs = cfg.maxMsgs;
  o.max_bytes = cfg.maxBytes;
  o.max_age = cfg.maxAge;
  o.max_msgs_per_subject = cfg.maxMsgsPerSubject;
  if (cfg.maxMsgSize !== 0) o.max_msg_size = cfg.maxMsgSize;
  o.discard = cfg.discard;
  o.storage = cfg.storage;
  o.num_replicas = cfg.replicas;
  if (cfg.noAck) o.no_ack = true;
  if (cfg.templateOwner !== '') o.template_owner = cfg.templateOwner;
  if (cfg.duplicateWindow !== 0) o.duplicate_window = cfg.duplicateWindow;
  if (cfg.placement !== null) o.placement = cfg.placement;
  if (cfg.republish !== null) {
    const rp: Record<string, unknown> = {};
    if (cfg.republish.src !== '') rp.src = cfg.republish.src;
    rp.dest = cfg.republish.dest;
    if (cfg.republish.headersOnly) rp.headers_only = true;
    o.republish = rp;
  }
  o.allow_direct = cfg.allowDirect;
  o.mirror_direct = cfg.mirrorDirect;
  if (cfg.discardNewPerSubject) o.discard_new_per_subject = true;
  o.sealed = cfg.sealed;
  o.deny_delete = cfg.denyDelete;
  o.deny_purge = cfg.denyPurge;
  o.allow_rollup_hdrs = cfg.allowRollup;
  return o;
}

/**
 * What the store keeps beside a stream's data, as the reference's meta.inf (its
 * FileStreamInfo): the config's JSON with the creation time.
 */
export function streamMeta(cfg: StreamConfig, createdNs: number): Buffer {
  return Buffer.from(JSON.stringify({ created: rfc3339Nano(createdNs), ...streamConfigJson(cfg) }));
}

/** Whether two completed configs are the same (the reference's reflect.DeepEqual). */
export function sameStreamConfig(a: StreamConfig, b: StreamConfig): boolean {
  return JSON.stringify(streamConfigJson(a)) === JSON.stringify(streamConfigJson(b));
}
