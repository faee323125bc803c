// A snapshot and restore through the wire, step by step, as a client sees it: the same
// scenario runs against the reference (capture-reference.ts records its answers in
// fixtures/snapshot.json) and against wirebus (snapshot.test.ts compares). Each step's
// answer is normalised like the API cases' (times, ids, inboxes); the snapshot's bytes
// are wirebus's or the reference's own, so only how they travel is compared.

import { connect, createInbox, headers, type Msg, type MsgHdrs, type NatsConnection } from 'nats';
import { toAnswer, type Answer } from './api-client.js';

const S = '$JS.API.STREAM.';
const C = '$JS.API.CONSUMER.';
const enc = (v: unknown): Uint8Array =>
  v instanceof Uint8Array
    ? v
    : new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));

/** The recorded answer, with the ids a server generates (inboxes, restore subjects) named. */
function answer(name: string, m: Msg | null): Answer {
  const a = toAnswer(name, m);
  if (a.reply !== undefined) a.reply = a.reply.replace(/^_INBOX\..*/, '<inbox>');
  a.body = JSON.parse(
    JSON.stringify(a.body)
      .replace(/\$JS\.SNAPSHOT\.RESTORE\.([^."]+)\.[A-Za-z0-9]+/g, '$$JS.SNAPSHOT.RESTORE.$1.<id>')
      .replace(/_INBOX\.[A-Za-z0-9.]+/g, '<inbox>'),
  );
  return a;
}

/** One request and its first answer, on an inbox of its own (null after 3 s of silence). */
export async function request(
  nc: NatsConnection,
  subject: string,
  body: unknown,
  hdrs?: MsgHdrs,
): Promise<Msg | null> {
  const inbox = createInbox();
  const sub = nc.subscribe(inbox, { max: 1 });
  const data = body === null ? new Uint8Array(0) : enc(body);
  nc.publish(
    subject,
    data,
    hdrs === undefined ? { reply: inbox } : { reply: inbox, headers: hdrs },
  );
  const timer = setTimeout(() => sub.unsubscribe(), 3000);
  for await (const m of sub) {
    clearTimeout(timer);
    return m;
  }
  return null;
}

/** Takes a snapshot to an inbox; the response, the chunks' bytes, and how they came. */
export async function snapshot(
  nc: NatsConnection,
  stream: string,
  req: Record<string, unknown>,
): Promise<{ response: Answer; bytes: Buffer; delivery: Answer; config: unknown; state: unknown }> {
  const inbox = createInbox();
  const chunks: Buffer[] = [];
  const problems: string[] = [];
  let index = 0;
  let eof: Msg | null = null;
  const sub = nc.subscribe(inbox);
  const done = (async () => {
    for await (const m of sub) {
      if (m.data.length === 0) {
        eof = m;
        break;
      }
      index++;
      // `$JS.SNAPSHOT.ACK.<stream>.<id>.<chunk size>.<index>`, acked by an empty reply.
      const t = m.reply?.split('.') ?? [];
      if (
        t.length !== 7 ||
        t.slice(0, 4).join('.') !== `$JS.SNAPSHOT.ACK.${stream}` ||
        t[5] !== String(m.data.length) ||
        t[6] !== String(index)
      )
        problems.push(`chunk ${index}: reply ${m.reply ?? ''}`);
      chunks.push(Buffer.from(m.data));
      m.respond();
    }
  })();
  const r = await request(nc, S + 'SNAPSHOT.' + stream, { deliver_subject: inbox, ...req });
  const response = answer('snapshot', r);
  const parsed =
    r === null ? {} : (JSON.parse(new TextDecoder().decode(r.data)) as Record<string, unknown>);
  if (parsed.error === undefined) await done;
  else sub.unsubscribe();
  const end = answer('snapshot end', eof);
  return {
    response,
    bytes: Buffer.concat(chunks),
    delivery: {
      name: 'snapshot chunks',
      body: { chunks_well_formed: problems.length === 0 ? true : problems, some: index > 0, end },
    },
    config: parsed.config,
    state: parsed.state,
  };
}

/** Sends a snapshot to a restore subject in pieces; each ack, then the final answer. */
export async function upload(
  nc: NatsConnection,
  subject: string,
  bytes: Buffer,
  piece: number,
): Promise<Answer[]> {
  const out: Answer[] = [];
  for (let o = 0; o < bytes.length; o += piece) {
    const ack = await request(nc, subject, bytes.subarray(o, o + piece));
    if (o === 0) out.push(answer('restore chunk ack', ack));
  }
  const m = await request(nc, subject, null);
  out.push(answer('restore end', m));
  return out;
}

export async function runSnapshotScenario(port: number): Promise<Answer[]> {
  const nc = await connect({ servers: `127.0.0.1:${port}` });
  const out: Answer[] = [];
  const step = async (name: string, subject: string, body: unknown): Promise<Msg | null> => {
    const m = await request(nc, subject, body);
    out.push(answer(name, m));
    return m;
  };
  try {
    // The snapshot API's errors.
    await step('snapshot: empty body', S + 'SNAPSHOT.F', null);
    await step('snapshot: unknown stream', S + 'SNAPSHOT.F', { deliver_subject: 'x' });
    await step('restore: empty body', S + 'RESTORE.F', null);
    await step('restore: not JSON', S + 'RESTORE.F', '{');
    await step('restore: wrong type', S + 'RESTORE.F', { config: { name: 'F', max_msgs: 'x' } });
    await step('restore: bad name', S + 'RESTORE.F', { config: { name: 'a.b' } });
    await step('restore: bad config', S + 'RESTORE.F', { config: { name: 'F', max_age: 5 } });

    // A file stream with a gap, a moved first sequence, a header and a consumer mid-way.
    await step('create', S + 'CREATE.F', { name: 'F', subjects: ['f.>'], storage: 'file' });
    for (let i = 1; i <= 6; i++) {
      const h = headers();
      h.set('X-N', String(i));
      const m = await request(nc, `f.${i % 3}`, `m${i}`, i === 3 ? h : undefined);
      out.push(answer(`publish ${i}`, m));
    }
    await step('purge below 2', S + 'PURGE.F', { seq: 2 });
    await step('delete 4', S + 'MSG.DELETE.F', { seq: 4 });
    await step('consumer', C + 'DURABLE.CREATE.F.d1', {
      stream_name: 'F',
      config: { durable_name: 'd1', ack_policy: 'explicit' },
    });
    const first = await step('next 1', C + 'MSG.NEXT.F.d1', { batch: 1, no_wait: true });
    await step('next 2', C + 'MSG.NEXT.F.d1', { batch: 1, no_wait: true });
    if (first?.reply !== undefined) await step('ack 1', first.reply, '+ACK');
    await step('consumer info', C + 'INFO.F.d1', null);

    await step('snapshot: not JSON', S + 'SNAPSHOT.F', '{');
    await step('snapshot: no deliver subject', S + 'SNAPSHOT.F', { chunk_size: 10 });
    await step('snapshot: wrong type', S + 'SNAPSHOT.F', { deliver_subject: 'x', chunk_size: 'x' });
    const snap = await snapshot(nc, 'F', { chunk_size: 512 });
    out.push(snap.response, snap.delivery);

    await step('restore: exists', S + 'RESTORE.F', { config: snap.config, state: snap.state });
    await step('delete stream', S + 'DELETE.F', null);
    const r = await step('restore', S + 'RESTORE.F', { config: snap.config, state: snap.state });
    const target =
      r === null
        ? ''
        : (JSON.parse(new TextDecoder().decode(r.data)) as { deliver_subject: string })
            .deliver_subject;
    out.push(...(await upload(nc, target, snap.bytes, 700)));
    await step('info after restore', S + 'INFO.F', null);
    await step('consumer after restore', C + 'INFO.F.d1', null);
    await step('next after restore', C + 'MSG.NEXT.F.d1', { batch: 1, no_wait: true });
    await step('get 3 after restore', S + 'MSG.GET.F', { seq: 3 });
    const p = await request(nc, 'f.x', 'after');
    out.push(answer('publish after restore', p));

    // A restore that gets bytes that are not a snapshot.
    const g = await step('restore G', S + 'RESTORE.G', { config: { subjects: ['g'] } });
    const gs =
      g === null
        ? ''
        : (JSON.parse(new TextDecoder().decode(g.data)) as { deliver_subject: string })
            .deliver_subject;
    out.push(...(await upload(nc, gs, Buffer.from('not a snapshot at all'), 100)));
    await step('info G', S + 'INFO.G', null);
  } finally {
    await nc.close();
  }
  return out;
}
