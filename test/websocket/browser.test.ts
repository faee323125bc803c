// nats.ws inside headless Chromium (Debian's chromium, driven by playwright-core with
// the system executable: no browser download) against a TCP client of the same server:
// pub/sub, request/reply and headers both ways, a big payload, ordering, and
// compression, which Chromium offers on every connection.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { connect, headers, StringCodec, type NatsConnection } from 'nats';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, noChromium, watchProblems } from '../helpers/chromium.js';
import { startServer, type RunningServer } from '../../src/index.js';
import { WsTransport } from '../../src/websocket/transport.js';

const sc = StringCodec();
// The ESM bundle (the package's `import` entry), not the CommonJS `require` one.
const natsWs = readFileSync(fileURLToPath(import.meta.resolve('nats.ws')));

/**
 * What the page runs: plain JavaScript served as a module beside nats.ws, so the test
 * (compiled without DOM types) drives it through `page.evaluate` of short expressions.
 */
const PAGE_SCRIPT = `
import * as nats from '/nats.js';
const te = new TextEncoder();
const td = new TextDecoder();
window.wb = {
  async connect(url) {
    window.nc = await nats.connect({ servers: url });
    return true;
  },
  // Subscribes now; the returned promise resolves with the first message.
  async once(subject) {
    const sub = window.nc.subscribe(subject, { max: 1 });
    await window.nc.flush();
    window.wb.pending = (async () => {
      for await (const m of sub) return td.decode(m.data) + '|' + (m.headers?.get('X-From') ?? '');
      return '';
    })();
    return true;
  },
  async publish(subject, text, from) {
    const h = nats.headers();
    h.set('X-From', from);
    window.nc.publish(subject, te.encode(text), { headers: h });
    await window.nc.flush();
    return true;
  },
  async request(subject, text) {
    const r = await window.nc.request(subject, te.encode(text), { timeout: 3000 });
    return td.decode(r.data);
  },
  async serve(subject) {
    window.nc.subscribe(subject, {
      callback: (_e, m) => m.respond(te.encode('browser:' + td.decode(m.data))),
    });
    await window.nc.flush();
    return true;
  },
  // Subscribes for n messages: the first is big (length and checksum), then counters.
  async bulk(subject, n) {
    const sub = window.nc.subscribe(subject, { max: n });
    await window.nc.flush();
    window.wb.pending = (async () => {
      let i = 0, ordered = true, bigLength = 0, bigSum = 0;
      for await (const m of sub) {
        if (i === 0) {
          bigLength = m.data.length;
          for (const b of m.data) bigSum = (bigSum + b) % 1000003;
        } else if (Number(td.decode(m.data)) !== i - 1) ordered = false;
        i++;
      }
      return { n: i, ordered, bigLength, bigSum };
    })();
    return true;
  },
};
`;

/** Serves the page, its script and the nats.ws bundle (modules need an http:// origin). */
async function pageServer(): Promise<{ http: HttpServer; url: string }> {
  const http = createServer((req, res) => {
    if (req.url === '/nats.js' || req.url === '/test.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(req.url === '/nats.js' ? natsWs : PAGE_SCRIPT);
      return;
    }
    if (req.url === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      '<!doctype html><title>wirebus ws test</title><script type="module" src="/test.js"></script>',
    );
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { http, url: `http://127.0.0.1:${port}/` };
}

describe('nats.ws in Chromium', { skip: noChromium }, () => {
  let browser: Browser;
  let page: Page;
  let site: { http: HttpServer; url: string };
  let server: RunningServer;
  let tcp: NatsConnection;
  const errors: string[] = [];

  before(async () => {
    server = await startServer({
      host: '127.0.0.1',
      port: 0,
      websocket: { host: '127.0.0.1', port: 0, noTls: true, compression: true },
    });
    cleanup.push(() => server.close());
    tcp = await connect({ servers: server.url });
    cleanup.push(() => tcp.close());
    site = await pageServer();
    cleanup.push(() => {
      site.http.close();
      return undefined;
    });
    browser = await launchChromium();
    cleanup.push(() => browser.close());
    page = await browser.newPage();
    watchProblems(page, errors);
    await page.goto(site.url);
    await page.waitForFunction('window.wb !== undefined');
    await page.evaluate(`window.wb.connect('ws://127.0.0.1:${server.websocket!.port}')`);
  });

  // What before() made, closed in reverse order even when it stopped half-way.
  const cleanup: Array<() => Promise<unknown> | undefined> = [];
  after(async () => {
    for (const close of cleanup.reverse()) await close();
  });

  it('connects through the listener as a client of the server, compressed', () => {
    const browserClient = [...server.server.clients.values()].find((c) => c.lang === 'nats.ws');
    assert.ok(browserClient !== undefined, 'the page is a client of the server');
    // Chromium offers permessage-deflate and the listener has compression on.
    assert.ok(browserClient.socket instanceof WsTransport);
    assert.equal(browserClient.socket.compressed, true);
    assert.equal(errors.length, 0, errors.join('\n'));
  });

  it('pub/sub with headers both ways', async () => {
    await page.evaluate(`window.wb.once('to.browser')`);
    const h = headers();
    h.set('X-From', 'tcp');
    tcp.publish('to.browser', sc.encode('hello browser'), { headers: h });
    assert.equal(await page.evaluate('window.wb.pending'), 'hello browser|tcp');

    const sub = tcp.subscribe('to.tcp', { max: 1 });
    await tcp.flush();
    await page.evaluate(`window.wb.publish('to.tcp', 'hello tcp', 'browser')`);
    for await (const m of sub) {
      assert.equal(sc.decode(m.data), 'hello tcp');
      assert.equal(m.headers?.get('X-From'), 'browser');
    }
  });

  it('request/reply both ways', async () => {
    tcp.subscribe('svc.tcp', {
      callback: (_e, m) => {
        m.respond(sc.encode(`tcp:${sc.decode(m.data)}`));
      },
    });
    await tcp.flush();
    assert.equal(await page.evaluate(`window.wb.request('svc.tcp', 'q')`), 'tcp:q');
    await page.evaluate(`window.wb.serve('svc.browser')`);
    const r = await tcp.request('svc.browser', sc.encode('p'), { timeout: 3000 });
    assert.equal(sc.decode(r.data), 'browser:p');
  });

  it('a 512 KiB payload and 2,000 ordered messages reach the browser', async () => {
    await page.evaluate(`window.wb.bulk('bulk', 2001)`);
    const big = new Uint8Array(512 * 1024);
    let sum = 0;
    for (let i = 0; i < big.length; i++) {
      big[i] = (i * 7) & 0xff;
      sum = (sum + big[i]!) % 1_000_003;
    }
    tcp.publish('bulk', big);
    for (let i = 0; i < 2000; i++) tcp.publish('bulk', sc.encode(String(i)));
    await tcp.flush();
    assert.deepEqual(await page.evaluate('window.wb.pending'), {
      n: 2001,
      ordered: true,
      bigLength: big.length,
      bigSum: sum,
    });
    assert.equal(errors.length, 0, errors.join('\n'));
  });
});
