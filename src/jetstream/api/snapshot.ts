// $JS.API.STREAM.SNAPSHOT.<stream> and $JS.API.STREAM.RESTORE.<stream>, on the wire as
// nats-server 2.9 speaks them:
//
// - SNAPSHOT {deliver_subject, no_consumers, chunk_size, jsck}: the response carries the
//   stream's config and state; then the chunks go to deliver_subject, each with the reply
//   subject `$JS.SNAPSHOT.ACK.<stream>.<id>.<chunk size>.<index>` the client acks on (flow
//   control: past 8 MB unacknowledged the sender waits up to 10 ms per chunk for an ack),
//   and an empty message without reply ends it.
// - RESTORE {config, state}: the response names `$JS.SNAPSHOT.RESTORE.<stream>.<id>`; the
//   client sends each chunk there as a request (an empty reply acks it), then an empty
//   request, answered with a stream_create_response (the stream's info, or the error).
//   A chunk without a reply subject, or 5 s without a chunk, abandons the restore.

import { nuid } from '../../protocol/nuid.js';
import { isValidSubject } from '../../subjects/validate.js';
import type { JsAccount } from '../account.js';
import { JsErr, type ApiError } from '../errors.js';
import { JsonFields } from '../json.js';
import { snapshotBytes, type SnapshotConsumer } from '../snapshot/archive.js';
import { Restorer } from '../snapshot/restore.js';
import { checkStreamConfig, decodeStreamConfig, streamMeta } from '../stream-config.js';
import { streamLimitsCheck } from '../stream-manage.js';
import type { Stream } from '../stream.js';
import { consumerMeta } from '../consumer-config.js';
import { Consumer } from '../consumer.js';
import { nowNs, rfc3339Nano } from '../time.js';
import { isEmptyRequest } from './response.js';
import { fail, ok, type ApiRequest } from './request.js';

const SNAPSHOT = 'stream_snapshot_response';
const RESTORE = 'stream_restore_response';
const CREATE_TYPE = 'io.nats.jetstream.api.v1.stream_create_response';
const DEFAULT_CHUNK = 128 * 1024;
/** A chunk size past this is taken as this (the reference allocates what it is asked). */
const MAX_CHUNK = 8 * 1024 * 1024;
const WINDOW = 8 * 1024 * 1024;
const ACK_WAIT_MS = 10;
const INTEREST_WAIT_MS = 2000;
const RESTORE_IDLE_MS = 5000;

export function streamSnapshot(req: ApiRequest): void {
  if (isEmptyRequest(req.body)) return fail(req, SNAPSHOT, JsErr.badRequest());
  const jsa = req.jsa;
  const stream = jsa.streams.get(req.tokens[4]!);
  if (stream === undefined) return fail(req, SNAPSHOT, JsErr.streamNotFound());
  const f = JsonFields.parse(req.body);
  const deliver = f?.str('deliver_subject') ?? '';
  const noConsumers = f?.bool('no_consumers') ?? false;
  let chunkSize = f?.int('chunk_size') ?? 0;
  // Read for its type only: a wrong one is "invalid JSON"; messages are not re-checked.
  f?.bool('jsck');
  if (f === null || !f.ok) return fail(req, SNAPSHOT, JsErr.invalidJson());
  if (!isValidSubject(deliver, true))
    return fail(req, SNAPSHOT, JsErr.snapshotDeliverSubjectInvalid());
  if (chunkSize <= 0) chunkSize = DEFAULT_CHUNK;
  if (chunkSize > MAX_CHUNK) chunkSize = MAX_CHUNK;

  const state = stream.store.state();
  const consumers: SnapshotConsumer[] = [];
  if (!noConsumers) {
    for (const c of stream.consumers.values()) {
      if (!(c instanceof Consumer)) continue;
      consumers.push({
        name: c.name,
        meta: consumerMeta(c.name, c.cfg, c.created),
        state: c.storeState(),
      });
    }
  }
  const info = stream.infoJson();
  ok(req, SNAPSHOT, { config: info.config, state: info.state });
  const start = nowNs();
  jsa.advisory(`$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_CREATE.${stream.name}`, {
    type: 'io.nats.jetstream.advisory.v1.snapshot_create',
    stream: stream.name,
    state: info.state,
    client: { acc: jsa.accountName },
  });
  jsa.notice(`Starting snapshot for stream '${jsa.accountName} > ${stream.name}'`);
  const pieces = snapshotBytes({
    meta: streamMeta(stream.cfg, stream.created),
    store: stream.store,
    firstSeq: state.msgs > 0 ? state.firstSeq : state.lastSeq + 1,
    lastSeq: state.lastSeq,
    consumers,
  });
  void sendSnapshot(jsa, stream, deliver, chunkSize, pieces).then(
    () => {
      const end = nowNs();
      jsa.advisory(`$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_COMPLETE.${stream.name}`, {
        type: 'io.nats.jetstream.advisory.v1.snapshot_complete',
        stream: stream.name,
        start: rfc3339Nano(start),
        end: rfc3339Nano(end),
        client: { acc: jsa.accountName },
      });
      jsa.notice(
        `Completed snapshot of ${state.bytes} B for stream '${jsa.accountName} > ${stream.name}' in ${Math.round((end - start) / 1e6)}ms`,
      );
    },
    (err: unknown) => jsa.warn(`snapshot of stream ${stream.name} failed: ${String(err)}`),
  );
}

