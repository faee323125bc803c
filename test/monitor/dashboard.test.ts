// The dashboard in headless Chromium (Debian's chromium, driven by playwright-core):
// it loads with no console error and no failed request, its numbers are the JSON
// endpoints' numbers, they change under traffic without a reload, and it fits a
// phone's width. Each run leaves screenshots in the test's temporary folder.

import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, noChromium, watchProblems } from '../helpers/chromium.js';
import { startServer, type RunningServer } from '../../src/index.js';

const shots = mkdtempSync(join(tmpdir(), 'wirebus-dashboard-'));

interface Varz {
  connections: number;
  subscriptions: number;
  in_msgs: number;
  out_msgs: number;
  slow_consumers: number;
}

describe('the monitoring dashboard', { skip: noChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  const clients: NatsConnection[] = [];
  const problems: string[] = [];
  const cleanup: Array<() => Promise<unknown>> = [];

  before(async () => {
    server = await startServer({
      host: '127.0.0.1',
      port: 0,
      httpPort: -1,
      httpHost: '127.0.0.1',
      streaming: true,
    });
    cleanup.push(() => server.close());
    for (const name of ['orders-service', 'billing']) {
      const nc = await connect({ servers: server.url, name });
      clients.push(nc);
      cleanup.push(() => nc.close());
    }
    clients[0]!.subscribe('orders.>', { callback: () => undefined });
    clients[1]!.subscribe('billing.*', { queue: 'workers', callback: () => undefined });
    await Promise.all(clients.map((c) => c.flush()));
    browser = await launchChromium();
    cleanup.push(() => browser.close());
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watchProblems(page, problems);
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
    });
    await page.goto(`${server.monitor!.url}/?refresh=250`);
    await page.waitForFunction('window.wbDashboard !== undefined && window.wbDashboard.ticks > 1');
  });

  after(async () => {
    for (const close of cleanup.reverse()) await close();
  });

  async function field(name: string): Promise<string> {
    return page.locator(`[data-field="${name}"]`).innerText();
  }

  async function varz(): Promise<Varz> {
    return (await (await fetch(`${server.monitor!.url}/varz`)).json()) as Varz;
  }

  async function ticks(): Promise<number> {
    return page.evaluate<number>('window.wbDashboard.ticks');
  }

  async function settle(): Promise<void> {
    const t = await ticks();
    await page.waitForFunction(`window.wbDashboard.ticks >= ${t + 2}`);
  }

  it('loads with no console error and no failed request', async () => {
    await settle();
    assert.deepEqual(problems, []);
    assert.equal((await page.locator('#status').innerText()).startsWith('live'), true);
    await page.screenshot({ path: join(shots, 'idle.png'), fullPage: true });
  });

  it("changes under traffic without a reload, and then shows the JSON endpoints' numbers", async () => {
    await page.evaluate('window.__sameDocument = true');
    const before = await field('in_msgs');
    const pub = clients[0]!;
    const payload = new Uint8Array(200);
    const timer = setInterval(() => {
      for (let i = 0; i < 100; i++)
        pub.publish(i % 2 === 0 ? 'orders.new' : 'billing.paid', payload);
    }, 10);
    try {
      await page.waitForFunction(
        `document.querySelector('[data-field="in_msgs"]').textContent !== ${JSON.stringify(before)}`,
      );
      const during = await field('in_msgs');
      await settle();
      assert.notEqual(await field('in_msgs'), during, 'the counters keep moving');
      await page.screenshot({ path: join(shots, 'traffic.png'), fullPage: true });
    } finally {
      clearInterval(timer);
    }
    await pub.flush();
    await settle();
    assert.equal(await page.evaluate('window.__sameDocument'), true, 'no reload happened');
    const v = await varz();
    const n = (text: string): number => Number(text.replace(/,/g, ''));
    assert.equal(n(await field('in_msgs')), v.in_msgs);
    assert.equal(n(await field('out_msgs')), v.out_msgs);
    assert.equal(n(await field('connections')), v.connections);
    assert.equal(n(await field('subscriptions')), v.subscriptions);
    assert.equal(n(await field('slow_consumers')), v.slow_consumers);
    // The connections table lists what /connz lists, with the names clients gave.
    const connz = (await (await fetch(`${server.monitor!.url}/connz`)).json()) as {
      num_connections: number;
      connections: Array<{ name?: string }>;
    };
    const rows = await page.locator('#connections tbody tr').count();
    assert.equal(rows, connz.num_connections);
    const text = await page.locator('#connections').innerText();
    for (const c of connz.connections)
      if (c.name !== undefined) assert.ok(text.includes(c.name), c.name);
    // The busiest subject is the one /subsz counts most deliveries for.
    const top = await page.locator('#subjects tbody tr').first().innerText();
    assert.match(top, /^orders\.>/);
    // The charts have points.
    assert.ok((await ticks()) > 3);
    assert.equal(await page.locator('#chart-msgs canvas').count(), 1);
    assert.deepEqual(problems, []);
  });

  it('sorts the connections table when a column is clicked', async () => {
    await page.locator('#connections th', { hasText: 'subs' }).click();
    await settle();
    assert.match((await page.locator('#connections th.sorted').innerText()).trim(), /^subs/);
    assert.deepEqual(problems, []);
  });

  it('lists a closed connection with its reason', async () => {
    const gone = await connect({ servers: server.url, name: 'short-lived' });
    await gone.flush();
    await gone.close();
    await settle();
    const row = await page.locator('#closed tbody tr', { hasText: 'short-lived' }).innerText();
    assert.match(row, /Client Closed/);
    assert.deepEqual(problems, []);
  });

  it('shows the streaming layer when it is on', async () => {
    assert.equal(await page.locator('#streaming').isVisible(), true);
    assert.equal(await field('streaming_cluster_id'), 'test-cluster');
    assert.match(await page.locator('#streaming-state').innerText(), /STANDALONE/);
  });

  it('fits a phone: nothing wider than the screen but the scrolling tables', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await settle();
    const overflow = await page.evaluate<number>(
      'document.documentElement.scrollWidth - window.innerWidth',
    );
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
    await page.screenshot({ path: join(shots, 'phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('keeps the endpoint links', async () => {
    const hrefs = await page.evaluate<string[]>(
      "[...document.querySelectorAll('nav a')].map((a) => a.getAttribute('href'))",
    );
    for (const p of [
      './varz',
      './connz',
      './subsz',
      './routez',
      './healthz',
      './streaming/serverz',
    ]) {
      assert.ok(hrefs.includes(p), p);
    }
  });
});
