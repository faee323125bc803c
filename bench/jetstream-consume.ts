// The consumer side of JetStream in one process, without a NATS client library: an
// embedded server and a raw socket that speaks just enough of the protocol (a line
// scanner that reads sizes and skips payloads), so that the process's CPU time per
// message is the server's own delivery cost. Push (ack none), pull (ack none and
// explicit acks: each message acknowledged by a PUB to its reply, taken by the ack tap
// or, as before it, routed through the subject index) and KV-style
// DIRECT.GET, on memory and file streams; for each, the first consumer (code not yet
// optimised by V8: what a freshly started server pays) and the median of the next ones.
// Not a test. Run after a build:
//
//   node dist/bench/jetstream-consume.js
//   N=200000 K=5 ONLY=push STORAGE=file node dist/bench/jetstream-consume.js
//   HDR=1 ONLY="(ack none)" node dist/bench/jetstream-consume.js   (messages with headers)

import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/index.js';

const N = Number(process.env.N ?? '100000');
const K = Number(process.env.K ?? '5');
const GETS = Number(process.env.GETS ?? '5000');
const ONLY = process.env.ONLY ?? '';
const STORAGES = (process.env.STORAGE ?? 'memory,file').split(',');
/** HDR=1: the stored messages carry a header block. */
const HDR = process.env.HDR === '1';

const LF = 0x0a;
const SP = 0x20;

type OnMsg = (reply: string, payload: Buffer) => void;

/** A NATS connection as bare as it gets: PUB/SUB lines out, MSG/HMSG lines counted in. */
class RawClient {
  private rest: Buffer = Buffer.alloc(0);
  /** Called per message of a sid; `reply` only for sids in wantReply, `payload` only in wantPayload. */
  readonly handlers = new Map<number, OnMsg>();
  readonly wantReply = new Set<number>();
  readonly wantPayload = new Set<number>();
  private pongs: (() => void)[] = [];
  private queued = '';

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.read(chunk));
  }

  static async open(port: number): Promise<RawClient> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.setNoDelay(true);
    const c = new RawClient(socket);
    c.write('CONNECT {"verbose":false,"pedantic":false,"headers":true,"protocol":1}\r\n');
    await c.ping();
    return c;
  }

  write(text: string): void {
    this.socket.write(text, 'latin1');
  }

  /** Written once the current read is scanned, as a client library batches its writes. */
  queue(text: string): void {
    this.queued += text;
  }

  ping(): Promise<void> {
    this.write('PING\r\n');
    return new Promise((r) => this.pongs.push(r));
  }

  pub(subject: string, reply: string, body: string): void {
    this.write(`PUB ${subject} ${reply} ${Buffer.byteLength(body)}\r\n${body}\r\n`);
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    const b = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    let i = 0;
    for (;;) {
      const nl = b.indexOf(LF, i);
      if (nl < 0) break;
      const c0 = b[i];
      if (c0 === 0x4d /* M */ || c0 === 0x48 /* H */) {
        // MSG <subject> <sid> [reply] <size> / HMSG <subject> <sid> [reply] <hdr> <size>
        const tokens: number[] = [];
        for (let j = i; j < nl - 1; j++) if (b[j] === SP) tokens.push(j + 1);
        const size = digits(b, tokens[tokens.length - 1]!, nl - 1);
        const end = nl + 1 + size + 2;
        if (end > b.length) break;
        const sid = digits(b, tokens[1]!, tokens[2]! - 1);
        const replyToken = tokens.length === (c0 === 0x48 ? 5 : 4);
        const reply =
          replyToken && this.wantReply.has(sid)
            ? b.toString('latin1', tokens[2], tokens[3]! - 1)
            : '';
        const payload = this.wantPayload.has(sid)
          ? Buffer.from(b.subarray(nl + 1, nl + 1 + size))
          : EMPTY;
        this.handlers.get(sid)?.(reply, payload);
        i = end;
      } else {
        if (c0 === 0x50 && b[i + 1] === 0x49 /* PING */) this.write('PONG\r\n');
        else if (c0 === 0x50 /* PONG */) this.pongs.shift()?.();
        else if (c0 === 0x2d /* -ERR */) process.stderr.write(b.toString('latin1', i, nl + 1));
        i = nl + 1;
      }
    }
    this.rest = i === b.length ? EMPTY : Buffer.from(b.subarray(i));
    if (this.queued !== '') {
      this.write(this.queued);
      this.queued = '';
    }
  }
}

