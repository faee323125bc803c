// Creating, updating and deleting a stream in an account (nats-server's addStream,
// update and delete): the checks against the account's other streams and limits, the
// store, the subscription, and the advisories.

import { JsErr, type ApiError } from './errors.js';
import type { JsAccount } from './account.js';
import {
  checkStreamConfig,
  refuseMirrorsAndSources,
  sameStreamConfig,
  storeConfigOf,
  streamMeta,
  type StreamConfig,
} from './stream-config.js';
import { subjectsIntersect } from '../subjects/relations.js';
import { Stream } from './stream.js';
import { nowNs } from './time.js';

let warnedFileFallback = false;

function overlapsOthers(jsa: JsAccount, cfg: StreamConfig, except: string): boolean {
  for (const other of jsa.streams.values()) {
    if (other.name === except) continue;
    for (const a of other.cfg.subjects)
      for (const b of cfg.subjects) if (subjectsIntersect(a, b)) return true;
  }
  return false;
}

/** The account's stream count and storage limits for one more stream (jsNonClusteredStreamLimitsCheck). */
export function streamLimitsCheck(jsa: JsAccount, cfg: StreamConfig): ApiError | null {
  if (jsa.limits.maxStreams >= 0 && jsa.streams.size >= jsa.limits.maxStreams)
    return JsErr.maximumStreams();
  const reserve = cfg.maxBytes > 0 ? cfg.maxBytes : 0;
  if (cfg.storage === 'memory') {
    if (jsa.limits.maxMemory >= 0 && reserve > jsa.limits.maxMemory)
      return JsErr.memoryResourcesExceeded();
    if (reserve > jsa.js.maxMemory) return JsErr.memoryResourcesExceeded();
  } else {
    if (jsa.limits.maxStore >= 0 && reserve > jsa.limits.maxStore)
      return JsErr.storageResourcesExceeded();
    if (reserve > jsa.js.maxStore) return JsErr.storageResourcesExceeded();
  }
  return null;
}

/** addStream: the existing stream when the config is the same, else a new one or an error. */
export function addStream(
  jsa: JsAccount,
  input: StreamConfig,
): { stream: Stream; created: boolean } | ApiError {
  const checked = checkStreamConfig(input, jsa.maxBytesRule(input.storage));
  if ('err_code' in checked) return checked;
  const cfg = checked;
  const unsupported = refuseMirrorsAndSources(cfg);
  if (unsupported !== null) return unsupported;
  if (cfg.replicas > 1) return JsErr.streamReplicasNotSupported();
  const existing = jsa.streams.get(cfg.name);
  if (existing !== undefined) {
    return sameStreamConfig(existing.cfg, cfg)
      ? { stream: existing, created: false }
      : JsErr.streamNameExist();
  }
  const limits = streamLimitsCheck(jsa, cfg);
  if (limits !== null) return limits;
  // A template_owner names a template that made this stream (checkTemplateOwnership).
  if (cfg.templateOwner !== '' && !ownedByTemplate(jsa, cfg))
    return JsErr.streamCreate('stream not owned by template');
  if (overlapsOthers(jsa, cfg, '')) return JsErr.streamSubjectOverlap();
  if (cfg.storage === 'file' && jsa.js.files === null && !warnedFileFallback) {
    warnedFileFallback = true;
    jsa.warn('no store_dir: file streams are kept in memory');
  }
  const created = nowNs();
  let stream: Stream;
  try {
    const store = jsa
      .provider(cfg.storage)
      .openStream(storeConfigOf(cfg), streamMeta(cfg, created));
    stream = new Stream(jsa, cfg, store, created);
  } catch (err) {
    return JsErr.streamCreate(err instanceof Error ? err.message : String(err));
  }
  jsa.streams.set(cfg.name, stream);
  stream.start();
  return { stream, created: true };
}

/**
 * The advisory of a new stream. The reference sends it before the create's answer, but a
 * stream stores messages from its own server on another goroutine: the state in that
 * answer never holds it (a stream on $JS.EVENT.>). Callers take the state first.
 */
