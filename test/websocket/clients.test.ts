// Real clients over WebSocket: @nats-io/nats-core's wsconnect (the v3 client, with the
// `ws` package as the WebSocket that Node 20 lacks) against TCP clients of npm `nats`
// v2 on the same server: pub/sub and request/reply both ways, headers, big payloads,
// ordering under load, compression, authentication and wss:// with test certificates.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import {
  headers as v3headers,
  type NatsConnection as V3Connection,
  wsconnect,
} from '@nats-io/nats-core';
import { connect, headers, StringCodec, type NatsConnection } from 'nats';
import { WebSocket } from 'ws';
import { startServer, type RunningServer, type StartOptions } from '../../src/index.js';
import { makeCerts, type Certs } from '../auth/helpers.js';

(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;

const sc = StringCodec();
const running: RunningServer[] = [];
const conns: Array<{ close(): Promise<void> }> = [];
after(async () => {
  await Promise.all(conns.map((c) => c.close().catch(() => undefined)));
  await Promise.all(running.map((s) => s.close()));
});

async function start(options: StartOptions = {}): Promise<RunningServer & { wsUrl: string }> {
  const s = await startServer({
    host: '127.0.0.1',
    port: 0,
    ...options,
    websocket: { host: '127.0.0.1', port: 0, noTls: true, ...options.websocket },
  });
  running.push(s);
  const scheme = s.websocket!.scheme;
  return Object.assign(s, { wsUrl: `${scheme}://127.0.0.1:${s.websocket!.port}` });
}

async function ws(url: string, opts: Record<string, unknown> = {}): Promise<V3Connection> {
  const nc = await wsconnect({ servers: url, reconnect: false, ...opts });
  conns.push(nc);
  return nc;
}

async function tcp(s: RunningServer): Promise<NatsConnection> {
  const nc = await connect({ servers: s.url, reconnect: false });
  conns.push(nc);
  return nc;
}

describe('WebSocket with real clients', () => {
  it('pub/sub and request/reply with headers, both ways between WebSocket and TCP', async () => {
    const s = await start();
    const w = await ws(s.wsUrl);
    const t = await tcp(s);
    // WebSocket subscriber, TCP publisher.
    const toWs = w.subscribe('to.ws', { max: 1 });
    await w.flush();
    const h = headers();
    h.set('X-From', 'tcp');
    t.publish('to.ws', sc.encode('hello ws'), { headers: h });
    for await (const m of toWs) {
      assert.equal(new TextDecoder().decode(m.data), 'hello ws');
      assert.equal(m.headers?.get('X-From'), 'tcp');
    }
    // TCP subscriber, WebSocket publisher.
    const toTcp = t.subscribe('to.tcp', { max: 1 });
    await t.flush();
    const wh = v3headers();
    wh.set('X-From', 'ws');
    w.publish('to.tcp', 'hello tcp', { headers: wh });
    for await (const m of toTcp) {
      assert.equal(sc.decode(m.data), 'hello tcp');
      assert.equal(m.headers?.get('X-From'), 'ws');
    }
    // Services on either side.
    t.subscribe('svc.tcp', {
      callback: (_e, m) => m.respond(sc.encode(`tcp:${sc.decode(m.data)}`)),
    });
    w.subscribe('svc.ws', {
      callback: (_e, m) => {
        m.respond(`ws:${m.string()}`);
      },
    });
    await t.flush();
    await w.flush();
    assert.equal((await w.request('svc.tcp', 'a', { timeout: 2000 })).string(), 'tcp:a');
    assert.equal(
      sc.decode((await t.request('svc.ws', sc.encode('b'), { timeout: 2000 })).data),
      'ws:b',
    );
    // No responders reach a WebSocket client too.
    await assert.rejects(w.request('nobody.home', 'x', { timeout: 2000 }), /no responders/i);
  });

  it('moves payloads up to max_payload whole, both ways', async () => {
    const s = await start();
    const w = await ws(s.wsUrl);
    const t = await tcp(s);
    assert.equal(w.info?.max_payload, 1024 * 1024);
    const big = new Uint8Array(1024 * 1024 - 256);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    const toTcp = t.subscribe('big', { max: 1 });
    await t.flush();
    w.publish('big', big);
    for await (const m of toTcp) assert.deepEqual(Buffer.from(m.data), Buffer.from(big));
    const toWs = w.subscribe('big2', { max: 1 });
    await w.flush();
    t.publish('big2', big);
    for await (const m of toWs) assert.deepEqual(Buffer.from(m.data), Buffer.from(big));
  });

  it('keeps order under load from several publishers of both kinds', async () => {
    const s = await start();
    const sub = await ws(s.wsUrl);
    const pubs = [await ws(s.wsUrl), await tcp(s), await ws(s.wsUrl), await tcp(s)];
    const N = 5000;
    const next = new Map<string, number>();
    let got = 0;
    const done = new Promise<void>((resolve, reject) => {
      sub.subscribe('load.>', {
        callback: (_e, m) => {
          const want = next.get(m.subject) ?? 0;
          const n = Number(new TextDecoder().decode(m.data));
          if (n !== want) reject(new Error(`${m.subject}: got ${n}, expected ${want}`));
          next.set(m.subject, want + 1);
          if (++got === N * pubs.length) resolve();
        },
      });
    });
    await sub.flush();
    pubs.forEach((p, i) => {
      for (let n = 0; n < N; n++) p.publish(`load.${i}`, new TextEncoder().encode(String(n)));
    });
    await Promise.all(pubs.map((p) => p.flush()));
    await done;
    assert.equal(got, N * pubs.length);
  });

  it('works with compression on (the server compresses what it sends)', async () => {
    const s = await start({ websocket: { compression: true } });
    const w = await ws(s.wsUrl);
    const t = await tcp(s);
    const text = 'compress me '.repeat(5000);
    const toWs = w.subscribe('c', { max: 1 });
    await w.flush();
    t.publish('c', sc.encode(text));
    for await (const m of toWs) assert.equal(m.string(), text);
    const toTcp = t.subscribe('d', { max: 1 });
    await t.flush();
    w.publish('d', text);
    for await (const m of toTcp) assert.equal(sc.decode(m.data), text);
  });
});

describe('WebSocket authentication', () => {
  it('uses the websocket block token instead of the server credentials', async () => {
    const s = await start({
      security: { token: 'tcp-secret' },
      websocket: { token: 'ws-secret' },
    });
    const w = await ws(s.wsUrl, { token: 'ws-secret' });
    await w.flush();
    await assert.rejects(ws(s.wsUrl, { token: 'tcp-secret' }), /authorization violation/i);
    // The client port keeps its own.
    const t = await connect({ servers: s.url, token: 'tcp-secret', reconnect: false });
    conns.push(t);
    await t.flush();
  });

  it('requires the websocket user and password when only the websocket block has them', async () => {
    const s = await start({ websocket: { user: 'web', password: 'pw' } });
    const w = await ws(s.wsUrl, { user: 'web', pass: 'pw' });
    await w.flush();
    await assert.rejects(ws(s.wsUrl), /authorization violation/i);
    await assert.rejects(ws(s.wsUrl, { user: 'web', pass: 'bad' }), /authorization violation/i);
    // The client port still needs nothing.
    await (await tcp(s)).flush();
  });

  it("binds anonymous WebSocket clients to the block's no_auth_user, with its permissions", async () => {
    const s = await start({
      security: {
        users: [
          { user: 'admin', password: 'a' },
          { user: 'guest', password: 'g', permissions: { publish: { allow: ['public.>'] } } },
        ],
      },
      websocket: { noAuthUser: 'guest' },
    });
    const w = await ws(s.wsUrl);
    const admin = await connect({ servers: s.url, user: 'admin', pass: 'a', reconnect: false });
    conns.push(admin);
    const sub = admin.subscribe('>', { max: 1 });
    await admin.flush();
    w.publish('private.x', 'no');
    w.publish('public.x', 'yes');
    for await (const m of sub) assert.equal(m.subject, 'public.x');
    // TCP clients without credentials are still refused: the override is the listener's.
    await assert.rejects(connect({ servers: s.url, reconnect: false }), /authorization violation/i);
  });
});

describe('wss://', () => {
  let certs: Certs;
  before(() => {
    certs = makeCerts();
  });

  it('serves TLS WebSocket clients with the configured certificate', async () => {
    const s = await start({
      websocket: { noTls: false, tls: { certFile: certs.serverCert, keyFile: certs.serverKey } },
    });
    assert.ok(s.wsUrl.startsWith('wss://'));
    const ca = readFileSync(certs.ca);
    // The `ws` package takes TLS options through the constructor; nats-core passes only the URL.
    class TrustingWebSocket extends WebSocket {
      constructor(url: string) {
        super(url, { ca });
      }
    }
    (globalThis as { WebSocket?: unknown }).WebSocket = TrustingWebSocket;
    try {
      const w = await ws(s.wsUrl);
      const t = await tcp(s);
      const sub = t.subscribe('secure', { max: 1 });
      await t.flush();
      w.publish('secure', 'over tls');
      for await (const m of sub) assert.equal(sc.decode(m.data), 'over tls');
    } finally {
      (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
    }
  });

  it('refuses to start without TLS unless no_tls is set, as the reference', async () => {
    await assert.rejects(
      startServer({ port: 0, websocket: { port: 0 } }),
      /websocket requires TLS configuration/,
    );
  });
});
