// Runs the stream cases (stream-cases.ts) on one connection, in order, and records each
// answer as api-client.ts does, with three additions the stream rules need: a PubAck's
// body kept as the exact text the server wrote, the message a republish sends (watched on
// its destination), and acks sent to the reply subject of the message delivered last.

import { setTimeout as sleep } from 'node:timers/promises';
import { connect, createInbox, headers, type Msg, type NatsConnection } from 'nats';
import { toAnswer, type Answer } from './api-client.js';
import type { StreamCase } from './stream-cases.js';

export interface StreamAnswer extends Answer {
  /** What arrived on the case's watched subject, if it watched one. */
  watched?: Answer & { subject: string };
}

function first(nc: NatsConnection, subject: string, waitMs: number): Promise<Msg | null> {
  const sub = nc.subscribe(subject, { max: 1 });
  const timer = setTimeout(() => sub.unsubscribe(), waitMs);
  return (async () => {
    for await (const m of sub) {
      clearTimeout(timer);
      return m;
    }
    return null;
  })();
}

async function send(
  nc: NatsConnection,
  c: StreamCase,
  lastReply: string,
): Promise<[StreamAnswer, string]> {
  const inbox = createInbox();
  const wait = c.noReply === true ? 300 : 1500;
  const replied = first(nc, inbox, wait);
  const watched = c.watch === undefined ? null : first(nc, c.watch, 1500);
  await nc.flush();
  let h;
  if (c.headers !== undefined) {
    h = headers();
    for (const [k, v] of Object.entries(c.headers)) h.set(k, v);
  }
  const body = c.body === null ? '' : typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
  const subject = c.ackLast === true ? lastReply : c.subject;
  nc.publish(subject, new TextEncoder().encode(body), {
    reply: inbox,
    ...(h === undefined ? {} : { headers: h }),
  });
  const m = await replied;
  const a: StreamAnswer = toAnswer(c.name, m);
  if (c.raw === true && m !== null) a.body = new TextDecoder().decode(m.data);
  // An ephemeral consumer's generated name.
  const b = a.body as { type?: string; name?: string; config?: { durable_name?: string } };
  if (b.config !== undefined && b.config.durable_name === undefined && b.name !== undefined)
    b.name = '<ephemeral>';
  if (watched !== null) {
    const w = await watched;
    a.watched = { ...toAnswer('watched', w), subject: w?.subject ?? '' };
    if (w !== null) a.watched.body = new TextDecoder().decode(w.data);
  }
  return [a, m?.reply ?? ''];
}

/** Every case's answer, in order; the last delivered message's reply subject is kept for acks. */
export async function runStreamCases(
  port: number,
  cases: readonly StreamCase[],
): Promise<StreamAnswer[]> {
  const nc = await connect({ servers: `127.0.0.1:${port}` });
  const out: StreamAnswer[] = [];
  let lastReply = '';
  try {
    for (const c of cases) {
      if (c.waitMs !== undefined) await sleep(c.waitMs);
      const [a, reply] = await send(nc, c, lastReply);
      if (reply !== '') lastReply = reply;
      out.push(a);
    }
  } finally {
    await nc.close();
  }
  return out;
}