const EMPTY = Buffer.alloc(0);

function digits(b: Buffer, from: number, to: number): number {
  let v = 0;
  for (let j = from; j < to; j++) v = v * 10 + (b[j]! - 0x30);
  return v;
}

let nextSid = 1;

/** A request over the raw client; resolves with the reply's payload as text. */
async function request(c: RawClient, subject: string, body: string): Promise<string> {
  const sid = nextSid++;
  c.wantPayload.add(sid);
  c.write(`SUB _R.${sid} ${sid}\r\n`);
  const reply = new Promise<string>((resolve) => {
    c.handlers.set(sid, (_r, p) => {
      c.handlers.delete(sid);
      resolve(p.toString());
    });
  });
  c.pub(subject, `_R.${sid}`, body);
  return reply;
}

async function api(c: RawClient, subject: string, body: object): Promise<void> {
  const text = await request(c, subject, JSON.stringify(body));
  if (text.includes('"error"')) throw new Error(`${subject}: ${text}`);
}

/**
 * Publishes n 128-byte messages with acks, `window` unacknowledged at most; with HDR=1
 * each has a small header block too (as KV and deduplicated publishes have).
 */
async function fill(c: RawClient, subject: string, n: number): Promise<void> {
  const sid = nextSid++;
  c.write(`SUB _A ${sid}\r\n`);
  const body = 'x'.repeat(128);
  const hdr = 'NATS/1.0\r\nX-Kind: bench\r\n\r\n';
  const op = HDR
    ? `HPUB ${subject} _A ${hdr.length} ${hdr.length + 128}\r\n${hdr}${body}\r\n`
    : `PUB ${subject} _A 128\r\n${body}\r\n`;
  let sent = 0;
  let acked = 0;
  await new Promise<void>((done) => {
    const pump = (): void => {
      let batch = '';
      while (sent < n && sent - acked < 1000) {
        batch += op;
        sent++;
      }
      if (batch !== '') c.write(batch);
    };
    c.handlers.set(sid, () => {
      if (++acked === n) {
        c.handlers.delete(sid);
        done();
      } else if (sent - acked <= 500) pump();
    });
    pump();
  });
}

interface Run {
  rate: number;
  cpuUs: number;
}

/** Times `work` (which resolves once `ops` operations are done): rate and CPU µs per op. */
async function timed(ops: number, work: () => Promise<void>): Promise<Run> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { rate: (ops * 1000) / ms, cpuUs: (cpu.user + cpu.system) / ops };
}

/** Waits until `n` messages arrived on `sid`, calling `each` for every one. */
function count(
  c: RawClient,
  sid: number,
  n: number,
  each: (got: number, reply: string) => void = () => {},
): Promise<void> {
  return new Promise((done) => {
    let got = 0;
    c.handlers.set(sid, (r) => {
      each(++got, r);
      if (got === n) {
        c.handlers.delete(sid);
        done();
      }
    });
  });
}

async function push(c: RawClient, k: number): Promise<void> {
  const sid = nextSid++;
  c.write(`SUB push.${k} ${sid}\r\n`);
  const done = count(c, sid, N);
  await api(c, `$JS.API.CONSUMER.DURABLE.CREATE.PC.p${k}`, {
    stream_name: 'PC',
    config: { durable_name: `p${k}`, deliver_subject: `push.${k}`, ack_policy: 'none' },
  });
  await done;
}

/** As nats.js's consume(): batches of 500, the next asked for as each one ends. */
async function pull(c: RawClient, k: number, ack: boolean, tag = ''): Promise<void> {
  const name = `${tag}${ack ? 'x' : 'n'}${k}`;
  await api(c, `$JS.API.CONSUMER.DURABLE.CREATE.PC.${name}`, {
    stream_name: 'PC',
    config: { durable_name: name, ack_policy: ack ? 'explicit' : 'none' },
  });
  const sid = nextSid++;
  c.write(`SUB pull.${name} ${sid}\r\n`);
  if (ack) c.wantReply.add(sid);
  const next = `$JS.API.CONSUMER.MSG.NEXT.PC.${name}`;
  const done = count(c, sid, N, (got, reply) => {
    if (ack) c.queue(`PUB ${reply} 0\r\n\r\n`);
    if (got % 500 === 0 && got + 500 < N)
      c.queue(`PUB ${next} pull.${name} 13\r\n{"batch":500}\r\n`);
  });
  c.pub(next, `pull.${name}`, '{"batch":500}');
  c.pub(next, `pull.${name}`, '{"batch":500}');
  await done;
}