export function streamCreatedAdvisory(jsa: JsAccount, cfg: StreamConfig): void {
  jsa.advisory(`$JS.EVENT.ADVISORY.STREAM.CREATED.${cfg.name}`, {
    type: 'io.nats.jetstream.advisory.v1.stream_action',
    stream: cfg.name,
    action: 'create',
    ...templateOf(cfg),
  });
}

function ownedByTemplate(jsa: JsAccount, cfg: StreamConfig): boolean {
  return jsa.templates.get(cfg.templateOwner)?.streams.includes(cfg.name) === true;
}

/** The reference's configUpdateCheck, then the update; the stream or an error. */
export function updateStream(jsa: JsAccount, stream: Stream, input: StreamConfig): ApiError | null {
  const checked = checkStreamConfig(input, jsa.maxBytesRule(input.storage));
  if ('err_code' in checked) return checked;
  const cfg = checked;
  const old = stream.cfg;
  const bad = (t: string): ApiError => JsErr.streamInvalidConfig(t);
  if (cfg.name !== old.name) return bad('stream configuration name must match original');
  if (cfg.maxConsumers !== old.maxConsumers)
    return bad('stream configuration update can not change MaxConsumers');
  if (cfg.storage !== old.storage)
    return bad('stream configuration update can not change storage type');
  if (cfg.retention !== old.retention)
    return bad('stream configuration update can not change retention policy');
  if (old.templateOwner !== '')
    return bad('stream configuration update not allowed on template owned stream');
  if (cfg.templateOwner !== '')
    return bad('stream configuration update can not be owned by a template');
  if (!cfg.sealed && old.sealed)
    return bad('stream configuration update can not unseal a sealed stream');
  if (!cfg.denyDelete && old.denyDelete)
    return bad('stream configuration update can not cancel deny message deletes');
  if (!cfg.denyPurge && old.denyPurge)
    return bad('stream configuration update can not cancel deny purge');
  // No stream has a mirror here (refuseMirrorsAndSources): any mirror is a change.
  if (cfg.hasMirror) return JsErr.streamMirrorNotUpdatable();
  if (JSON.stringify(cfg.republish) !== JSON.stringify(old.republish))
    return bad('stream configuration update can not change RePublish');
  if (cfg.sealed) {
    cfg.maxAge = 0;
    cfg.discard = 'new';
    cfg.denyDelete = true;
    cfg.denyPurge = true;
    cfg.allowRollup = false;
  }
  // A single reference server takes a new replica count (up to 5) on update and echoes
  // it, though it refuses more than one on create: so does wirebus (one copy kept).
  const unsupported = refuseMirrorsAndSources(cfg);
  if (unsupported !== null) return unsupported;
  if (overlapsOthers(jsa, cfg, cfg.name)) return JsErr.streamSubjectOverlap();
  stream.update(cfg);
  jsa.provider(cfg.storage).writeStreamMeta(cfg.name, streamMeta(cfg, stream.created));
  jsa.advisory(`$JS.EVENT.ADVISORY.STREAM.UPDATED.${cfg.name}`, {
    type: 'io.nats.jetstream.advisory.v1.stream_action',
    stream: cfg.name,
    action: 'modify',
  });
  return null;
}

export async function deleteStream(jsa: JsAccount, stream: Stream): Promise<void> {
  jsa.streams.delete(stream.name);
  const state = stream.store.state();
  await stream.stop();
  await stream.store.delete();
  jsa.storageDelta(stream.cfg.storage, -state.bytes);
  jsa.advisory(`$JS.EVENT.ADVISORY.STREAM.DELETED.${stream.name}`, {
    type: 'io.nats.jetstream.advisory.v1.stream_action',
    stream: stream.name,
    action: 'delete',
    ...templateOf(stream.cfg),
  });
}

/** A stream made by a template names it in its create and delete advisories. */
function templateOf(cfg: StreamConfig): { template?: string } {
  return cfg.templateOwner === '' ? {} : { template: cfg.templateOwner };
}
