/* global URL, setInterval, setTimeout, clearInterval */
// Regenerates docs/dashboard.png: a server with streaming on, a few named clients,
// publishers and streaming traffic for some seconds, then a screenshot of the
// dashboard in headless Chromium. `npm run build && node scripts/dashboard-screenshot.mjs`.
import { chromium } from 'playwright-core';
import { connect } from 'nats';
import stan from 'node-nats-streaming';
import { startServer } from '../dist/src/index.js';

const out = new URL('../docs/dashboard.png', import.meta.url).pathname;
const server = await startServer({
  host: '127.0.0.1',
  port: 0,
  httpPort: -1,
  httpHost: '127.0.0.1',
  serverName: 'wirebus-demo',
  streaming: true,
});
const names = ['orders-api', 'billing-worker', 'billing-worker', 'audit-log'];
const clients = await Promise.all(names.map((name) => connect({ servers: server.url, name })));
clients[0].subscribe('orders.>', { callback: () => {} });
clients[1].subscribe('billing.*', { queue: 'billing', callback: () => {} });
clients[2].subscribe('billing.*', { queue: 'billing', callback: () => {} });
clients[3].subscribe('>', { callback: () => {} });
const sc = stan.connect('test-cluster', 'inventory-service', { url: server.url });
await new Promise((resolve) => sc.on('connect', resolve));
const opts = sc.subscriptionOptions().setDurableName('inventory').setManualAckMode(true);
sc.subscribe('inventory.updates', opts).on('message', (m) => m.ack());
sc.subscribe('inventory.audit', 'auditors', sc.subscriptionOptions());
let n = 0;
const payload = new Uint8Array(256);
const load = setInterval(() => {
  const burst = 150 + Math.round(100 * Math.sin(n++ / 10));
  for (let i = 0; i < burst; i++)
    clients[0].publish(i % 3 ? 'orders.created' : 'billing.charged', payload);
  sc.publish(n % 2 ? 'inventory.updates' : 'inventory.audit', 'item changed');
}, 20);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
await page.goto(`${server.monitor.url}/`);
await new Promise((resolve) => setTimeout(resolve, 20_000));
await page.screenshot({ path: out, fullPage: true });
clearInterval(load);
await browser.close();
sc.close();
await Promise.all(clients.map((c) => c.close()));
await server.close();
console.log(`wrote ${out}`);
process.exit(0);
