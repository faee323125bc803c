// Adding a consumer to a stream (nats-server's addConsumer): defaults, checks, the name,
// work-queue rules, limits, and updating a consumer that already exists.

import { nuid } from '../protocol/nuid.js';
import type { JsAccount } from './account.js';
import {
  checkConsumerConfig,
  consumerMeta,
  DELETE_WAIT_DEFAULT,
  setConsumerDefaults,
  type ConsumerConfig,
} from './consumer-config.js';
import { Consumer } from './consumer.js';
import { JsErr, type ApiError } from './errors.js';
import { subjectsIntersect } from '../subjects/relations.js';
import type { ConsumerState } from './storage/types.js';
import { isValidName, JS_MAX_NAME_LEN } from './stream-config.js';
import type { Stream } from './stream.js';
import { nowNs } from './time.js';

/** Fields a consumer's update may not change (the reference's checkNewConfig). */
function updateProblem(old: ConsumerConfig, cfg: ConsumerConfig): string {
  if (old.deliverPolicy !== cfg.deliverPolicy) return 'deliver policy can not be updated';
  if (old.optStartSeq !== cfg.optStartSeq) return 'start sequence can not be updated';
  if (old.optStartTime !== cfg.optStartTime) return 'start time can not be updated';
  if (old.ackPolicy !== cfg.ackPolicy) return 'ack policy can not be updated';
  if (old.replayPolicy !== cfg.replayPolicy) return 'replay policy can not be updated';
  if (old.heartbeat !== cfg.heartbeat) return 'heart beats can not be updated';
  if (old.flowControl !== cfg.flowControl) return 'flow control can not be updated';
  if (old.maxWaiting !== cfg.maxWaiting) return 'max waiting can not be updated';
  if (old.filterSubject !== cfg.filterSubject) return 'filter subject can not be updated';
  if ((old.deliverSubject === '') !== (cfg.deliverSubject === ''))
    return old.deliverSubject === ''
      ? 'can not update pull consumer to push based'
      : 'can not update push consumer to pull based';
  if (old.deliverSubject !== '' && old.deliverSubject !== cfg.deliverSubject)
    return 'consumer already exists and is still active';
  return '';
}

/**
 * A consumer recovered from the store at start-up: its name, config and creation time
 * from its meta, its position from its ConsumerStore.
 */
export interface RecoveredConsumer {
  name: string;
  createdNs: number;
  /** A restored snapshot's position: written to the new store, config saved beside it. */
  state?: ConsumerState;
}

export function addConsumer(
  jsa: JsAccount,
  stream: Stream,
  cfg: ConsumerConfig,
  recovered: RecoveredConsumer | null = null,
): Consumer | ApiError {
  setConsumerDefaults(cfg, jsa.limits.maxAckPending);
  const problem = checkConsumerConfig(cfg, stream.cfg);
  if (problem !== null) return problem;
  const maxAckPending = jsa.limits.maxAckPending;
  if (maxAckPending > 0 && cfg.maxAckPending > maxAckPending)
    return JsErr.consumerMaxPendingAckExcess(maxAckPending);
  if (cfg.durable !== '' && !isValidName(cfg.durable)) return JsErr.consumerBadDurableName();
  const wanted = cfg.durable !== '' ? cfg.durable : cfg.name;
  if (wanted !== '') {
    const existing = stream.consumers.get(wanted);
    if (existing instanceof Consumer) {
      const err = updateProblem(existing.cfg, cfg);
      if (err !== '') return JsErr.consumerCreate(err);
      existing.cfg = { ...cfg };
      jsa
        .provider(stream.cfg.storage)
        .writeConsumerMeta(
          stream.name,
          existing.name,
          consumerMeta(existing.name, existing.cfg, existing.created),
        );
      return existing;
    }
  }
  let maxc = stream.cfg.maxConsumers;
  if (maxc <= 0 || (jsa.limits.maxConsumers > 0 && jsa.limits.maxConsumers < maxc))
    maxc = jsa.limits.maxConsumers;
  if (maxc > 0 && stream.consumers.size >= maxc) return JsErr.maximumConsumers();
  if (stream.cfg.retention === 'workqueue' && !cfg.direct) {
    if (cfg.ackPolicy !== 'explicit') return JsErr.consumerWqRequiresExplicitAck();
    if (stream.consumers.size > 0) {
      if (cfg.filterSubject === '') return JsErr.consumerWqMultipleUnfiltered();
      for (const c of stream.consumers.values()) {
        if (c.filter === '' || subjectsIntersect(c.filter, cfg.filterSubject))
          return JsErr.consumerWqNotUnique();
      }
    }
    if (cfg.deliverPolicy !== 'all') return JsErr.consumerWqNotDeliverAll();
  }
  let name: string;
  if (recovered !== null) {
    name = recovered.name;
  } else if (cfg.durable !== '') {
    if (cfg.durable.length > JS_MAX_NAME_LEN) return JsErr.consumerNameTooLong(JS_MAX_NAME_LEN);
    name = cfg.durable;
  } else if (cfg.name !== '') {
    name = cfg.name;
  } else {
    // The generated name is not written into the config, as the reference's info shows.
    do name = nuid.next().substring(14);
    while (stream.consumers.has(name));
  }
  // A name from CONSUMER.CREATE.<stream>.<name>: checked as the reference checks it, once chosen.
  if (!isValidName(name)) return JsErr.consumerBadDurableName();
  if (cfg.durable === '' && cfg.inactiveThreshold === 0)
    cfg.inactiveThreshold = DELETE_WAIT_DEFAULT;
  // Explicit and all keep pending entries (all acknowledges them one by one, as the
  // consumer finds them); none moves the ack floor with every delivery.
  const store = stream.store.consumerStore(name, {
    ackPolicy: cfg.ackPolicy === 'none' ? 'none' : 'explicit',
  });
  const created = recovered?.createdNs ?? nowNs();
  const consumer = new Consumer(stream, jsa, name, cfg, store, created, (c) => {
    void deleteConsumer(jsa, stream, c);
  });
  stream.consumers.set(name, consumer);
  if (recovered === null) {
    jsa
      .provider(stream.cfg.storage)
      .writeConsumerMeta(stream.name, name, consumerMeta(name, cfg, created));
    consumer.start();
  } else {
    if (recovered.state !== undefined) {
      store.update(recovered.state);
      jsa
        .provider(stream.cfg.storage)
        .writeConsumerMeta(stream.name, name, consumerMeta(name, cfg, created));
    }
    consumer.resume();
    return consumer;
  }
  jsa.advisory(`$JS.EVENT.ADVISORY.CONSUMER.CREATED.${stream.name}.${name}`, {
    type: 'io.nats.jetstream.advisory.v1.consumer_action',
    stream: stream.name,
    consumer: name,
    action: 'create',
  });
  return consumer;
}

export async function deleteConsumer(jsa: JsAccount, stream: Stream, c: Consumer): Promise<void> {
  if (stream.consumers.get(c.name) !== c) return;
  stream.consumers.delete(c.name);
  jsa.provider(stream.cfg.storage).removeConsumerMeta(stream.name, c.name);
  await c.delete();
  jsa.advisory(`$JS.EVENT.ADVISORY.CONSUMER.DELETED.${stream.name}.${c.name}`, {
    type: 'io.nats.jetstream.advisory.v1.consumer_action',
    stream: stream.name,
    consumer: c.name,
    action: 'delete',
  });
}