/** KV get as the clients do it: DIRECT.GET of the last message on a key, one at a time. */
async function directGets(c: RawClient): Promise<void> {
  const sid = nextSid++;
  c.write(`SUB _G ${sid}\r\n`);
  // As nats.js asks for a key's value: the subject form, no body.
  const subject = '$JS.API.DIRECT.GET.KV_b.$KV.b.k';
  let left = GETS;
  await new Promise<void>((done) => {
    c.handlers.set(sid, () => {
      if (--left === 0) {
        c.handlers.delete(sid);
        done();
      } else c.pub(subject, '_G', '');
    });
    c.pub(subject, '_G', '');
  });
}

async function withoutTap(s: RunningServer, body: () => Promise<void>): Promise<void> {
  const account = s.server.globalAccount;
  const taps = [...account.taps];
  for (const tap of taps) account.removeTap(tap);
  try {
    await body();
  } finally {
    for (const tap of taps) account.addTap(tap);
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

const rows: string[] = [];
function report(storage: string, name: string, ops: number, runs: Run[]): void {
  const [first, ...rest] = runs;
  const warm = rest.length > 0 ? rest : runs;
  rows.push(
    `| ${storage} | ${name} | ${ops} | ${Math.round(first!.rate).toLocaleString('en')} | ${first!.cpuUs.toFixed(2)} | ${Math.round(median(warm.map((r) => r.rate))).toLocaleString('en')} | ${median(warm.map((r) => r.cpuUs)).toFixed(2)} |`,
  );
}

async function scenario(storage: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-jsconsume-'));
  const s: RunningServer = await startServer({
    port: -1,
    host: '127.0.0.1',
    jetstream: storage === 'file' ? { storeDir: dir } : true,
  });
  const c = await RawClient.open(s.port);
  try {
    await api(c, '$JS.API.STREAM.CREATE.PC', { name: 'PC', subjects: ['PC.>'], storage });
    await fill(c, 'PC.x', N);
    const cases: [string, (k: number) => Promise<void>][] = [
      ['push (ack none)', (k) => push(c, k)],
      ['pull (ack none)', (k) => pull(c, k, false)],
      ['pull (ack explicit)', (k) => pull(c, k, true)],
      // The same with the account's ack tap taken away: every ack routed through the
      // subject index, as before src/jetstream/ack-tap.ts.
      ['pull (ack explicit, acks routed)', (k) => withoutTap(s, () => pull(c, k, true, 'r'))],
    ];
    for (const [name, run] of cases) {
      if (!name.includes(ONLY)) continue;
      const runs: Run[] = [];
      for (let k = 0; k < K; k++) runs.push(await timed(N, () => run(k)));
      report(storage, name, N, runs);
    }
    if ('KV get (DIRECT.GET)'.includes(ONLY)) {
      await api(c, '$JS.API.STREAM.CREATE.KV_b', {
        name: 'KV_b',
        subjects: ['$KV.b.>'],
        storage,
        max_msgs_per_subject: 1,
        allow_direct: true,
        allow_rollup_hdrs: true,
        deny_delete: true,
      });
      await request(c, '$KV.b.k', 'v'.repeat(64));
      const runs: Run[] = [];
      for (let k = 0; k < K; k++) runs.push(await timed(GETS, () => directGets(c)));
      report(storage, 'KV get (DIRECT.GET)', GETS, runs);
    }
  } finally {
    c.close();
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const load0 = loadavg()[0]!;
for (const storage of STORAGES) await scenario(storage);
process.stdout.write(
  `| storage | scenario | ops | first run ops/s | first run CPU µs/op | later runs ops/s | later runs CPU µs/op |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}\n\nN=${N} K=${K}; load average ${load0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end\n`,
);
process.exit(0);
