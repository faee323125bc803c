// Shared by the monitor tests: a server with monitoring on a free port, HTTP GETs,
// the reference's recorded JSON (fixtures/, see capture-reference.ts), a recursive
// comparison of field names and value types, and the client state the fixtures were
// recorded with.

import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { startServer, type RunningServer, type StartOptions } from '../../src/index.js';
import { RawClient } from '../helpers/raw.js';

const fixtureDir = resolve(import.meta.dirname, '..', '..', '..', 'test', 'monitor', 'fixtures');

/** A recorded reference answer, parsed. */
export function fixture(name: string): unknown {
  return JSON.parse(readFileSync(resolve(fixtureDir, `${name}.json`), 'utf8')) as unknown;
}

export interface RecordedAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** The reference's status, content type and text for error answers, JSONP and `/`. */
export function recordedAnswers(): Record<string, RecordedAnswer> {
  return fixture('answers') as Record<string, RecordedAnswer>;
}

export async function withMonitor<T>(
  options: StartOptions,
  body: (s: RunningServer) => Promise<T>,
): Promise<T> {
  const s = await startServer({ host: '127.0.0.1', port: 0, httpPort: -1, ...options });
  try {
    return await body(s);
  } finally {
    await s.close();
  }
}

export interface Answer {
  status: number;
  contentType: string;
  headers: Headers;
  text: string;
}

export async function get(s: RunningServer | number, path: string): Promise<Answer> {
  const port = typeof s === 'number' ? s : s.httpPort;
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    headers: res.headers,
    text: await res.text(),
  };
}

/** GET and parse JSON; fails the test on a status other than 200. */
export async function getJson(s: RunningServer | number, path: string): Promise<JsonObject> {
  const a = await get(s, path);
  if (a.status !== 200) throw new Error(`${path}: HTTP ${a.status}: ${a.text}`);
  return JSON.parse(a.text) as JsonObject;
}

export type JsonObject = Record<string, unknown>;

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * Fields the reference's Go structs mark omitempty, absent whenever they are empty:
 * a connection without subscriptions has no list, one that sent no CONNECT name no
 * `name`. Their absence from one element is not a difference in shape.
 */
const OMITEMPTY = new Set([
  'name',
  'lang',
  'version',
  'qgroup',
  'max',
  'subscriptions_list',
  'subscriptions_list_detail',
]);

/** Fields that are Go maps in the reference: their keys vary, their values do not. */
const MAPS = new Set(['http_req_stats', 'outbound_gateways', 'inbound_gateways']);

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;

function isObject(v: unknown): v is JsonObject {
  return kind(v) === 'object';
}

/**
 * Differences in shape between the reference's JSON and ours: missing and extra
 * fields, different value types, time strings not in RFC 3339. Arrays of objects
 * are compared element by element against the union of the reference's elements
 * (a field every reference element has is required; one some have is allowed).
 * `absent` lists paths (`a.b`, `connections[].name`) wirebus deliberately lacks.
 */
export function shapeDiff(ref: unknown, ours: unknown, absent: readonly string[] = []): string[] {
  const problems: string[] = [];
  compare(ref, ours, '', new Set(absent), problems);
  return problems;
}

function compare(ref: unknown, ours: unknown, path: string, absent: Set<string>, out: string[]) {
  const rk = kind(ref);
  const ok = kind(ours);
  if (rk !== ok) {
    out.push(`${path || '(root)'}: reference ${rk}, wirebus ${ok}`);
    return;
  }
  if (typeof ref === 'string' && typeof ours === 'string') {
    if (RFC3339.test(ref) && !RFC3339.test(ours)) out.push(`${path}: not RFC 3339: ${ours}`);
    return;
  }
  if (Array.isArray(ref) && Array.isArray(ours)) {
    if (ref.length === 0 || ours.length === 0) return;
    if (ref.every(isObject) && ours.every(isObject)) {
      const required = new Set(Object.keys(ref[0] as JsonObject));
      const allowed = new Map<string, unknown>();
      for (const el of ref) {
        for (const k of [...required]) if (!(k in el)) required.delete(k);
        for (const [k, v] of Object.entries(el)) if (!allowed.has(k)) allowed.set(k, v);
      }
      for (const el of ours) {
        compareObject(required, allowed, el, `${path}[]`, absent, out);
      }
      return;
    }
    for (const el of ours) compare(ref[0], el, `${path}[]`, absent, out);
    return;
  }
  if (isObject(ref) && isObject(ours)) {
    if (MAPS.has(path)) {
      // Keys are data here; only the values' types are compared.
      const sample = Object.values(ref)[0];
      if (sample !== undefined)
        for (const [k, v] of Object.entries(ours)) compare(sample, v, `${path}.${k}`, absent, out);
      return;
    }
    compareObject(new Set(Object.keys(ref)), new Map(Object.entries(ref)), ours, path, absent, out);
  }
}

