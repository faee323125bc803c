// Runs a consumer scenario (consumer-cases.ts) against a server and records everything
// that comes back: API answers, pulled and pushed messages with their status lines,
// headers and ack subjects, AckSync replies, and the consumer advisories and metrics.
// The reference (nats-server 2.9.10 -js) recorded its transcript in
// fixtures/consumers.json (capture-reference-consumers.ts); wirebus must give it again.

import { connect, headers, type Msg, type NatsConnection } from 'nats';
import { toAnswer, type Answer } from './api-client.js';
import { PUSH_SUBJECTS } from './consumer-cases.js';

/** What a step sends, and how many messages it waits for before it moves on. */
export interface ConsumerStep {
  name: string;
  /** The subject, or how to find it in what earlier steps received. */
  subject: string | ((t: Transcript) => string);
  /** A string as is, anything else as JSON; null or absent for an empty body. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Publish with the reply subject `R.<step>` (default), or without one. */
  noReply?: boolean;
  /** Messages to wait for (default: 1 with a reply subject, else 0). */
  expect?: number;
  /** The longest wait for them, ms (default 2000); a step expecting 0 waits this long (default 60). */
  wait?: number;
  /** Waits this long before sending (ms): for timers (ack_wait, inactive_threshold). */
  delay?: number;
}

export interface Received {
  /** The subscription it came on: `reply`, a deliver subject, `advisory` or `metric`. */
  on: string;
  /** The subject it came on, with the step's reply inbox written `R.<n>`. */
  subject: string;
  answer: Answer;
}

export interface StepRecord {
  name: string;
  received: Received[];
  error?: string;
}

/** What earlier steps received, unnormalised: where the next acks go. */
export class Transcript {
  readonly raw: Msg[][] = [];

  /** The reply (ack) subject of message `i` received by the step named `step`. */
  ackOf(step: string, i = 0): string {
    const idx = this.names.indexOf(step);
    const m = this.raw[idx]?.filter((x) => x.reply !== undefined && x.reply !== '')[i];
    if (m === undefined) {
      const got = (this.raw[idx] ?? []).map((x) => `${x.subject} ${x.reply ?? ''}`).join(', ');
      throw new Error(`no message ${i} with a reply in step ${step}: ${got}`);
    }
    return m.reply!;
  }

  /** The reply subject of the last flow control request received so far. */
  lastFlowControl(): string {
    for (let s = this.raw.length - 1; s >= 0; s--) {
      for (const m of [...this.raw[s]!].reverse())
        if (m.reply !== undefined && m.reply.startsWith('$JS.FC.')) return m.reply;
    }
    throw new Error('no flow control request received');
  }

  readonly names: string[] = [];
}

/** Ack subject timestamps, flow control tokens, ephemeral names, metric times: normalised. */
function normaliseAnswer(a: Answer): Answer {
  if (a.reply !== undefined) a.reply = a.reply.replace(/^(\$JS\.FC\.[^.]+\.[^.]+)\..*$/, '$1.<id>');
  if (a.headers !== undefined) {
    for (const k of ['Nats-Time-Stamp', 'Nats-Consumer-Stalled'])
      if (a.headers[k] !== undefined) a.headers[k] = '<value>';
  }
  // Large bodies (flow control's) are recorded by their size.
  if (typeof a.body === 'string' && a.body.length > 200) a.body = `<${a.body.length} bytes>`;
  const b = a.body as Record<string, unknown> | null;
  if (b !== null && typeof b === 'object' && !Array.isArray(b)) {
    if (typeof b.ack_time === 'number') b.ack_time = '<ns>';
    if (typeof b.timestamp === 'string') b.timestamp = '<time>';
  }
  return a;
}

function subjectOf(s: ConsumerStep, t: Transcript): string {
  return typeof s.subject === 'string' ? s.subject : s.subject(t);
}

/**
 * Runs the steps in order on one connection listening on `R.>` (the steps' replies),
 * `D.>` (push consumers' deliver subjects) and the consumer advisories and metrics.
 * A message's group within a step is kept in arrival order per subject; subjects are
 * sorted, so that two servers interleaving their outputs differently still compare.
 */
export async function runConsumerSteps(
  port: number,
  steps: readonly ConsumerStep[],
): Promise<StepRecord[]> {
  const nc: NatsConnection = await connect({ servers: `127.0.0.1:${port}` });
  const t = new Transcript();
  const out: StepRecord[] = [];
  let current: Msg[] = [];
  let wake: (() => void) | null = null;
  const tags = new Map<Msg, string>();
  const listen = (tag: string, subject: string, opts: { queue?: string; max?: number } = {}) =>
    nc.subscribe(subject, {
      ...opts,
      callback: (_err, m) => {
        current.push(m);
        tags.set(m, tag);
        wake?.();
      },
    });
  listen('reply', 'R.>');
  // The reference counts only a subscription on the deliver subject itself as interest
  // (a wildcard that matches it is not one): each push consumer's subject is subscribed.
  for (const d of PUSH_SUBJECTS) listen(d.subject, d.subject, d);
  // A wildcard over a deliver subject (W.x): the reference does not deliver to it.
  listen('wildcard', 'W.>');
  listen('advisory', '$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>');
  listen('advisory', '$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>');
  listen('advisory', '$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.>');
  listen('metric', '$JS.EVENT.METRIC.>');
  await nc.flush();
  try {
    for (let i = 0; i < steps.length; i++) {
      const s = steps[i]!;
      // What comes during the delay (an advisory a timer sends) belongs to this step.
      current = [];
      t.names.push(s.name);
      t.raw.push(current);
      if (s.delay !== undefined) await new Promise((r) => setTimeout(r, s.delay));
      let subject: string;
      try {
        subject = subjectOf(s, t);
      } catch (err) {
        // An earlier step did not receive what this one acknowledges: recorded as such.
        out.push({ name: s.name, received: [], error: (err as Error).message });
        continue;
      }
      const body =
        s.body === undefined || s.body === null
          ? ''
          : typeof s.body === 'string'
            ? s.body
            : JSON.stringify(s.body);
      const data = new TextEncoder().encode(body);
      let h;
      if (s.headers !== undefined) {
        h = headers();
        for (const [k, v] of Object.entries(s.headers)) h.set(k, v);
      }
      const reply = s.noReply === true ? undefined : `R.${i}`;
      nc.publish(subject, data, {
        ...(reply === undefined ? {} : { reply }),
        ...(h === undefined ? {} : { headers: h }),
      });
      const expect = s.expect ?? (reply === undefined ? 0 : 1);
      const wait = s.wait ?? (expect === 0 ? 60 : 2000);
      await nc.flush();
      const deadline = Date.now() + wait;
      while (current.length < expect && Date.now() < deadline) {
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, Math.max(1, deadline - Date.now()));
        });
        wake = null;
      }
      if (expect === 0) await new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())));
      // What else comes right after (it would otherwise land in the next step).
      await new Promise((r) => setTimeout(r, 25));
      await nc.flush();
      const received = current.map((m) => ({
        on: tags.get(m)!,
        subject: m.subject.replace(/^R\.\d+$/, 'R.<step>'),
        answer: normaliseAnswer(toAnswer('', m)),
      }));
      // Stable: each subscription's messages stay in the order they came.
      received.sort((a, b) => (a.on < b.on ? -1 : a.on > b.on ? 1 : 0));
      for (const r of received) delete (r.answer as Partial<Answer>).name;
      out.push({ name: s.name, received });
    }
  } finally {
    await nc.close();
  }
  return out;
}
