// DIRECT.GET over a raw socket, byte for byte: the subject form a KV get sends and the
// JSON form, their status answers, and the streams that answer nothing. The reference
// (nats-server 2.9.10 -js) recorded its transcript in fixtures/direct-get.json
// (capture-reference.ts); wirebus must write the same bytes but for each message's
// Nats-Time-Stamp and the sizes that follow from its length.

import { RawClient } from '../helpers/raw.js';

export interface DirectGetStep {
  name: string;
  /** What the answer, if any, was written as (normalised: see normaliseReply). */
  reply: string;
}

const GET = '$JS.API.DIRECT.GET.';

function pub(subject: string, body: string, reply = ''): string {
  return `PUB ${subject}${reply === '' ? '' : ' ' + reply} ${Buffer.byteLength(body)}\r\n${body}\r\n`;
}

function hpub(subject: string, hdr: string, body: string, reply = ''): string {
  const h = Buffer.byteLength(hdr);
  const total = h + Buffer.byteLength(body);
  return `HPUB ${subject}${reply === '' ? '' : ' ' + reply} ${h} ${total}\r\n${hdr}${body}\r\n`;
}

/** The requests, on one memory and one file stream that allow direct gets. */
function steps(stream: string): [string, string][] {
  const g = GET + stream;
  const r = 'r.1';
  return [
    ['subject form, last of d.a', pub(`${g}.d.a`, '', r)],
    ['subject form, a message with headers', pub(`${g}.d.b`, '', r)],
    ['subject form, an empty message', pub(`${g}.d.c`, '', r)],
    ['subject form, a wildcard', pub(`${g}.d.*`, '', r)],
    ['subject form, no message', pub(`${g}.d.zz`, '', r)],
    ['subject form with a body', pub(`${g}.d.a`, '{"seq":1}', r)],
    ['subject form with headers', hpub(`${g}.d.a`, 'NATS/1.0\r\nX: 1\r\n\r\n', '', r)],
    ['by sequence', pub(g, '{"seq":1}', r)],
    ['last by subject', pub(g, '{"last_by_subj":"d.b"}', r)],
    ['next by subject', pub(g, '{"seq":2,"next_by_subj":"d.a"}', r)],
    ['a sequence not stored', pub(g, '{"seq":99}', r)],
    ['empty body', pub(g, '', r)],
    ['empty request', pub(g, '{}', r)],
    ['not JSON', pub(g, 'nope', r)],
    ['sequence and last by subject', pub(g, '{"seq":1,"last_by_subj":"d.a"}', r)],
    ['last and next by subject', pub(g, '{"last_by_subj":"d.a","next_by_subj":"d.a"}', r)],
    ['no reply subject', pub(`${g}.d.a`, '')],
    ['a stream that does not exist', pub(`${GET}NOPE.d.a`, '', r)],
  ];
}

/**
 * The received text with each Nats-Time-Stamp value made `<time>` and the HMSG sizes
 * that depend on it made `<hdr> <total>`, after checking that they are the sizes of
 * what follows (throws when they are not). One difference is left out: the reference
 * writes an empty reply field (`HMSG r.1 2  79 84`, two spaces) on what a stream sends
 * from its own queue (direct gets, PubAcks), wirebus none; clients read both alike.
 */
export function normaliseReply(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const eol = text.indexOf('\r\n', i);
    if (eol < 0) throw new Error(`no line end in ${JSON.stringify(text.slice(i))}`);
    const line = text.slice(i, eol).replaceAll('  ', ' ');
    i = eol + 2;
    const parts = line.split(' ');
    if (parts[0] === 'HMSG') {
      const hdrLen = Number(parts[parts.length - 2]);
      const total = Number(parts[parts.length - 1]);
      const hdr = text.slice(i, i + hdrLen);
      const payload = text.slice(i + hdrLen, i + total);
      if (!hdr.endsWith('\r\n\r\n') || text.slice(i + total, i + total + 2) !== '\r\n')
        throw new Error(`HMSG sizes do not fit: ${JSON.stringify(text.slice(eol - 40))}`);
      const timed = hdr.replace(/(\r\nNats-Time-Stamp: )[^\r]*/, '$1<time>');
      out += `${parts.slice(0, -2).join(' ')} <hdr> <total>\r\n${timed}${payload}\r\n`;
      i += total + 2;
    } else if (parts[0] === 'MSG') {
      const total = Number(parts[parts.length - 1]);
      out += `${line}\r\n${text.slice(i, i + total + 2)}`;
      i += total + 2;
    } else {
      out += `${line}\r\n`;
    }
  }
  return out;
}

/** CONNECT with headers: a client without them gets no header block (MSG, not HMSG). */
const CONNECT = 'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\n';

/** Whether `text` holds a whole message for the replies' subscription (sid 2). */
function hasReply(text: string): boolean {
  const at = text.search(/H?MSG r\.1 2 /);
  if (at < 0) return false;
  const eol = text.indexOf('\r\n', at);
  if (eol < 0) return false;
  const total = Number(text.slice(at, eol).split(' ').pop());
  return text.length >= eol + 2 + total + 2;
}

/**
 * Sends `bytes` and a PING; returns what came back without the PONG: the reference
 * answers a DIRECT.GET after it (its stream answers from a queue of its own), wirebus
 * before it. A request that gets no answer is given 300 ms.
 */
async function exchange(c: RawClient, bytes: string): Promise<string> {
  c.send(bytes + 'PING\r\n');
  await c.waitFor((t) => t.includes('PONG\r\n'));
  await c.waitFor(hasReply, 300);
  return c.take().replace('PONG\r\n', '');
}

/** Runs the transcript on a server with JetStream at `port`. */
export async function runDirectGet(port: number): Promise<DirectGetStep[]> {
  const c = await RawClient.open(port);
  const out: DirectGetStep[] = [];
  try {
    await exchange(c, CONNECT + 'SUB c.> 1\r\nSUB r.> 2\r\n');
    const create = (cfg: Record<string, unknown>): string =>
      pub(`$JS.API.STREAM.CREATE.${String(cfg.name)}`, JSON.stringify(cfg), 'c.1');
    for (const [name, storage] of [
      ['DM', 'memory'],
      ['DF', 'file'],
    ] as const) {
      // A stream per storage, and its messages: d.a twice, d.b with headers, d.c empty.
      await exchange(c, create({ name, storage, subjects: ['d.>'], allow_direct: true }));
      await exchange(
        c,
        pub('d.a', 'one') +
          hpub('d.b', 'NATS/1.0\r\nX-A: 1\r\n\r\n', 'two') +
          pub('d.c', '') +
          pub('d.a', 'three'),
      );
      for (const [step, bytes] of steps(name)) {
        const text = await exchange(c, bytes);
        out.push({ name: `${storage}: ${step}`, reply: normaliseReply(text) });
      }
      await exchange(c, pub(`$JS.API.STREAM.DELETE.${name}`, '', 'c.1'));
    }
    await exchange(c, create({ name: 'DN', storage: 'memory', subjects: ['n.>'] }));
    await exchange(c, pub('n.a', 'x'));
    const text = await exchange(c, pub(`${GET}DN.n.a`, '', 'r.1'));
    out.push({ name: 'a stream without allow_direct', reply: normaliseReply(text) });
  } finally {
    c.close();
  }
  return out;
}