/** Resolves once the deliver subject has a subscriber, or after 2 s. */
function interest(jsa: JsAccount, subject: string): Promise<void> {
  if (jsa.hasInterest(subject)) return Promise.resolve();
  return new Promise((resolve) => {
    const w = {
      deliverSubject: subject,
      interestAppeared: () => {
        clearTimeout(timer);
        resolve();
      },
    };
    const timer = setTimeout(() => {
      jsa.cancelInterestWait(w);
      resolve();
    }, INTEREST_WAIT_MS);
    jsa.awaitInterest(w);
  });
}

async function sendSnapshot(
  jsa: JsAccount,
  stream: Stream,
  deliver: string,
  chunkSize: number,
  pieces: Generator<Buffer>,
): Promise<void> {
  await interest(jsa, deliver);
  const ackSubject = `$JS.SNAPSHOT.ACK.${stream.name}.${nuid.next()}`;
  let out = 0;
  let wake: (() => void) | null = null;
  const ackSub = jsa.subscribe(ackSubject + '.>', (subject) => {
    const size = Number(subject.split('.')[6]);
    if (Number.isFinite(size)) out -= size;
    if (out < WINDOW && wake !== null) wake();
  });
  try {
    let buf: Buffer[] = [];
    let have = 0;
    let index = 0;
    const send = async (chunk: Buffer): Promise<boolean> => {
      if (out > WINDOW) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(done, ACK_WAIT_MS);
          function done(): void {
            clearTimeout(t);
            wake = null;
            resolve();
          }
          wake = done;
        });
      } else {
        // Lets acks, other clients and the stream's own traffic in between chunks.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      if (!jsa.hasInterest(deliver)) return false;
      index++;
      jsa.publish(deliver, `${ackSubject}.${chunk.length}.${index}`, null, chunk);
      out += chunk.length;
      return true;
    };
    let live = true;
    for (const piece of pieces) {
      buf.push(piece);
      have += piece.length;
      while (live && have >= chunkSize) {
        const all = Buffer.concat(buf);
        live = await send(all.subarray(0, chunkSize));
        const rest = all.subarray(chunkSize);
        buf = rest.length > 0 ? [rest] : [];
        have = rest.length;
      }
      if (!live) break;
    }
    if (live && have > 0) await send(Buffer.concat(buf));
  } finally {
    jsa.unsubscribe(ackSub);
    // The end: an empty message without a reply subject.
    jsa.publish(deliver, null, null, Buffer.alloc(0));
  }
}

