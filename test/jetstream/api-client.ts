// Sends the API cases to a server and records each answer: its status line, headers and
// body (JSON parsed), with the values that legitimately differ between two servers
// (times, generated names, ids) replaced by placeholders.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { connect, createInbox, headers, type Msg, type NatsConnection } from 'nats';
import type { ApiCase } from './api-cases.js';

export interface Answer {
  name: string;
  status?: string;
  headers?: Record<string, string>;
  reply?: string;
  body: unknown;
}

/** test/jetstream/fixtures in the sources (these files run from dist/test/jetstream). */
export const FIXTURES = resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'test',
  'jetstream',
  'fixtures',
);

/** A recorded fixture of test/jetstream/fixtures, parsed. */
export function readFixture(name: string): unknown {
  return JSON.parse(readFileSync(resolve(FIXTURES, name), 'utf8'));
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export function normalise(v: unknown, key = ''): unknown {
  if (typeof v === 'string') {
    if (TIME.test(v) && !v.startsWith('0001-')) return '<time>';
    return v;
  }
  if (Array.isArray(v)) return v.map((x) => normalise(x));
  if (v !== null && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      o[k] = k === 'id' || (key === 'consumer' && k === 'name') ? '<id>' : normalise(x, k);
    }
    return o;
  }
  return v;
}

async function ask(nc: NatsConnection, c: ApiCase): Promise<Msg | null> {
  const inbox = createInbox();
  const sub = nc.subscribe(inbox, { max: 1 });
  let h;
  if (c.headers !== undefined) {
    h = headers();
    for (const [k, v] of Object.entries(c.headers)) h.set(k, v);
  }
  const body = c.body === null ? '' : typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
  const data = new TextEncoder().encode(body);
  if (h === undefined) nc.publish(c.subject, data, { reply: inbox });
  else nc.publish(c.subject, data, { reply: inbox, headers: h });
  const timer = setTimeout(() => sub.unsubscribe(), c.noReply === true ? 300 : 1500);
  for await (const m of sub) {
    clearTimeout(timer);
    return m;
  }
  return null;
}

/** A reply as recorded: status line, headers, reply subject and body, normalised. */
export function toAnswer(name: string, m: Msg | null): Answer {
  if (m === null) return { name, body: '<no reply>' };
  const a: Answer = { name, body: null };
  if (m.headers !== undefined) {
    if (m.headers.code !== 0) a.status = `${m.headers.code} ${m.headers.description}`;
    const hs: Record<string, string> = {};
    for (const k of m.headers.keys()) hs[k] = m.headers.get(k);
    if (Object.keys(hs).length > 0) a.headers = normalise(hs) as Record<string, string>;
  }
  // Ack subjects carry a timestamp: keep all but it.
  if (m.reply !== undefined && m.reply !== '')
    a.reply = m.reply.replace(/^(\$JS\.ACK(?:\.[^.]+){5})\.\d+\./, '$1.<ts>.');
  const text = new TextDecoder().decode(m.data);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  a.body = normalise(body);
  return a;
}

/** The answers to `cases`, asked in order on one connection (as `user` when given). */
export async function runCases(
  port: number,
  cases: readonly ApiCase[],
  user?: { user: string; pass: string },
): Promise<Answer[]> {
  const nc = await connect({ servers: `127.0.0.1:${port}`, ...user });
  const out: Answer[] = [];
  try {
    for (const c of cases) {
      const m = await ask(nc, c);
      const a = toAnswer(c.name, m);
      out.push(a);
    }
  } finally {
    await nc.close();
  }
  return out;
}
