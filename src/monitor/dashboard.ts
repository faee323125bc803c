// The live dashboard at the monitor's root: a static page (src/monitor/dashboard/)
// that polls the same JSON endpoints an operator's tools read, and draws them with
// uPlot. The files ship with the package and are read once, at the first request;
// nothing is fetched from the network. The link list of the endpoints stays, inside
// the page, generated here from what is registered.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROTOCOL_VERSION, WIREBUS_VERSION } from '../server/version.js';
import type { Monitor, MonitorHandler, MonitorResponse } from './http.js';
import { joinBase } from './http.js';

const CORE_LINKS: readonly [string, string][] = [
  ['/varz', 'General'],
  ['/jsz', 'JetStream'],
  ['/connz', 'Connections'],
  ['/accountz', 'Accounts'],
  ['/subsz', 'Subscriptions'],
  ['/routez', 'Routes'],
  ['/leafz', 'LeafNodes'],
  ['/gatewayz', 'Gateways'],
  ['/healthz', 'Health Probe'],
  ['/metrics', 'Metrics'],
];

/** The dashboard's files: the page's own, and uPlot's from its package. */
const ASSETS: Readonly<Record<string, { type: string; file: () => string }>> = {
  '/dashboard/app.js': { type: 'text/javascript; charset=utf-8', file: () => own('app.js') },
  '/dashboard/app.css': { type: 'text/css; charset=utf-8', file: () => own('app.css') },
  '/dashboard/uplot.js': {
    type: 'text/javascript; charset=utf-8',
    file: () => createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'),
  },
  '/dashboard/uplot.css': {
    type: 'text/css; charset=utf-8',
    file: () => createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css'),
  },
};

/**
 * The page's folder, found from the package root so that it is the same whether this
 * module runs from dist/ or from a bundle.
 */
function own(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'wirebus') return join(dir, 'src', 'monitor', 'dashboard', name);
    } catch {
      // Not the root yet.
    }
    dir = dirname(dir);
  }
  throw new Error(`dashboard file ${name} not found above ${fileURLToPath(import.meta.url)}`);
}

const cache = new Map<string, string>();

function read(path: string): string {
  let text = cache.get(path);
  if (text === undefined) {
    text = readFileSync(path, 'utf8');
    cache.set(path, text);
  }
  return text;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Registers the page at `/` and its files under `/dashboard/`. */
export function registerDashboard(monitor: Monitor): void {
  monitor.register('/', dashboardPage(monitor));
  for (const [path, asset] of Object.entries(ASSETS)) {
    monitor.register(path, (): MonitorResponse => ({
      status: 200,
      contentType: asset.type,
      body: read(asset.file()),
      headers: { 'Cache-Control': 'max-age=3600' },
    }));
  }
}

function dashboardPage(monitor: Monitor): MonitorHandler {
  return () => {
    const base = monitor.basePath;
    const registered = new Set(monitor.paths().filter((p) => !p.startsWith('/dashboard/')));
    const core = CORE_LINKS.filter(([p]) => registered.has(p));
    const corePaths = new Set(core.map(([p]) => p));
    const extra = [...registered]
      .filter((p) => p !== '/' && !corePaths.has(p) && p !== '/subscriptionsz')
      .sort()
      .map((p): [string, string] => [p, p.slice(1)]);
    const links = [...core, ...extra]
      .map(([p, text]) => `<a href=".${escapeHtml(joinBase(base, p))}">${escapeHtml(text)}</a>`)
      .join('\n        ');
    // What the page may poll: the endpoints of the layers that are on.
    const endpoints = JSON.stringify({
      base: base === '/' ? '' : base,
      paths: [...registered].sort(),
    }).replace(/</g, '\\u003c');
    const asset = (p: string): string => `.${escapeHtml(joinBase(base, p))}`;
    const body = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>wirebus</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="${asset('/dashboard/uplot.css')}" />
    <link rel="stylesheet" href="${asset('/dashboard/app.css')}" />
  </head>
  <body>
    <header>
      <h1>wirebus <span id="server-name"></span></h1>
      <p class="version">v${WIREBUS_VERSION} (nats-server protocol ${PROTOCOL_VERSION})
        <span id="status" class="status">connecting…</span></p>
    </header>
    <main>
      <section id="server" class="cards" aria-label="Server"></section>
      <section class="charts">
        <figure><figcaption>Messages per second</figcaption><div id="chart-msgs"></div></figure>
        <figure><figcaption>Bytes per second</figcaption><div id="chart-bytes"></div></figure>
      </section>
      <section>
        <h2>Connections <small id="connections-count"></small></h2>
        <div class="scroll"><table id="connections"></table></div>
        <h3>Recently closed</h3>
        <div class="scroll"><table id="closed"></table></div>
      </section>
      <section class="two">
        <div>
          <h2>Busiest subjects <small id="subscriptions-count"></small></h2>
          <div class="scroll"><table id="subjects"></table></div>
        </div>
        <div>
          <h2>Cluster</h2>
          <div id="cluster"></div>
          <div class="scroll"><table id="routes"></table></div>
        </div>
      </section>
      <section id="streaming" hidden>
        <h2>Streaming <small id="streaming-state"></small></h2>
        <div id="streaming-server" class="cards"></div>
        <h3>Channels</h3>
        <div class="scroll"><table id="channels"></table></div>
        <h3>Subscriptions</h3>
        <div class="scroll"><table id="streaming-subs"></table></div>
        <h3>Clients</h3>
        <div class="scroll"><table id="streaming-clients"></table></div>
      </section>
      <section id="jetstream" hidden>
        <h2>JetStream</h2>
        <div id="jetstream-server" class="cards"></div>
        <h3>Streams</h3>
        <div class="scroll"><table id="streams"></table></div>
        <h3>Consumers</h3>
        <div class="scroll"><table id="consumers"></table></div>
      </section>
      <nav aria-label="Endpoints">
        <h2>Endpoints</h2>
        ${links}
      </nav>
    </main>
    <script id="endpoints" type="application/json">${endpoints}</script>
    <script src="${asset('/dashboard/uplot.js')}"></script>
    <script src="${asset('/dashboard/app.js')}"></script>
  </body>
</html>
`;
    return { status: 200, contentType: 'text/html; charset=utf-8', body };
  };
}