export function streamRestore(req: ApiRequest): void {
  if (isEmptyRequest(req.body)) return fail(req, RESTORE, JsErr.badRequest());
  const jsa = req.jsa;
  const f = JsonFields.parse(req.body);
  const inner = f?.obj('config') ?? null;
  // Read for its type only, as the reference's unmarshal: the snapshot carries the state.
  f?.obj('state');
  if (f === null || !f.ok) return fail(req, RESTORE, JsErr.invalidJson());
  const name = req.tokens[4]!;
  const decoded = decodeStreamConfig(inner ?? new JsonFields({}));
  if (decoded === null) return fail(req, RESTORE, JsErr.invalidJson());
  if (decoded.name === '') decoded.name = name;
  const cfg = checkStreamConfig(decoded);
  if ('err_code' in cfg) return fail(req, RESTORE, cfg);
  const limits = streamLimitsCheck(jsa, cfg);
  if (limits !== null) return fail(req, RESTORE, limits);
  if (jsa.streams.has(name)) return fail(req, RESTORE, JsErr.streamNameExistRestoreFailed());

  jsa.notice(`Starting restore for stream '${jsa.accountName} > ${cfg.name}'`);
  const start = nowNs();
  jsa.advisory(`$JS.EVENT.ADVISORY.STREAM.RESTORE_CREATE.${cfg.name}`, {
    type: 'io.nats.jetstream.advisory.v1.restore_create',
    stream: cfg.name,
    client: { acc: jsa.accountName },
  });
  const subject = `$JS.SNAPSHOT.RESTORE.${cfg.name}.${nuid.next()}`;
  const restorer = new Restorer(jsa, cfg);
  let finished = false;
  const stop = (why: string | null): void => {
    finished = true;
    clearTimeout(idle);
    jsa.unsubscribe(sub);
    if (why !== null) {
      jsa.warn(why);
      void restorer.abort();
    }
  };
  let idle = setTimeout(
    () => stop(`restore for stream '${jsa.accountName} > ${cfg.name}' is stalled`),
    RESTORE_IDLE_MS,
  );
  const sub = jsa.subscribe(subject, (_s, reply, _h, data) => {
    if (finished) return;
    if (reply === null || reply === '')
      return stop(
        `restore for stream '${jsa.accountName} > ${cfg.name}' requires reply subject for each chunk`,
      );
    clearTimeout(idle);
    if (data.length > 0) {
      restorer.feed(data);
      // The reference counts a restore against the server's file storage limit.
      if (jsa.limitsExceeded('file', restorer.total)) {
        stop(null);
        return complete(reply, JsErr.insufficientResources());
      }
      jsa.publish(reply, null, null, Buffer.alloc(0));
      idle = setTimeout(
        () => stop(`restore for stream '${jsa.accountName} > ${cfg.name}' is stalled`),
        RESTORE_IDLE_MS,
      );
      return;
    }
    stop(null);
    complete(reply, null);
  });
  const complete = (reply: string, forced: ApiError | null): void => {
    const done = forced === null ? restorer.finish() : restorer.abort().then(() => forced);
    void done.then((r) => {
      const end = nowNs();
      jsa.advisory(`$JS.EVENT.ADVISORY.STREAM.RESTORE_COMPLETE.${cfg.name}`, {
        type: 'io.nats.jetstream.advisory.v1.restore_complete',
        stream: cfg.name,
        start: rfc3339Nano(start),
        end: rfc3339Nano(end),
        bytes: restorer.total,
        client: { acc: jsa.accountName },
      });
      const took = `${restorer.total} B for stream '${cfg.name} > ${jsa.accountName}' in ${Math.round((end - start) / 1e6)}ms`;
      let body: Record<string, unknown>;
      if ('err_code' in r) {
        jsa.warn(`Restore failed for ${took}`);
        body = { type: CREATE_TYPE, error: r };
      } else {
        jsa.notice(`Completed restore of ${took}`);
        const info = r.infoJson();
        body = { type: CREATE_TYPE, config: info.config, created: info.created, state: info.state };
      }
      jsa.respond(reply, body, false, false);
    });
  };
  ok(req, RESTORE, { deliver_subject: subject });
}