function compareObject(
  required: Set<string>,
  allowed: Map<string, unknown>,
  ours: JsonObject,
  path: string,
  absent: Set<string>,
  out: string[],
): void {
  const at = (k: string): string => (path === '' ? k : `${path}.${k}`);
  for (const k of required) {
    if (!(k in ours) && !absent.has(at(k)) && !OMITEMPTY.has(k)) out.push(`${at(k)}: missing`);
  }
  for (const [k, v] of Object.entries(ours)) {
    if (!allowed.has(k)) {
      out.push(`${at(k)}: not in the reference`);
      continue;
    }
    compare(allowed.get(k), v, at(k), absent, out);
  }
}

/** The connections the fixtures were recorded with (see capture-reference.ts). */
export interface Population {
  alice: RawClient;
  bob: RawClient;
  close(): void;
}

function connectLine(name: string): string {
  const opts = { verbose: false, pedantic: false, name, lang: 'raw', version: '1.0', protocol: 1 };
  return `CONNECT ${JSON.stringify(opts)}\r\n`;
}

/**
 * alice subscribes (plain, queue, wildcard, auto-unsubscribe at 10), bob publishes
 * twice, carol subscribes and closes.
 */
export async function populate(port: number): Promise<Population> {
  const alice = await RawClient.open(port);
  await alice.exchange(
    connectLine('alice') +
      'SUB foo 1\r\nSUB bar q 2\r\nSUB foo.* 3\r\nSUB auto 4\r\nUNSUB 4 10\r\nPING\r\n',
  );
  const bob = await RawClient.open(port);
  await bob.exchange(
    connectLine('bob') + 'PUB foo 5\r\nhello\r\nPUB foo.bar 5\r\nworld\r\nPING\r\n',
  );
  await alice.waitFor((t) => t.includes('world'));
  const carol = await RawClient.open(port);
  await carol.exchange(connectLine('carol') + 'SUB gone 1\r\nPING\r\n');
  carol.close();
  await carol.waitClosed();
  return {
    alice,
    bob,
    close: () => {
      alice.close();
      bob.close();
    },
  };
}

/** Waits until /connz?state=closed lists a connection named `name`; returns its entry. */
export async function waitClosed(s: RunningServer, name: string, ms = 5000): Promise<JsonObject> {
  const deadline = Date.now() + ms;
  for (;;) {
    const z = await getJson(s, '/connz?state=closed');
    const conns = z.connections as JsonObject[];
    const found = conns.find((c) => c.name === name);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no closed connection named ${name}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A subscriber that never reads, and a publisher that floods it until the server
 * cuts it off as a slow consumer. Needs a small maxPending and writeDeadline
 * (SLOW_CONSUMER_OPTIONS): wirebus holds the publisher once the subscriber is half
 * way to max_pending, for at most a second while nothing drains, then cuts it off
 * at max_pending; the short write deadline may come first.
 */
export const SLOW_CONSUMER_OPTIONS = {
  maxPending: 262_144,
  maxPayload: 65_536,
  writeDeadline: 300,
} as const;

/** Either of the reference's slow consumer reasons. */
export const SLOW_CONSUMER_REASON = /^Slow Consumer \((Pending Bytes|Write Deadline)\)$/;

export async function makeSlowConsumer(s: RunningServer): Promise<void> {
  const slow: Socket = connect({ port: s.port, host: '127.0.0.1' });
  await new Promise<void>((r) => slow.once('connect', r));
  slow.write(connectLine('slow') + 'SUB slow 1\r\nPING\r\n');
  await new Promise((r) => setTimeout(r, 100));
  slow.pause();
  const pub = await RawClient.open(s.port);
  await pub.exchange(connectLine('flood') + 'PING\r\n');
  const payload = 'x'.repeat(30000);
  try {
    for (let i = 0; i < 2000 && s.server.slowConsumers === 0; i++) {
      pub.send(`PUB slow ${payload.length}\r\n${payload}\r\n`);
      // The server may hold this publisher while the subscriber is behind.
      if (i % 20 === 19) await pub.exchange('PING\r\n', 'PONG\r\n', 200);
    }
    await waitClosed(s, 'slow');
  } finally {
    pub.close();
    slow.destroy();
  }
}
